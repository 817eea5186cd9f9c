"""A run record whose every count is within its unit can still imply an impossible rate: a count
divided by a millisecond window, or by a window that ends before it starts (kept at 1 ns). The
recommender and the forecast read such a record (hand-edited, foreign, truncated by a tool) as
one BadInput line naming the record, never as pydantic's multi-line ValidationError."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.synthetic_records import record_with_brokers
from tuner.core.errors import BadInput
from tuner.core.units import MAX_TALLY
from tuner.model.evidence import measured_of
from tuner.store.figures import BrokerStats
from tuner.store.recommendation import SLOBounds
from tuner.store.record import RunRecord

BROKER = BrokerStats(broker="1", produce_requests_per_s=100.0, messages_in_per_s=1000.0)


def _edited(**client: object) -> RunRecord:
    """A good record with its client section changed, validated again as a reader would read it."""
    good = record_with_brokers([BROKER], created=time.time())
    data = good.model_dump(mode="json")
    data["client"].update(client)
    return RunRecord.model_validate(data)


@pytest.mark.parametrize(
    ("client", "needle"),
    [
        ({"window_end": 0.0}, "requests_per_s"),  # ends before it starts
        ({"records_acked": 9 * 10**15, "bytes_acked": 9 * 10**15}, "records_per_s"),
        ({"produce_requests_by_broker": {"1": 9 * 10**15}}, "busiest_broker_requests_per_s"),
        ({"records_per_request": 1e-300, "batch_bytes": 1e6}, "wire_bytes_per_s"),
    ],
    ids=["window-reversed", "acked-past-any-rate", "broker-count-past-any-rate", "wire-past-any-rate"],
)
def test_a_record_implying_an_impossible_rate_is_one_line(client: dict[str, object], needle: str) -> None:
    record = _edited(**client)
    with pytest.raises(BadInput, match=needle) as info:
        measured_of(record, SLOBounds())
    assert record.run_id in info.value.message
    assert "\n" not in info.value.message


def test_a_good_record_is_measured() -> None:
    measured = measured_of(_edited(), SLOBounds())
    assert measured.requests_per_s == pytest.approx(100.0)


COUNTS = st.one_of(
    st.integers(0, 10**6), st.integers(0, int(MAX_TALLY)), st.sampled_from([0, 1, int(MAX_TALLY)])
)
WINDOW_S = st.one_of(st.floats(-1e4, 1e4, allow_nan=False), st.sampled_from([0.0, 1e-6, -1.0, 1e-3]))


@settings(max_examples=80, deadline=None)
@given(
    acked=COUNTS,
    requests=COUNTS,
    on_broker=COUNTS,
    window_s=WINDOW_S,
    per_request=st.one_of(st.none(), st.floats(1e-300, 1e9)),
)
def test_any_counts_over_any_window_are_measured_or_one_line(
    acked: int, requests: int, on_broker: int, window_s: float, per_request: float | None
) -> None:
    good = record_with_brokers([BROKER], created=time.time())
    try:
        record = _edited(
            window_end=good.client.window_start + window_s,
            records_acked=acked,
            bytes_acked=acked,
            produce_requests=requests,
            produce_requests_by_broker={"1": on_broker},
            records_per_request=per_request,
            batch_bytes=1000.0,
        )
    except ValueError:  # the record itself is refused when it is read: tests/unit/test_input_bounds.py
        return
    try:
        measured_of(record, SLOBounds())
    except BadInput as exc:
        assert "\n" not in exc.message
