"""Delivery reports of one producing process, recorded cheaply on the hot path.

The confluent-kafka delivery callback runs once per record inside `poll(0)`, on the thread that
also produces, so every instruction in it costs throughput. `DeliveryLog.callback` only appends
the record id (read back from the value's `kbtid=` tail), partition, offset and one time figure to
flat arrays; the per-record accounting (measured window, latency, bytes) happens later in the
owner's digest, and `write_acked` writes the (partition, offset, id) lines delivery verification
reads.

The time figure (`marks`) depends on the schedule:
- `OPEN` (fixed rate): the wall-clock time the ack was seen; latency = that - the intended send
  time the owner derives from the record id, so a stalled client is not hidden (no coordinated
  omission);
- `CLOSED` (max rate): librdkafka's per-record latency, from the produce() call to this report.

Latencies are kept in `LatencyBuckets` (tuner.driver.latency_buckets).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path

from confluent_kafka import KafkaError, Message

OPEN, CLOSED = "open", "closed"
ID_HEX = 16  # a record value ends with its id as 16 hex digits (tuner.driver.payload)

DeliveryCallback = Callable[[KafkaError | None, Message], None]


class DeliveryLog:
    """Acked and failed records of one process, in arrays (a few dozen bytes per record)."""

    def __init__(self, mode: str) -> None:
        if mode not in (OPEN, CLOSED):
            raise ValueError(f"mode must be {OPEN!r} or {CLOSED!r}, not {mode!r}")
        self.mode = mode
        self.rids = array("Q")  # acked record ids, in report order
        self.partitions = array("l")
        self.offsets = array("q")
        self.marks = array("d")  # time figure of the acked records not yet digested
        self.failed_rids = array("Q")
        self.failed_errors: dict[str, int] = {}  # error name -> count
        self.digested = 0  # acked records already digested (marks holds the rest)
        self.failed_digested = 0

    def callback(self) -> DeliveryCallback:
        """The `on_delivery` callback for every producer of the process (one closure, no per-record
        allocation beyond the report itself)."""
        rids, partitions, offsets = self.rids.append, self.partitions.append, self.offsets.append
        marks, failed_rids, errors = self.marks.append, self.failed_rids.append, self.failed_errors
        now = time.time
        open_loop = self.mode == OPEN

        def delivered(err: KafkaError | None, msg: Message) -> None:
            value = msg.value()
            if value is None:  # not one of ours
                return
            if err is None:
                rids(int(value[-ID_HEX:], 16))
                partitions(msg.partition() or 0)
                offset = msg.offset()
                offsets(-1 if offset is None else offset)
                marks(now() if open_loop else (msg.latency() or 0.0))
            else:
                failed_rids(int(value[-ID_HEX:], 16))
                name = err.name()
                errors[name] = errors.get(name, 0) + 1

        return delivered

    def add_acked(self, rid: int, partition: int, offset: int) -> None:
        """One acked record whose timing the caller accounts itself (no mark kept)."""
        self.rids.append(rid)
        self.partitions.append(partition)
        self.offsets.append(offset)
        self.digested = len(self.rids)

    def add_failed(self, rid: int, error: str) -> None:
        """One failed record whose timing the caller accounts itself (no mark kept)."""
        self.failed_rids.append(rid)
        self.failed_errors[error] = self.failed_errors.get(error, 0) + 1
        self.failed_digested = len(self.failed_rids)

    def take(self) -> tuple[Sequence[int], Sequence[float], Sequence[int]]:
        """The acked ids and marks and the failed ids not yet digested; marks are then dropped."""
        taken = self.rids[self.digested :], self.marks[:], self.failed_rids[self.failed_digested :]
        self.digested, self.failed_digested = len(self.rids), len(self.failed_rids)
        del self.marks[:]
        return taken

    @property
    def acked_total(self) -> int:
        return len(self.rids)

    @property
    def failed_total(self) -> int:
        return len(self.failed_rids)

    def write_acked(self, directory: Path, index: int, topic_of: Callable[[int], str]) -> dict[str, str]:
        """One `partition offset id` file per topic (the id's topic from `topic_of(rid)`)."""
        lines: dict[str, list[str]] = {}
        for p, o, rid in zip(self.partitions, self.offsets, self.rids, strict=True):
            lines.setdefault(topic_of(rid), []).append(f"{p} {o} {rid:016x}\n")
        files: dict[str, str] = {}
        for topic, rows in lines.items():
            path = directory / f"acked-{index}-{topic}.txt"
            path.write_text("".join(rows), encoding="utf-8")
            files[topic] = str(path)
        return files
