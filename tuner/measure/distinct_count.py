"""A count of distinct strings in bounded memory: exact up to EXACT_LIMIT, then an estimate that
says it is one (a HyperLogLog sketch of REGISTERS one-byte registers, 4 KiB however many it sees).

    seen = DistinctCount()
    for address in addresses:
        seen.add(address)
    seen.count, seen.exact

Each string is kept as a 64-bit BLAKE2b hash (the same in every run, unlike Python's `hash`), so
the exact count is the number of distinct hashes: two of a thousand strings share one with a chance
below 1e-13. Past the limit the hashes fill the registers (Flajolet et al., 2007) and the count is
Ertl's estimator ("New cardinality estimation algorithms for HyperLogLog sketches", 2017), which
needs no range corrections: its standard error is 1.04 / sqrt(REGISTERS), 1.6%, at every count.

DistinctKeys counts a sample's record keys exactly, by the same hashes kept in an array: 8 bytes a
key, however long the keys (what the replay takes of them is their count; their sizes are kept apart).
"""

from __future__ import annotations

import hashlib
import math
from array import array

EXACT_LIMIT = 1024  # distinct strings counted exactly (about 60 KiB of hashes at most)
PRECISION = 12
REGISTERS = 1 << PRECISION
STANDARD_ERROR = 1.04 / math.sqrt(REGISTERS)
_RANK_BITS = 64 - PRECISION  # hash bits after the register index
_RANK_MASK = (1 << _RANK_BITS) - 1


def _hashed(text: str) -> int:
    return hash64(text.encode("utf-8", "surrogatepass"))


def hash64(data: bytes) -> int:
    """A 64-bit BLAKE2b hash of `data`, the same in every run."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


class DistinctCount:
    """Distinct strings seen: exact up to EXACT_LIMIT, then estimated (`exact` says which)."""

    __slots__ = ("_hashes", "_registers")

    def __init__(self) -> None:
        self._hashes: set[int] | None = set()
        self._registers = bytearray()

    def add(self, text: str) -> None:
        hashed = _hashed(text)
        if self._hashes is None:
            self._register(hashed)
            return
        self._hashes.add(hashed)
        if len(self._hashes) > EXACT_LIMIT:  # from now on an estimate, in the registers' bounded room
            self._registers = bytearray(REGISTERS)
            for kept in self._hashes:
                self._register(kept)
            self._hashes = None

    def _register(self, hashed: int) -> None:
        index, rest = hashed >> _RANK_BITS, hashed & _RANK_MASK
        rank = _RANK_BITS - rest.bit_length() + 1  # the position of the first 1 bit, 1 ..  _RANK_BITS + 1
        if rank > self._registers[index]:
            self._registers[index] = rank

    @property
    def exact(self) -> bool:
        return self._hashes is not None

    @property
    def count(self) -> int:
        """The distinct strings seen: exact, or an estimate above EXACT_LIMIT."""
        if self._hashes is not None:
            return len(self._hashes)
        return max(EXACT_LIMIT + 1, round(_estimate(self._registers)))


def _estimate(registers: bytearray) -> float:
    """Ertl's improved raw estimate of the distinct hashes behind the registers (2017, algorithm 6)."""
    m = len(registers)
    counts = [0] * (_RANK_BITS + 2)
    for value in registers:
        counts[value] += 1
    z = m * _tau(1 - counts[_RANK_BITS + 1] / m)
    for k in range(_RANK_BITS, 0, -1):
        z = 0.5 * (z + counts[k])
    z += m * _sigma(counts[0] / m)
    return m * m / (2 * math.log(2) * z)


def _sigma(x: float) -> float:
    if x == 1.0:
        return math.inf
    y, z = 1.0, x
    while True:
        x *= x
        before = z
        z += x * y
        y += y
        if z == before:
            return z


def _tau(x: float) -> float:
    if x in (0.0, 1.0):
        return 0.0
    y, z = 1.0, 1 - x
    while True:
        x = math.sqrt(x)
        before = z
        y *= 0.5
        z -= (1 - x) ** 2 * y
        if z == before:
            return z / 3


MAX_KEYS = 1_000_000  # keys a DistinctKeys counts (8 MB of hashes); any past them are not counted


class DistinctKeys:
    """Distinct byte strings (a topic sample's record keys) counted exactly by their 64-bit hashes,
    8 bytes a key in an array whatever the key's size: a set of the keys whole grew with their size
    (640,000 keys of 1 KiB, a sample's most, held 700 MB). Two of a million keys share a hash with a
    chance below 1e-7. Up to MAX_KEYS keys are counted (a sample reads at most 640,000)."""

    __slots__ = ("_hashes",)

    def __init__(self) -> None:
        self._hashes = array("Q")

    def add(self, key: bytes) -> None:
        if len(self._hashes) < MAX_KEYS:
            self._hashes.append(hash64(key))

    @property
    def nbytes(self) -> int:
        """The bytes the hashes take (what a DistinctKeys holds, however long the keys)."""
        return self._hashes.itemsize * len(self._hashes)

    @property
    def count(self) -> int:
        """The distinct keys added (sorted once, in numpy, not as a million Python ints)."""
        import numpy as np

        return np.unique(np.frombuffer(self._hashes, dtype=np.uint64)).size if self._hashes else 0
