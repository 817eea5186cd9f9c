"""Delivery verification without a delivery report per record (the librdkafka engine's closed loop).

At max rate a Python callback per acked record costs the driver about as much CPU as producing the
record, so the closed loop asks librdkafka for error reports only (`delivery.report.only.error`).
Every record id is `producer << 40 | sequence` and a producer's sequences are dense, so what was
acked is known without reports: every sequence a producer handed to produce(), less the failed ids
(reported) and the records still queued when the drain timed out (indeterminate).

Each producing process writes one `RangeFile` per topic. `verify_ranges` reads every partition of
the topic from the beginning up to its high watermark (waiting while it still moves: acks=1
acknowledges before the followers have the records), marks each id read in a bitmap per producer,
and counts: lost = acked ids never read (once the read reached every partition's end; before that they
are unread), duplicates = ids read more than once, out of order = first
copies stored after a later record of the same producer in the same partition (as acked_verify does
for engines that log every acked offset).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tuner.driver.payload import ID_SHIFT, SEQ_MASK
from tuner.driver.read_back import ReadDeadline, consume, verify_consumer
from tuner.driver.result import DeliveryResult

ID_HEX = 16
STABLE_CHECKS = 3  # the high watermarks stopped moving for this many checks: nothing more will come
CHECK_PAUSE_S = 1.0


@dataclass
class RangeFile:
    """One process's records of one topic: producer p sent sequences k, k + n, k + 2n, ... below
    produced[p] to this topic (k = the topic's index, n = the number of topics)."""

    topic_index: int
    topics: int
    produced: dict[int, int] = field(default_factory=dict)  # producer -> sequences handed to produce()
    failed: list[int] = field(default_factory=list)  # record ids reported failed (this topic's)

    def write(self, path: Path) -> None:
        data = {
            "topic_index": self.topic_index,
            "topics": self.topics,
            "produced": {str(p): n for p, n in self.produced.items()},
            "failed": self.failed,
        }
        path.write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> RangeFile:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            topic_index=int(data["topic_index"]),
            topics=int(data["topics"]),
            produced={int(p): int(n) for p, n in data["produced"].items()},
            failed=[int(r) for r in data["failed"]],
        )


@dataclass
class _Tally:
    seen: dict[int, bytearray]  # producer -> 0/1/2+ per sequence read (capped at 255)
    duplicates: int = 0
    out_of_order: int = 0
    foreign: int = 0  # records whose id names no producer of this run
    highest: dict[tuple[int, int], int] = field(default_factory=dict)  # (partition, producer) -> seq

    def see(self, partition: int, value: bytes) -> None:
        try:
            rid = int(value[-ID_HEX:], 16)
        except ValueError:
            self.foreign += 1
            return
        producer, seq = rid >> ID_SHIFT, rid & SEQ_MASK
        marks = self.seen.get(producer)
        if marks is None or seq >= len(marks):
            self.foreign += 1
            return
        if marks[seq]:
            self.duplicates += 1
            return
        marks[seq] = 1
        slot = (partition, producer)
        if seq < self.highest.get(slot, -1):
            self.out_of_order += 1
        else:
            self.highest[slot] = seq


def verify_ranges(
    bootstrap: str,
    topic: str,
    files: Iterable[Path],
    indeterminate: int = 0,
    deadline: ReadDeadline | None = None,
    security: Mapping[str, str] | None = None,
) -> DeliveryResult:
    """Read `topic` back and compare with the ranges every process sent to it. `indeterminate`
    records (queued when the drain timed out) are not counted as lost when they are missing. A
    read-back that ends before the end of every partition (its deadline passed) counts what it did
    not read as unread, not lost: ids carry no partition, so no partition's loss can be told apart."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    ranges = [RangeFile.read(p) for p in files if p.is_file()]
    produced: dict[int, int] = {}
    failed: set[int] = set()
    index = topics = 0
    for r in ranges:
        produced.update(r.produced)
        failed.update(r.failed)
        index, topics = r.topic_index, r.topics
    expected = sum(len(range(index, n, topics)) for n in produced.values()) if topics else 0
    if expected == 0:
        return DeliveryResult(failed=len(failed), indeterminate=indeterminate, verified=True)
    tally = _Tally(seen={p: bytearray(n) for p, n in produced.items()})
    consumer = verify_consumer(bootstrap, security)
    clock = (deadline or ReadDeadline()).start(expected)
    verified = False
    read = 0
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        partitions = sorted(meta.partitions)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        position = {p: 0 for p in partitions}  # next offset to read
        stable, last_ends = 0, None
        while not clock.expired():
            ends = {p: _end(consumer, TopicPartition(topic, p)) for p in partitions}
            while any(position[p] < ends[p] for p in partitions) and not clock.expired():
                for msg in consume(consumer, 5000):
                    partition, value = msg.partition() or 0, msg.value()
                    if value is not None:
                        tally.see(partition, value)
                    position[partition] = (msg.offset() or 0) + 1
                    read += 1
                clock.progress(read)
            if all(position[p] >= ends[p] for p in partitions):
                if _missing(tally, produced, failed, index, topics) <= indeterminate:
                    verified = True
                    break
                stable = stable + 1 if ends == last_ends else 0
                if stable >= STABLE_CHECKS:  # the log will not grow: what is missing is lost
                    verified = True
                    break
                last_ends = ends
                time.sleep(CHECK_PAUSE_S)
    finally:
        consumer.close()
    missing = max(0, _missing(tally, produced, failed, index, topics) - indeterminate)
    acked = expected - len(failed) - indeterminate
    return DeliveryResult(
        acked=max(0, acked),
        consumed=expected - _unread(tally, produced, index, topics),
        lost=missing if verified else 0,
        duplicates=tally.duplicates,
        out_of_order=tally.out_of_order,
        failed=len(failed),
        indeterminate=indeterminate,
        verified=verified,
        unread=0 if verified else missing,
        read_back_s=round(clock.elapsed_s, 3),
        read_back_limit_s=round(clock.limit_s, 3),
    )


def _end(consumer: object, partition: object) -> int:
    """The partition's high watermark (the offset after the last record a reader may see)."""
    _, high = consumer.get_watermark_offsets(partition, timeout=10)  # type: ignore[attr-defined]
    return int(high)


def _unread(tally: _Tally, produced: dict[int, int], index: int, topics: int) -> int:
    """This topic's sequences never read."""
    return sum(tally.seen[p][index::topics].count(0) for p in produced)


def _missing(tally: _Tally, produced: dict[int, int], failed: set[int], index: int, topics: int) -> int:
    """Sequences never read that were not reported failed."""
    failed_unread = sum(
        1
        for rid in failed
        if (rid >> ID_SHIFT) in tally.seen
        and (rid & SEQ_MASK) < len(tally.seen[rid >> ID_SHIFT])
        and not tally.seen[rid >> ID_SHIFT][rid & SEQ_MASK]
    )
    return _unread(tally, produced, index, topics) - failed_unread
