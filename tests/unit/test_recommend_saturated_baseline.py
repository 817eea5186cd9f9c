"""A baseline whose p99 is already past the SLO before any batching (a saturated broker's queueing
in its measured p99): when no setting fits, the refusal says so instead of reading as a verdict on
batching, and points at a live measurement (the model carries that queueing into every setting)."""

from __future__ import annotations

import pytest

from tests.unit.test_recommend_margin import FILEBEAT_LIKE, SLO, _record
from tuner.core.errors import KbtError
from tuner.model.recommend import Request, recommend


def _request(p99_ms: float) -> Request:
    record = _record(FILEBEAT_LIKE, 320.0, p99_ms, 1_700_000_000.0)  # type: ignore[arg-type]
    return Request(
        workload=record.plan.workload, brokers=3, slo=SLO, clients=["librdkafka"], records=[record],
        baselines={"librdkafka": FILEBEAT_LIKE}, baseline=FILEBEAT_LIKE,
    )  # fmt: skip


def test_a_baseline_past_the_slo_is_named_in_the_refusal() -> None:
    with pytest.raises(KbtError) as info:
        recommend(_request(3000.0))
    message = info.value.message
    assert "no librdkafka setting meets p99 <= 1000 ms" in message, message
    assert "is past the SLO before any batching" in message and message.endswith("(measure one with --live)")
