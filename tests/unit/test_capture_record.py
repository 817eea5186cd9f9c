"""A capture record read back is held to what a capture can be (tuner.store.capture): a window kbt
captures, and over it rates no cluster passes; each client row's counts against its requests. The
refusal is one line naming the field (the catalog's capture-record cases run it as a user does)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tests.unit.capture_records import JAVA, capture_record, client_row
from tuner.store.capture import MAX_RECORD_WINDOW_S, MIN_WINDOW_S, CaptureRecord

TOPICS = [{"name": "t", "partitions": 3, "replication_factor": 1, "records": 6_000}]


def _record(row: dict[str, Any] | None = None, **kw: Any) -> CaptureRecord:
    fields = {"requests": 600, **(row or {})}
    rows = [client_row("app", JAVA, "b0", fields.pop("requests"), "t", **fields)]
    return capture_record(rows, kw.pop("topics", TOPICS), [], **kw)


@pytest.mark.parametrize("end", [MIN_WINDOW_S, 60.0, MAX_RECORD_WINDOW_S])
def test_a_capture_window_is_read_back(end: float) -> None:
    assert _record(start=0.0, end=end).window_s == end


def test_the_busiest_plausible_client_is_read_back() -> None:
    # a billion requests a second of 1000 B each, for 10 s: at the bounds, not past them
    record = _record({"requests": 10**10, "record_bytes": 10**13, "partitions": 10**10}, start=0.0, end=10.0)
    assert record.clients[0].requests == 10**10


@pytest.mark.parametrize(
    ("row", "kw", "problem"),
    [
        (None, {"start": 0.0, "end": 1e-300}, "end: a window of 1e-300 s from start to end, not one kbt"),
        (None, {"start": 0.0, "end": 4.0}, "end: a window of 4 s from start to end"),
        (None, {"start": 0.0, "end": 3e9}, "end: a window of 3e+09 s from start to end"),
        (
            {"requests": 9 * 10**15, "record_bytes": 0},
            {"end": 60.0},
            "clients.0.requests: 9,000,000,000,000,000",
        ),
        ({"record_bytes": 10**15}, {}, "clients.0.record_bytes: 1,000,000,000,000,000 in a 100 s window"),
        ({"record_bytes": 600 * 2**31}, {}, "clients.0.record_bytes: 1,288,490,188,800 in 600 requests"),
        ({"partitions": 10**10}, {}, "clients.0.partitions: 10,000,000,000 in 600 requests, past 10,000,000"),
        ({"connections": 601}, {}, "clients.0.connections: 601 against 600 requests"),
        ({"acks": {"-1": 600, "1": 1}}, {}, "clients.0.acks: 601 against 600 requests"),
        (None, {"topics": [{**TOPICS[0], "records": 10**12}]}, "topics.0.records: 1,000,000,000,000 in a"),
    ],
)
def test_an_implausible_capture_is_refused_naming_its_field(
    row: dict[str, Any] | None, kw: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        _record(row, **kw)
    assert problem in str(refused.value)


def test_rates_of_all_clients_together_are_held_too() -> None:
    # each client within a cluster's rate, all of them past it
    rows = [client_row(f"app-{i}", JAVA, "b0", 6 * 10**10, "t", record_bytes=0) for i in range(2)]
    with pytest.raises(ValidationError, match="clients: produce requests, all clients: 120,000,000,000 in"):
        capture_record(rows, TOPICS, [])
