"""Real Filebeat 7.17's synchronous flush path in the model (queue.mem.flush.timeout 0s): one
output worker feeds Sarama event by event, and Sarama's one request in flight per broker holds its
slot for a cycle that varies per request (tuner/model/simulate.py, docs/benchmarks.md "The Filebeat
sync-flush path")."""

from __future__ import annotations

import random
import statistics
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.model.simulate import DEFAULT_RTT_S, sarama_cycles, simulate
from tuner.model.traffic import Traffic
from tuner.spec.clients import profile_of, rules_of
from tuner.spec.clients.rules import FilebeatRules

ONE_BROKER = Traffic(producers=1, rate=60, message_bytes=900, partitions=(12,), brokers=1)


def _rules(engine: str = "real", **settings: object) -> FilebeatRules:
    section = {"input.engine": engine, "queue.mem.flush.timeout": "0s", **settings}
    rules = rules_of(profile_of({"name": "sync", "client": "filebeat", "filebeat": section}))
    assert isinstance(rules, FilebeatRules)
    return rules


def _per_burst(traffic: Traffic, rules: FilebeatRules, seed: int = 1) -> float:
    """Produce requests per harvester read (one read per backoff period) per producer."""
    sim = simulate(traffic, rules, seed=seed)
    reads = sim.horizon_s * sim.producers / (rules.read_backoff_ms / 1000)
    return sim.requests / reads


def test_real_filebeat_carries_the_measured_cycle_and_the_emulation_does_not() -> None:
    real, emulated = _rules(), _rules("emulated")
    assert real.cycle_s > DEFAULT_RTT_S and real.cycle_spread > 0 and real.build_s_per_byte > 0
    assert (emulated.cycle_s, emulated.cycle_spread, emulated.build_s_per_byte) == (0.0, 0.0, 0.0)


def test_a_fixed_cycle_splits_every_burst_alike_and_a_varying_one_gives_fractions() -> None:
    # 60 lines read at once enter Sarama over ~3.5 ms: the first goes alone, the rest wait one
    # cycle. A fixed 20 ms cycle covers the whole burst: exactly 2 requests per read. A cycle
    # around 3 ms that varies from request to request sometimes ends before the burst has entered:
    # a third request on some reads, as real pods show (2.2-2.7 per read).
    fixed = replace(_rules(), cycle_s=0.020, cycle_spread=0.0, build_s_per_byte=0.0)
    assert _per_burst(ONE_BROKER, fixed) == pytest.approx(2.0, abs=0.01)  # the horizon cuts one read
    varying = replace(fixed, cycle_s=0.003, cycle_spread=0.86)
    assert 2.1 < _per_burst(ONE_BROKER, varying) < 3.5


def test_larger_reads_take_more_requests_but_fewer_per_line() -> None:
    rules = _rules()
    small = _per_burst(ONE_BROKER, rules)
    large = _per_burst(replace(ONE_BROKER, rate=240), rules)
    assert small < large < 4 * small


def test_the_output_worker_hands_events_over_one_after_another() -> None:
    # A cycle far shorter than an event's entry: every event leaves alone as soon as it enters. The
    # harvester hands line k of a read over at k x 50 us; a worker taking 200 us per event hands
    # it to Sarama at k x 200 us: over a 60-line read the mean wait grows by 29.5 x 150 us.
    base = replace(_rules(), cycle_s=1e-7, cycle_spread=0.0, build_s_per_byte=0.0, entry_spacing_s=0.0)
    spaced = replace(base, entry_spacing_s=200e-6)
    quick, slow = simulate(ONE_BROKER, base), simulate(ONE_BROKER, spaced)
    assert quick.requests == quick.messages == slow.requests  # one request per event either way
    grown = statistics.fmean(slow.waits_s) - statistics.fmean(quick.waits_s)
    assert grown == pytest.approx(29.5 * (200e-6 - base.harvest_spacing_s), rel=0.1)


def test_building_a_request_holds_the_slot_longer_for_larger_requests() -> None:
    # A read of 240 lines, fixed cycle: the build time of the large second request delays the
    # third, so more lines ride on it and fewer requests are sent.
    rules = replace(_rules(), cycle_s=0.002, cycle_spread=0.0)
    busy = _per_burst(replace(ONE_BROKER, rate=240), replace(rules, build_s_per_byte=100e-9))
    idle = _per_burst(replace(ONE_BROKER, rate=240), replace(rules, build_s_per_byte=0.0))
    assert busy < idle


@settings(max_examples=40, deadline=None)
@given(
    cycle=st.floats(min_value=1e-5, max_value=0.5),
    spread=st.one_of(st.just(0.0), st.floats(min_value=0.05, max_value=2.0)),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_cycle_draws_are_positive_seeded_and_centred(cycle: float, spread: float, seed: int) -> None:
    rules = replace(_rules(), cycle_s=cycle, cycle_spread=spread)
    first = sarama_cycles(rules, DEFAULT_RTT_S, random.Random(seed))
    again = sarama_cycles(rules, DEFAULT_RTT_S, random.Random(seed))
    draws = [first() for _ in range(1001)]
    assert draws == [again() for _ in range(1001)]
    assert all(d > 0 for d in draws)
    if spread == 0.0:
        assert set(draws) == {cycle}
    else:  # lognormal around the median: half the draws below it (within sampling noise)
        assert abs(sum(d < cycle for d in draws) / len(draws) - 0.5) < 0.1


def test_without_a_cycle_the_fixed_round_trip_is_used() -> None:
    rules = replace(_rules(), cycle_s=0.0)
    draw = sarama_cycles(rules, 0.004, random.Random(1))
    assert {draw() for _ in range(10)} == {0.004}


@settings(max_examples=10, deadline=None)
@given(
    pods=st.integers(min_value=1, max_value=4),
    rate=st.floats(min_value=5, max_value=400),
    size=st.integers(min_value=200, max_value=4000),
    brokers=st.integers(min_value=1, max_value=3),
    cycle=st.floats(min_value=1e-4, max_value=0.05),
    spread=st.floats(min_value=0.0, max_value=1.5),
    filestream=st.booleans(),
)
def test_every_line_is_sent_once_and_a_read_takes_at_least_one_request_per_broker_it_reaches(
    pods: int, rate: float, size: int, brokers: int, cycle: float, spread: float, filestream: bool
) -> None:
    rules = replace(
        _rules(**({"input.type": "filestream"} if filestream else {})), cycle_s=cycle, cycle_spread=spread
    )
    traffic = Traffic(producers=pods, rate=rate, message_bytes=size, partitions=(12,), brokers=brokers)
    sim = simulate(traffic, rules, seed=3)
    assert len(sim.waits_s) == sim.messages
    assert all(w >= 0 for w in sim.waits_s)
    assert sim.requests <= sim.messages
    reads = sim.horizon_s * sim.producers / (rules.read_backoff_ms / 1000)
    assert sim.requests >= 0.9 * min(reads, sim.messages)
    assert statistics.fmean(sim.waits_s) < rules.read_max_backoff_ms / 1000 + 1.0
