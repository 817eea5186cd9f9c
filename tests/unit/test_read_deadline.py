"""The read-back's deadline follows the volume and the measured read rate (driver/delivery/read.py): a
large run gets the time its reading needs, a stalled read ends, and nothing passes the cap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.driver.delivery.read import ReadClock, ReadDeadline


class Ticks:
    """A clock the test moves by hand (the deadline is arithmetic on time; no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_deadline_starts_from_the_volume() -> None:
    rule = ReadDeadline(min_s=120.0, floor_per_s=20000.0, stall_s=60.0, max_s=3600.0)
    assert ReadClock(rule, 1000, Ticks()).limit_s == 120.0  # small run: the minimum
    assert ReadClock(rule, 14_100_556, Ticks()).limit_s == pytest.approx(
        14_100_556 / 20000.0
    )  # large: its volume
    assert ReadClock(rule, 10**12, Ticks()).limit_s == pytest.approx(3600.0)  # never past the cap


def test_a_read_slower_than_the_floor_gets_its_projected_time() -> None:
    """The bench-driver case: 14.1 M acked, 9.875 M read in the first 120 s: the deadline moves
    out to the projected end (what is left at the measured rate, and half again)."""
    ticks = Ticks()
    clock = ReadClock(
        ReadDeadline(min_s=120.0, floor_per_s=200000.0, stall_s=60.0, max_s=3600.0), 14_100_556, ticks
    )
    assert clock.limit_s == 120.0
    ticks.now += 119.0
    clock.progress(9_875_000)
    left_s = (14_100_556 - 9_875_000) / (9_875_000 / 119.0)
    assert clock.limit_s == pytest.approx(119.0 + 1.5 * left_s)
    ticks.now += 1.0
    assert not clock.expired()  # the old 120 s deadline would have cut it here


def test_a_stalled_read_ends_before_its_deadline() -> None:
    ticks = Ticks()
    clock = ReadClock(
        ReadDeadline(min_s=600.0, floor_per_s=1000.0, stall_s=30.0, max_s=3600.0), 10_000, ticks
    )
    clock.progress(10)
    ticks.now += 29.0
    clock.progress(10)  # nothing new
    assert not clock.expired()
    ticks.now += 1.0
    assert clock.expired()


@given(
    expected=st.integers(0, 10**10),
    steps=st.lists(st.tuples(st.floats(0.0, 500.0), st.integers(0, 10**9)), max_size=20),
    min_s=st.floats(0.1, 1000.0),
    max_s=st.floats(0.1, 5000.0),
)
def test_the_deadline_never_moves_in_and_never_passes_the_cap(
    expected: int, steps: list[tuple[float, int]], min_s: float, max_s: float
) -> None:
    ticks = Ticks()
    clock = ReadClock(
        ReadDeadline(min_s=min_s, floor_per_s=5000.0, stall_s=60.0, max_s=max_s), expected, ticks
    )
    read, limit = 0, clock.limit_s
    assert limit <= max_s + 1e-9
    for dt, more in steps:
        ticks.now += dt
        read += more
        clock.progress(read)
        assert limit - 1e-9 <= clock.limit_s <= max_s + 1e-9
        limit = clock.limit_s
