"""A capture's window is the traffic window itself (tuner.runner.capture `watch`): the reads after it
take what time the cluster takes and are not counted in it. A read kbt cannot keep as a capture is
one line, and what was read is written to --out first (`kept`): the window cannot be read again."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.unit.capture_records import JAVA, client_row
from tuner.core.errors import BadInput
from tuner.model.capture import ShapeOptions
from tuner.runner.capture import UNKEPT_FILE, Reads, kept, watch

pytestmark = pytest.mark.wall_clock

WINDOW_S = 0.3
SLOW_S = 1.0  # each read after the window: a slow cluster's metadata (minutes, here a second)
OLD = {"name": "old", "partitions": 2}
NEW = {"name": "new", "partitions": 1}


class SlowCluster:
    """Topic metadata and end offsets as a cluster answers them; every read after the first is slow."""

    def __init__(self) -> None:
        self.reads = 0

    def topics(self) -> list[dict[str, Any]]:
        time.sleep(SLOW_S)
        return [OLD, NEW]  # `new` was created inside the window

    def ends(self, topics: list[dict[str, Any]]) -> dict[str, list[int | None]]:
        self.reads += 1
        if self.reads > 1:
            time.sleep(SLOW_S)
        return {t["name"]: [100 * self.reads] * t["partitions"] for t in topics}


def test_the_window_is_the_traffic_window_not_the_reads_after_it() -> None:
    cluster = SlowCluster()
    topics, first, last, start, end = watch(Reads(cluster.topics, cluster.ends), [OLD], WINDOW_S, None)
    # the reads after the window took 3 s: none of it is in the window
    assert WINDOW_S <= end - start < WINDOW_S + SLOW_S / 2
    assert end < time.time() - 2 * SLOW_S
    assert [t["name"] for t in topics] == ["old", "new"]
    assert first == {"old": [100, 100]}
    assert last == {"old": [200, 200], "new": [300]}


def _read(end: float, requests: int, **row_kw: Any) -> dict[str, Any]:
    row = {**client_row("app", JAVA, "b0", requests, "t", **row_kw), "total_time_ms": [1.5, 2.5]}
    return {
        "start": 0.0,
        "end": end,
        "bootstrap_servers": "127.0.0.1:1",
        "brokers": 1,
        "topics": [{"name": "t", "partitions": 1, "replication_factor": 1, "records": requests}],
        "clients": [row],
        "samples": [],
        "brokers_snapshot": None,
        "notes": [],
    }


def test_a_read_kbt_keeps_is_its_record_and_plan(tmp_path: Path) -> None:
    record, plan = kept(_read(60.0, 600), ShapeOptions(), tmp_path)
    assert record.window_s == 60.0
    assert [g.requests_per_s for g in plan.groups] == [10.0]
    assert not (tmp_path / UNKEPT_FILE).exists()


def test_a_read_kbt_cannot_keep_is_one_line_and_written_out(tmp_path: Path) -> None:
    read = _read(
        60.0, 9 * 10**15, record_bytes=0
    )  # past any cluster's rate: refused by the record's own bounds
    with pytest.raises(BadInput) as refused:
        kept(read, ShapeOptions(), tmp_path / "out")
    line = refused.value.message
    assert "\n" not in line
    assert line.startswith("the capture's read is not one kbt can keep: clients.0.requests: 9,000,000,")
    assert line.endswith(f"what it read is in {tmp_path / 'out' / UNKEPT_FILE}")
    kept_read = json.loads((tmp_path / "out" / UNKEPT_FILE).read_text(encoding="utf-8"))
    assert kept_read["problem"] in line
    assert kept_read["read"] == read  # nothing the window read is lost
