"""Message payloads from a workload's message source, each carrying a unique record id.

A pool of distinct events is built once per producer process (log lines replayed or joined to the
target size, generated log-like lines, or a size distribution; shared with the Filebeat engine's
corpus so every engine sends the same text); every produced record is a pool
event whose last bytes are replaced by ` kbtid=<16 hex>` so delivery verification can recognise it
and the size stays exact.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tuner.driver.corpus import _entry_sizes, _source_lines, _text_of
from tuner.spec.workload import KeySpec, WorkloadSpec

ID_MARK = b" kbtid="
# A record id is producer << ID_SHIFT | sequence (every engine kbt drives); a locust producer's id
# is its worker index << WORKER_SHIFT | its number in that worker's process.
ID_SHIFT = 40
SEQ_MASK = (1 << ID_SHIFT) - 1
WORKER_SHIFT = 12
ID_BYTES = len(ID_MARK) + 16
POOL_BYTES = 48 * 1024 * 1024


def with_id(event: bytes, record_id: int) -> bytes:
    """`event` with its tail replaced by the id marker (same length when the event is long enough)."""
    return stamp_prefix(event) + b"%016x" % record_id


def id_of(value: bytes) -> str | None:
    """The record id a value carries (for delivery verification), or None."""
    at = value.rfind(ID_MARK)
    if at < 0:
        return None
    return value[at + len(ID_MARK) : at + ID_BYTES].decode("ascii", "replace")


def build_pool(workload: WorkloadSpec, seed: int) -> list[bytes]:
    """Distinct events to replay, built like the Filebeat engine's corpus (same lines, same sizes):
    a log file line by line, or consecutive lines joined to each target size."""
    rng = random.Random(seed)
    lines = _source_lines(workload, rng)
    pool: list[bytes] = []
    total = 0
    for i, size in enumerate(_entry_sizes(workload)):
        event = lines[i % len(lines)].encode() if size <= 0 else _text_of(lines, rng, size).encode()[:size]
        pool.append(event)
        total += len(event)
        if total >= POOL_BYTES:
            break
    return pool


def stamp_prefix(event: bytes) -> bytes:
    """The part of `event` kept before its id: `prefix + b"%016x" % id` is `with_id(event, id)`."""
    return ID_MARK if len(event) <= ID_BYTES else event[: len(event) - ID_BYTES] + ID_MARK


@dataclass
class Payloads:
    """Cycles through a pool, stamping ids; picks keys per the workload's key spec."""

    pool: list[bytes]
    keys: KeySpec
    rng: random.Random
    _next: int = 0

    @classmethod
    def for_workload(cls, workload: WorkloadSpec, seed: int) -> Payloads:
        return cls(build_pool(workload, seed), workload.keys, random.Random(seed ^ 0x5EED))

    @property
    def keyless(self) -> bool:
        return self.keys.kind == "none"

    def prefixes(self) -> list[bytes]:
        return [stamp_prefix(e) for e in self.pool]

    def next(self, record_id: int) -> tuple[bytes | None, bytes]:
        event = self.pool[self._next % len(self.pool)]
        self._next += 1
        return self.stamped(event, record_id)

    def stamped(self, event: bytes, record_id: int) -> tuple[bytes | None, bytes]:
        """The key and value of `event` sent as record `record_id`."""
        return self.key_for(event), with_id(event, record_id)

    def key_for(self, event: bytes) -> bytes | None:
        if self.keys.kind == "none":
            return None
        if self.keys.kind == "random":
            cardinality = self.keys.cardinality or 1_000_000
            return str(self.rng.randrange(cardinality)).encode()
        key = self.keys.key_of(event.decode("utf-8", "replace"))
        return key.encode() if key is not None else None
