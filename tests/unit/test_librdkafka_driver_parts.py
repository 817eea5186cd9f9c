"""librdkafka engine parts: payload ids and sizes, statistics windows, producer split."""

from __future__ import annotations

import json

import pytest

from tuner.core.paths import repo_root
from tuner.driver.librdkafka_engine import split_producers
from tuner.driver.payload import ID_BYTES, Payloads, id_of, with_id
from tuner.driver.rdkafka_stats import StatsTrack
from tuner.measure.broker_window import interpolate
from tuner.spec import load_sweep


def test_ids_keep_the_size_and_read_back() -> None:
    event = b"x" * 100
    stamped = with_id(event, 0xABC)
    assert len(stamped) == 100
    assert id_of(stamped) == f"{0xABC:016x}"
    assert id_of(b"no id here") is None
    assert len(with_id(b"tiny", 1)) == ID_BYTES


@pytest.mark.parametrize(("spec", "size"), [("smoke", 200), ("qunar-logs", 1620), ("large-events", 600000)])
def test_payloads_have_the_workload_size(spec: str, size: int) -> None:
    workload = load_sweep(repo_root() / "loadtests" / f"{spec}.yaml").runs[0].workload
    payloads = Payloads.for_workload(workload, seed=1)
    values = [payloads.next(i)[1] for i in range(5)]
    assert all(len(v) == size for v in values)
    assert len({id_of(v) for v in values}) == 5
    assert Payloads.for_workload(workload, seed=1).pool == payloads.pool  # reproducible


def _stats(requests: dict[int, int], batches: int = 0, records: int = 0, size: int = 0) -> str:
    brokers = {
        "bootstrap": {"nodeid": -1, "req": {"Produce": 0}, "txbytes": 5},
        **{
            f"b{n}": {
                "nodeid": n,
                "req": {"Produce": c},
                "txbytes": c * 100,
                "rtt": {"cnt": 1, "sum": 2000, "p50": 2000, "p99": 2000, "max": 2000},
            }
            for n, c in requests.items()
        },
    }
    topics = {"t": {"batchcnt": {"cnt": batches, "sum": records}, "batchsize": {"cnt": batches, "sum": size}}}
    return json.dumps({"brokers": brokers, "topics": topics})


def test_stats_window_interpolates_the_start_and_reads_after_the_drain() -> None:
    track = StatsTrack()
    track.add(_stats({1: 0, 2: 0}), 0.0)
    track.add(_stats({1: 10, 2: 20}, batches=30, records=60, size=3000), 1.0)
    track.add(_stats({1: 20, 2: 40}, batches=30, records=60, size=3000), 2.0)
    track.add(_stats({1: 22, 2: 44}, batches=6, records=12, size=600), 2.5)  # the drain
    window = track.window(start=0.5)
    assert window.requests == {"1": pytest.approx(17.0), "2": pytest.approx(34.0)}
    assert window.requests_total == {"1": 22, "2": 44}
    assert (window.batches, window.batch_records, window.batch_bytes) == (66, 132, 6600)
    rtt = window.rtt.as_ms()
    assert rtt is not None and rtt["p99"] == 2.0


def test_split_producers() -> None:
    assert split_producers(5, 2) == [[0, 2, 4], [1, 3]]
    assert sum(len(g) for g in split_producers(24, 4)) == 24


def test_interpolate_counter_samples() -> None:
    points = [(0.0, 0.0), (10.0, 100.0), (20.0, 100.0)]
    assert interpolate(points, 5.0) == 50.0
    assert interpolate(points, 25.0) == 100.0
    assert interpolate(points, -1.0) == 0.0
