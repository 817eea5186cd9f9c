"""Message payloads from a workload's message source, each carrying a unique record id.

A pool of distinct events is built once per producer process (log lines replayed or joined to the
target size, generated log-like lines, or a size distribution; shared with the Filebeat engine's
corpus so every engine sends the same text); every produced record is a pool
event whose last bytes are replaced by ` kbtid=<16 hex>` so delivery verification can recognise it
and the size stays exact.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from tuner.driver.corpus import entry_texts
from tuner.driver.key_shares import KeyTable, PartitionOf
from tuner.spec.workload import KeySpec, WorkloadSpec

ID_MARK = b" kbtid="
# A record id is producer << ID_SHIFT | sequence (every engine kbt drives); a locust producer's id
# is its worker index << WORKER_SHIFT | its number in that worker's process.
ID_SHIFT = 40
SEQ_MASK = (1 << ID_SHIFT) - 1
WORKER_SHIFT = 12
ID_BYTES = len(ID_MARK) + 16
POOL_BYTES = 48 * 1024 * 1024
MAX_TABLE_KEYS = 100_000  # keys a key_shares table holds (hashed once per process)


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
    pool: list[bytes] = []
    total = 0
    for size, text in entry_texts(workload, seed):
        event = text.encode()[:size] if size > 0 else text.encode()
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
    # per workload topic, the keys that land on its partitions in its key_shares (None: uniform)
    tables: list[KeyTable | None] = field(default_factory=list)

    @classmethod
    def for_workload(
        cls, workload: WorkloadSpec, seed: int, tables: list[KeyTable | None] | None = None
    ) -> Payloads:
        """`tables`: key_tables(workload, the client's partitioner), built once per process."""
        pool = build_pool(workload, seed)
        return cls(pool, workload.keys, random.Random(seed ^ 0x5EED), tables=tables or [])

    @property
    def keyless(self) -> bool:
        return self.keys.kind == "none"

    def prefixes(self) -> list[bytes]:
        return [stamp_prefix(e) for e in self.pool]

    def stamped(self, event: bytes, record_id: int) -> tuple[bytes | None, bytes]:
        """The key and value of `event` sent as record `record_id`."""
        return self.key_for(event), with_id(event, record_id)

    def key_for(self, event: bytes, topic: int = 0) -> bytes | None:
        """The key of `event` sent to the workload's `topic`-th topic."""
        if self.keys.kind == "none":
            return None
        if self.keys.kind == "random":
            table = self.tables[topic] if topic < len(self.tables) else None
            if table is not None:
                return table.draw(self.rng)
            cardinality = self.keys.cardinality or 1_000_000
            return str(self.rng.randrange(cardinality)).encode()
        key = self.keys.key_of(event.decode("utf-8", "replace"))
        return key.encode() if key is not None else None


def key_tables(
    workload: WorkloadSpec,
    partition_of: PartitionOf | None,
    name: Callable[[int], bytes] = lambda i: str(i).encode(),
) -> list[KeyTable | None]:
    """Each topic's key table where it has key_shares and the client's partitioner hashes keys
    (keys named name(0), name(1), ...: the engine's own naming of random keys)."""
    if partition_of is None or workload.keys.kind != "random":
        return []
    cardinality = min(workload.keys.cardinality or MAX_TABLE_KEYS, MAX_TABLE_KEYS)
    return [
        None if t.key_shares is None else KeyTable.build(t.key_shares, cardinality, partition_of, name)
        for t in workload.topics
    ]
