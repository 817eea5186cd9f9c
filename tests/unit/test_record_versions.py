"""Run records of every readable schema version load as the current one (version-1 records are
committed under tests/unit/data/records-v1, written by kbt before the record had its own types)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.store.record import SCHEMA_VERSION
from tuner.store.results import ResultsStore

V1 = Path(__file__).parent / "data" / "records-v1"


def test_version_1_records_load_as_the_current_schema() -> None:
    store = ResultsStore(V1)
    records = store.records()
    assert len(records) == len(store.paths()) >= 6
    assert {r.sweep for r in records} == {"qunar-logs", "filebeat-small-logs"}
    for record in records:
        assert record.schema_version == SCHEMA_VERSION
        assert record.status == "ok" and record.delivery.verified and record.delivery.lost == 0
        assert record.client.requests_per_s > 0
    kinds = {r.plan.profile.client for r in records}
    assert kinds == {"librdkafka", "filebeat"}


def test_a_future_version_is_refused_in_one_line(tmp_path: Path) -> None:
    source = next(iter(ResultsStore(V1).paths()))
    data = json.loads(source.read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    bad = tmp_path / "s" / "future.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(data))
    with pytest.raises(BadInput, match="schema_version"):
        ResultsStore(tmp_path).load(bad)


def test_version_4_records_load_with_nothing_unread(tmp_path: Path) -> None:
    """A version-4 record (before DeliveryResult.unread and the "unverified" status) loads as the
    current schema: its read-back reached every record, so nothing is unread."""
    from tuner.store.record_upgrade import STEPS

    source = next(iter(ResultsStore(V1).paths()))
    data = json.loads(source.read_text())
    while data["schema_version"] < 4:
        data = STEPS[data["schema_version"]](data)
    assert "unread" not in data["delivery"]
    old = tmp_path / data["sweep"] / "v4.json"
    old.parent.mkdir()
    old.write_text(json.dumps(data))
    record = ResultsStore(tmp_path).load(old)
    assert record.schema_version == SCHEMA_VERSION == 7
    assert record.delivery.unread == 0 and record.delivery.read_back_s is None
    assert record.status == "ok" and not record.delivery.unfinished
