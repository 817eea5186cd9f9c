"""The bounded distinct count behind a capture's producer counts: exact up to its limit, then an
estimate within a few standard errors, in the same few KiB however many strings it sees."""

from __future__ import annotations

import pytest

from tuner.measure.distinct_count import EXACT_LIMIT, REGISTERS, STANDARD_ERROR, DistinctCount


def _seen(n: int, repeats: int = 1) -> DistinctCount:
    seen = DistinctCount()
    for _ in range(repeats):
        for i in range(n):
            seen.add(f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}:{40000 + i % 7}")
    return seen


@pytest.mark.parametrize("n", [0, 1, 2, 999, EXACT_LIMIT])
def test_up_to_the_limit_the_count_is_exact(n: int) -> None:
    seen = _seen(n, repeats=3)  # each string three times: counted once
    assert (seen.count, seen.exact) == (n, True)


@pytest.mark.parametrize("n", [EXACT_LIMIT + 1, 1500, 4000, 12_000, 60_000, 250_000])
def test_past_the_limit_the_count_is_an_estimate_within_three_standard_errors(n: int) -> None:
    seen = _seen(n, repeats=2)
    assert not seen.exact
    assert seen.count > EXACT_LIMIT  # never below what was counted exactly
    assert abs(seen.count - n) / n < 3 * STANDARD_ERROR, seen.count


def test_past_the_limit_no_string_is_kept() -> None:
    seen = _seen(EXACT_LIMIT + 1)
    assert seen._hashes is None and len(seen._registers) == REGISTERS
    before = seen.count
    for _ in range(3):  # the same string again changes nothing
        seen.add("10.0.0.1:40001")
    assert seen.count == before and len(seen._registers) == REGISTERS


def test_the_count_is_the_same_in_every_run() -> None:
    # BLAKE2b, not Python's salted hash: a capture read twice says the same numbers
    assert _seen(20_000).count == _seen(20_000).count == 20248
