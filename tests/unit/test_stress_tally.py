"""Stress accounting: what locust workers ship to the master merges exactly, in any split."""

from __future__ import annotations

import random

import pytest

from tuner.driver.latency_hist import Latency
from tuner.driver.stress.consumer_tally import GroupTally, HalfTally
from tuner.driver.stress.tally import StageTally, Tally, merge_ranges, ranges_of


def test_ranges() -> None:
    assert ranges_of([5, 1, 2, 3, 7, 7, 8]) == [[1, 3], [5, 5], [7, 8]]
    assert merge_ranges([[1, 3], [10, 12]], [[4, 6], [11, 20]]) == [[1, 6], [10, 20]]
    assert ranges_of([]) == []


def test_histogram_keeps_3_significant_digits() -> None:
    h = Latency()
    h.add_s(12.345678)
    h.add_s(0)  # clamped to the 1 us floor
    assert h.count == 2
    assert abs(h.percentile_ms(100) - 12_345.678) / 12_345.678 < 0.001  # type: ignore[operator]
    assert h.percentile_ms(1) == 0.001


def test_percentile_counts_unacked_records_as_slowest() -> None:
    h = Latency.of_us({1000 * i: 1 for i in range(1, 101)})  # 1..100 ms
    assert h.percentile_ms(50) == pytest.approx(50, rel=1e-3)
    assert h.percentile_ms(99) == pytest.approx(99, rel=1e-3)
    # one more record never acked: p99 moves up; 1% unacked more puts p99 among them
    assert h.percentile_ms(99, extra_high=1) == pytest.approx(100, rel=1e-3)
    assert h.percentile_ms(99, extra_high=5) is None
    assert Latency().percentile_ms(99) is None


def _fill(tally: Tally, rng: random.Random, pid: int, seqs: list[int]) -> None:
    for seq in seqs:
        stage = seq // 100
        st = tally.stage(stage)
        st.sent += 1
        st.acked += 1
        st.bytes_acked += 10
        st.latency.add_s(rng.random())
        st.requests["1"] = st.requests.get("1", 0) + 1
        tally.record_ack(pid, stage, seq, "t", seq % 3, seq)


def test_deltas_merged_on_the_master_equal_one_tally() -> None:
    rng = random.Random(7)
    whole = Tally()
    master = Tally()
    workers = [Tally(), Tally()]
    for pid in range(4):
        seqs = list(range(300))
        rng.shuffle(seqs)  # acks arrive out of order across partitions
        _fill(whole, random.Random(pid), pid, seqs)
        worker = workers[pid % 2]
        for chunk in (seqs[:120], seqs[120:]):
            _fill(worker, random.Random(pid * 1000 + len(chunk)), pid, chunk)
            master.merge_wire(worker.take_delta())  # a report every so often
    assert sorted(master.stages) == sorted(whole.stages) == [0, 1, 2]
    for i in whole.stages:
        a, b = master.stages[i], whole.stages[i]
        assert (a.sent, a.acked, a.bytes_acked, a.requests) == (b.sent, b.acked, b.bytes_acked, b.requests)
        assert a.latency.count == b.latency.count
    whole.flush_acked()
    assert master.acked == whole.acked
    assert master.acked[0][1] == [[100, 199]]
    assert sum(hi - lo + 1 for per in master.acked.values() for lo, hi in per.get(2, [])) == 400
    assert master.max_offsets == {"t": {0: 297, 1: 298, 2: 299}}
    assert workers[0].take_delta()["stages"] == {}  # nothing new since the last report


def test_stage_wire_roundtrip() -> None:
    latency = Latency.of_us({100: 2, 900: 2})
    st = StageTally(sent=5, acked=4, failed=1, bytes_acked=40, latency=latency, requests={"2": 3})
    st.batches, st.batch_records, st.batch_bytes = 2, 4, 30
    back = StageTally.from_wire(st.to_wire())
    assert back == st
    assert back.unacked == 0
    assert back.p_ms(50) == 0.1


def test_group_tally_halves_and_wire() -> None:
    g = GroupTally()
    g.half(3, 0).records = 10
    g.half(3, 0).e2e = Latency.of_us({1000: 10})
    g.half(3, 1).records = 5
    g.half(3, 1).e2e = Latency.of_us({50_000: 5})
    g.half(3, 1).lag_sum, g.half(3, 1).lag_samples, g.half(3, 1).lag_max = 30.0, 3, 20.0
    back = GroupTally.from_wire(g.to_wire())
    whole = back.stage(3)
    assert whole.records == 15
    assert whole.e2e.percentile_ms(50) == 1.0 and whole.e2e.percentile_ms(99) == pytest.approx(50.0, rel=1e-3)
    assert back.half(3, 1).mean_lag == 10.0 and back.half(3, 1).lag_max == 20.0
    merged = HalfTally()
    merged.merge(back.half(3, 0))
    merged.merge(back.half(3, 0))
    assert merged.records == 20
    assert g.take_delta() and g.halves == {}


def test_send_lag_merges_and_survives_the_wire() -> None:
    a, b = StageTally(sent=2), StageTally(sent=1)
    a.send_lag = Latency.of_us({1000: 1, 500_000: 1})
    b.send_lag = Latency.of_us({1000: 1})
    a.merge(b)
    assert a.send_lag == Latency.of_us({1000: 2, 500_000: 1})
    back = StageTally.from_wire(a.to_wire())
    assert back == a
    assert back.send_lag.percentile_ms(50) == 1.0
    assert back.send_lag.percentile_ms(99) == pytest.approx(500.0, rel=1e-3)
    assert (
        StageTally.from_wire({"sent": 3}).send_lag.percentile_ms(99) is None
    )  # a tally from an older worker


def test_last_due_is_the_latest_across_reports() -> None:
    a, b = StageTally(last_due=1_800_000_010.5), StageTally(last_due=1_800_000_009.0)
    a.merge(b)
    assert a.last_due == 1_800_000_010.5
    assert StageTally.from_wire(a.to_wire()).last_due == 1_800_000_010.5
