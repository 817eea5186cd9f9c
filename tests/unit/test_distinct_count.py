"""The bounded distinct count behind a capture's producer counts: exact up to its limit, then an
estimate within a few standard errors, in the same few KiB however many strings it sees; and the
exact count of a topic sample's keys, 8 bytes a key however long (DistinctKeys)."""

from __future__ import annotations

import pytest

from tuner.measure import distinct_count
from tuner.measure.distinct_count import EXACT_LIMIT, REGISTERS, STANDARD_ERROR, DistinctCount, DistinctKeys


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


def test_sampled_keys_are_counted_exactly_in_8_bytes_each_whatever_their_size() -> None:
    # what capture_read keeps of a topic sample's keys: their count (the replay's key cardinality),
    # in bytes that do not grow with the keys (the sizes are kept apart, in key_bytes)
    keys = DistinctKeys()
    assert (keys.count, keys.nbytes) == (0, 0)
    big = [bytes([i]) * (1 << 20) for i in range(50)]  # 50 keys of 1 MiB, each added twice
    small = [b"", b"a", b"b", b"ab"]
    for key in [*big, *small, *big, *small]:
        keys.add(key)
    assert keys.count == 54
    assert keys.nbytes == 8 * 108  # 864 bytes for 100 MiB of keys


def test_sampled_keys_past_the_bound_are_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distinct_count, "MAX_KEYS", 10)
    keys = DistinctKeys()
    for i in range(25):
        keys.add(b"%d" % i)
    assert (keys.count, keys.nbytes) == (10, 80)
