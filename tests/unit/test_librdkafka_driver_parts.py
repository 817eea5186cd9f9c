"""librdkafka engine parts: payload ids and sizes, delivery log and latency buckets, statistics windows,
producer split."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Message

from tuner.core.paths import repo_root
from tuner.driver.delivery.ledger import Ledger, RangeFile
from tuner.driver.delivery_log import CLOSED, OPEN, DeliveryLog
from tuner.driver.latency_buckets import LatencyBuckets
from tuner.driver.librdkafka_engine import _send_lag, split_producers
from tuner.driver.payload import ID_BYTES, Payloads, id_of, with_id
from tuner.driver.rdkafka_stats import Emission, StatsTrack
from tuner.driver.rdkafka_worker import WorkerResult, _range_bytes
from tuner.measure.broker_window import interpolate
from tuner.spec.loader import load_sweep


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
    values = [payloads.stamped(payloads.pool[i], i)[1] for i in range(5)]
    assert all(len(v) == size for v in values)
    assert len({id_of(v) for v in values}) == 5
    assert Payloads.for_workload(workload, seed=1).pool == payloads.pool  # reproducible
    # the hot path's stamping (prefix + 16 hex digits) gives the same values
    assert [p + b"%016x" % i for i, p in enumerate(payloads.prefixes()[:5])] == values


def _stats(requests: dict[int, int], batches: int = 0, records: int = 0, size: int = 0) -> Emission:
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
    return Emission.parse(json.dumps({"brokers": brokers, "topics": topics}))


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
    assert rtt is not None and rtt.p99 == 2.0


def test_split_producers() -> None:
    assert split_producers(5, 2) == [[0, 2, 4], [1, 3]]
    assert sum(len(g) for g in split_producers(24, 4)) == 24


def test_interpolate_counter_samples() -> None:
    points = [(0.0, 0.0), (10.0, 100.0), (20.0, 100.0)]
    assert interpolate(points, 5.0) == 50.0
    assert interpolate(points, 25.0) == 100.0
    assert interpolate(points, -1.0) == 0.0


def _report(rid: int, partition: int = 0, offset: int = 0, latency: float = 0.002) -> Message:
    value = with_id(b"e" * 64, rid)
    return Message(topic="t", partition=partition, offset=offset, value=value, latency=latency)


def test_delivery_log_records_acked_and_failed_reports() -> None:
    log = DeliveryLog(CLOSED)
    delivered = log.callback()
    delivered(None, _report(7, partition=1, offset=40, latency=0.004))
    delivered(None, _report(8, partition=2, offset=41))
    delivered(KafkaError(KafkaError._MSG_TIMED_OUT), _report(9))
    delivered(None, Message(topic="t", value=None))  # not one of ours: ignored
    assert (log.acked_total, log.failed_total) == (2, 1)
    assert log.failed_errors == {"_MSG_TIMED_OUT": 1}
    rids, marks, failed = log.take()
    assert list(rids) == [7, 8] and list(marks) == [0.004, 0.002] and list(failed) == [9]
    assert [len(part) for part in log.take()] == [0, 0, 0]  # taken once
    assert list(log.rids) == [7, 8]  # acked ids stay for the acked files


def test_delivery_log_open_loop_marks_are_ack_times() -> None:
    log = DeliveryLog(OPEN)
    before = time.time()
    log.callback()(None, _report(1))
    _, marks, _ = log.take()
    assert before <= marks[0] <= time.time()
    with pytest.raises(ValueError):
        DeliveryLog("sometimes")


def test_delivery_log_writes_acked_files_per_topic(tmp_path: Path) -> None:
    log = DeliveryLog(CLOSED)
    delivered = log.callback()
    for rid in range(4):
        delivered(None, _report(rid, partition=rid % 2, offset=10 + rid))
    files = log.write_acked(tmp_path, 3, lambda rid: f"topic-{rid % 2}")
    assert sorted(files) == ["topic-0", "topic-1"]
    ledger = Ledger(topics=sorted(files))
    for topic, path in files.items():
        ledger.read_acked_files(topic, [Path(path)])
    assert ledger.last_offsets == {("topic-0", 0): 12, ("topic-1", 1): 13}
    assert bytes(ledger.acked[0]) == b"\x01" * 4  # ids 0..3: producer 0, sequences 0..3


def test_latency_buckets_keep_three_significant_digits() -> None:
    values = [0.0005 + 0.0137 * i for i in range(1000)]  # 0.5 ms .. 13.7 s
    buckets = LatencyBuckets()
    for value in values:
        buckets.add_s(value)
    assert buckets.total == 1000
    exact = sorted(values)
    hist = buckets.histogram()  # what the engine reports the run's latency from
    assert hist.get_total_count() == 1000
    assert hist.get_value_at_percentile(50) / 1e6 == pytest.approx(exact[499], rel=1e-3)
    assert hist.get_value_at_percentile(99) / 1e6 == pytest.approx(exact[989], rel=1e-3)
    assert hist.get_max_value() / 1e6 == pytest.approx(max(values), rel=1e-3)
    assert LatencyBuckets().histogram().get_total_count() == 0


def test_send_lag_is_weighted_by_records_and_merged_across_processes() -> None:
    """A burst's lag counts once per in-window record of the burst; the engine merges processes."""
    a, b = LatencyBuckets(), LatencyBuckets()
    a.add_s(0.002, 97)  # 97 records 2 ms behind
    b.add_s(0.4, 3)  # one late burst of 3 records, 400 ms behind
    assert a.total == 97 and a.histogram().get_value_at_percentile(99) / 1000 == pytest.approx(2.0, rel=1e-3)
    lag = _send_lag([WorkerResult(index=0, producers=1, send_lag_us=a.counts),
                     WorkerResult(index=1, producers=1, send_lag_us=b.counts)])  # fmt: skip
    assert lag.count == 100
    assert lag.p50 == pytest.approx(2.0, rel=1e-2) and lag.p99 == pytest.approx(400.0, rel=1e-2)
    assert _send_lag([WorkerResult(index=0, producers=1)]).p99 is None  # nothing sent in the window


def test_range_bytes_sums_the_cycling_sizes() -> None:
    sizes = [3, 5, 7]
    for first in range(0, 7):
        for end in range(first, 20):
            assert _range_bytes(sizes, first, end) == sum(sizes[s % 3] for s in range(first, end))


def test_range_files_round_trip_into_a_ledger(tmp_path: Path) -> None:
    ranges = RangeFile(topic_index=1, topics=2, produced={0: 10, 3: 4}, failed=[(3 << 40) | 3])
    ranges.write(tmp_path / "r.json")
    assert RangeFile.read(tmp_path / "r.json") == ranges
    ledger = Ledger(topics=["t1"]).read_range_files([tmp_path / "r.json", tmp_path / "absent.json"])
    # topic 1 of 2: producer 0 sent 1, 3, 5, 7, 9 and producer 3 sent 1, 3 (3 failed)
    assert [i for i, b in enumerate(ledger.acked[0]) if b] == [1, 3, 5, 7, 9]
    assert [i for i, b in enumerate(ledger.acked[3]) if b] == [1]
    assert ledger.total == 6 and not ledger.last_offsets  # no offsets: read to the ends
