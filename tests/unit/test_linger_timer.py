"""The record due at a batch's linger deadline (docs/benchmarks.md "Linger timers"): a client's timer
fires a little after linger.ms, so on a schedule whose interval equals the linger every batch takes
two records; a little past the timer's lateness, one."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.model.predict import predict
from tuner.model.traffic import Traffic
from tuner.spec.clients import ClientProfile
from tuner.spec.clients.java import JavaProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.clients.rules import LateTimer

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority

PROFILES: list[ClientProfile] = [
    LibrdkafkaProfile(name="r", linger_ms=5),
    JavaProfile(name="j", linger_ms=5),
    LibrdkafkaProfile(name="r20", linger_ms=20),
    JavaProfile(name="j20", linger_ms=20),
]


def _one_partition(interval_ms: float) -> Traffic:
    return Traffic(2, 1000 / interval_ms, 300, (1,), 1)


def _took_the_next_record(profile: ClientProfile, interval_ms: float) -> float:
    """The share of batches that took the record after their first: records per request - 1."""
    traffic = _one_partition(interval_ms)
    return traffic.total_rate / predict(traffic, profile).requests_per_s - 1


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_the_record_due_at_the_deadline_makes_the_batch(profile: ClientProfile) -> None:
    assert profile.linger_ms is not None
    # Measured at 200/s, linger 5 ms: 97-99% of the batches (both clients; Java 69-97% at 20 ms).
    assert _took_the_next_record(profile, profile.linger_ms) >= 0.85


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_a_record_due_well_past_the_deadline_waits_for_the_next(profile: ClientProfile) -> None:
    assert profile.linger_ms is not None
    assert _took_the_next_record(profile, profile.linger_ms + 1.0) <= 0.1


def test_a_timer_that_is_never_late_draws_nothing() -> None:
    assert LateTimer(0.0, 0.6).draw_s(random.Random(1)) == 0.0


@given(
    median=st.floats(min_value=0.0, max_value=50.0),
    spread=st.floats(min_value=0.0, max_value=2.0),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_a_late_timer_is_never_early(median: float, spread: float, seed: int) -> None:
    late = LateTimer(median, spread).draw_s(random.Random(seed))
    assert late >= 0.0 and math.isfinite(late)
