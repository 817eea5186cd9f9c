"""Keys that land on a topic's partitions in given shares (TopicSpec.key_shares), under the
sending client's own partitioner: a replay of a captured keyed topic puts each partition's share
of the records where the source's producers put it, whatever keys the source used.

A key's partition is its client's hash of the key modulo the partition count:

- librdkafka's `consistent` and `consistent_random` (its default): CRC32 (zlib's);
- the Java producer's default partitioner for a keyed record, and librdkafka's `murmur2` and
  `murmur2_random`: Kafka's murmur2, made positive (`& 0x7fffffff`);
- librdkafka's `fnv1a` and `fnv1a_random` (Sarama's hash partitioner): FNV-1a 32-bit, its
  absolute value as a signed integer.

    table = KeyTable.build([0.1, 0.3, 0.6], cardinality=500, partition_of=partitioner("murmur2"))
    key = table.draw(rng)             # a random key, partitions in the shares
    keys = table.allotted(512, rng)   # 512 keys, each partition's count in its share (a corpus)
"""

from __future__ import annotations

import bisect
import itertools
import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

PartitionOf = Callable[[bytes, int], int]

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
# Candidate keys tried per wanted key before a partition is given up (hashes spread evenly, so a
# partition is found within a few times the partition count)
_TRIES_PER_KEY = 64
_MIN_TRIES = 10_000


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2) as an unsigned 32-bit value."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    for i in range(0, length - length % 4, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length & ~3
    extra = length % 4
    if extra == 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h ^= data[tail]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    return h ^ (h >> 15)


def fnv1a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & _MASK
    return h


def _crc32(key: bytes, partitions: int) -> int:
    return zlib.crc32(key) % partitions


def _murmur2(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def _fnv1a(key: bytes, partitions: int) -> int:
    h = fnv1a(key)  # as a signed 32-bit value made positive, as Sarama's hash partitioner does
    return (h if h < 0x80000000 else (1 << 32) - h) % partitions


_PARTITIONERS: dict[str, PartitionOf] = {
    "consistent": _crc32,
    "consistent_random": _crc32,
    "murmur2": _murmur2,
    "murmur2_random": _murmur2,
    "fnv1a": _fnv1a,
    "fnv1a_random": _fnv1a,
}


def partitioner(name: str) -> PartitionOf | None:
    """The key -> partition function of a librdkafka `partitioner` value ("murmur2" is also the
    Java producer's keyed default); None where the key does not decide (random)."""
    return _PARTITIONERS.get(name)


@dataclass(frozen=True)
class KeyTable:
    """Keys grouped by the partition they land on, and each partition's share (summing to 1);
    a partition's keys share its share equally."""

    by_partition: list[list[bytes]]
    shares: list[float]

    @classmethod
    def build(
        cls,
        shares: Sequence[float],
        cardinality: int,
        partition_of: PartitionOf,
        name: Callable[[int], bytes] = lambda i: str(i).encode(),
    ) -> KeyTable:
        """About `cardinality` keys named name(0), name(1), ... spread over the partitions in
        proportion to `shares` (at least one per partition that takes records)."""
        partitions = len(shares)
        total = sum(shares)
        wanted = [0 if s <= 0 else max(1, round(cardinality * s / total)) for s in shares]
        found: list[list[bytes]] = [[] for _ in shares]
        short = sum(wanted)
        tries = max(_MIN_TRIES, _TRIES_PER_KEY * short)
        i = 0
        while short and i < tries:
            key = name(i)
            p = partition_of(key, partitions)
            if len(found[p]) < wanted[p]:
                found[p].append(key)
                short -= 1
            i += 1
        # a partition no key was found for (not seen with these hashes) takes nothing
        kept = [s if keys else 0.0 for s, keys in zip(shares, found, strict=True)]
        return cls(found, [s / sum(kept) for s in kept])

    @cached_property
    def _cumulative(self) -> tuple[list[bytes], list[float]]:
        pairs = zip(self.shares, self.by_partition, strict=True)
        weights = [share / len(chosen) for share, chosen in pairs for _ in chosen]
        return [key for chosen in self.by_partition for key in chosen], list(itertools.accumulate(weights))

    @property
    def keys(self) -> list[bytes]:
        return self._cumulative[0]

    def draw(self, rng: random.Random) -> bytes:
        keys, cumulative = self._cumulative
        return keys[min(len(keys) - 1, bisect.bisect_right(cumulative, rng.random() * cumulative[-1]))]

    def allotted(self, count: int, rng: random.Random) -> list[bytes]:
        """`count` keys in a shuffled order, each partition's count its share of `count` by the
        largest remainder, its keys in turn (a corpus cycled record by record keeps the shares)."""
        exact = [count * s for s in self.shares]
        counts = [int(x) for x in exact]
        for p in sorted(range(len(exact)), key=lambda j: counts[j] - exact[j])[: count - sum(counts)]:
            counts[p] += 1
        keys = [
            chosen[i % len(chosen)]
            for chosen, n in zip(self.by_partition, counts, strict=True)
            for i in range(n)
        ]
        rng.shuffle(keys)
        return keys
