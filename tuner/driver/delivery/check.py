"""The one delivery checker: read a run's topics back against its Ledger and judge it.

- lost: an acked record never read, once the read reached the end it was owed (the last acked
  offset of each partition, or each partition's end when the engine logged no offsets); before
  that it is unread, never lost (the verdict is then not verified);
- duplicates: a record read more than once;
- out of order: a first copy stored after a later record of the same producer in the same
  partition (a producer's sequences are in the order it sent them);
- records whose ack is unknown (a drain that timed out) are neither acked nor lost when missing.
A tailed-pods run reads while it runs (tuner.driver.tailed.readback) into the same `Marks` and is
judged here too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

from tuner.core.errors import Unreachable
from tuner.driver.delivery.ledger import MAX_SEQUENCE, Key, Ledger
from tuner.driver.delivery.read import (
    ReadClock,
    ReadDeadline,
    consume,
    high_watermarks,
    read_limits,
    verify_consumer,
)
from tuner.driver.result import DeliveryResult

KeyOf = Callable[[bytes], Key | None]
VERIFY_ATTEMPTS = 3  # a client error while reading back is retried this many times in all
STABLE_CHECKS = 3  # a topic read to its end whose ends stopped moving for this many checks is whole
CHECK_PAUSE_S = 1.0
# A sequence this far beyond the highest one read from its producer is no record of this run.
MAX_JUMP = 1 << 24
_READ = bytes([0] + [1] * 255)  # copies read -> read at all (bytes.translate)


@dataclass
class Marks:
    """What a read saw: per producer, the copies read of each sequence (capped at 255)."""

    seen: dict[int, bytearray] = field(default_factory=dict)
    # (partition, producer) -> highest sequence read; a partition is named with its topic when the
    # read spans topics (a producer's sequences alternate between them)
    highest: dict[tuple[Hashable, int], int] = field(default_factory=dict)
    distinct: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    foreign: int = 0  # records that name no record of this run

    def see(self, partition: Hashable, key: Key | None) -> bool:
        """A record read from `partition` (its number, or (topic, number)): True for its first copy."""
        if key is None:
            self.foreign += 1
            return False
        producer, seq = key
        marks = self.seen.setdefault(producer, bytearray())
        if not 0 <= seq < len(marks):
            if not 0 <= seq < min(MAX_SEQUENCE, len(marks) + MAX_JUMP):
                self.foreign += 1
                return False
            marks.extend(bytes(max(seq + 1 - len(marks), len(marks) // 2)))
        if marks[seq]:
            self.duplicates += 1
            marks[seq] = min(255, marks[seq] + 1)
            return False
        marks[seq] = 1
        self.distinct += 1
        slot = (partition, producer)
        if seq < self.highest.get(slot, -1):
            self.out_of_order += 1
        else:
            self.highest[slot] = seq
        return True

    def found(self, ledger: Ledger) -> int:
        """The ledger's acked records read at least once."""
        total = 0
        for producer, acked in ledger.acked.items():
            read = self.seen.get(producer, bytearray())[: len(acked)].translate(_READ)
            total += (int.from_bytes(acked, "little") & int.from_bytes(read, "little")).bit_count()
        return total


@dataclass(frozen=True)
class Verdict:
    acked: int  # records the ledger holds (those whose ack is unknown included)
    found: int
    unknown: int
    duplicates: int
    out_of_order: int
    complete: bool  # the read reached every end it was owed, or nothing is missing
    short: int = 0  # partitions not read to their end
    acked_by_group: dict[int, int] = field(default_factory=dict)
    missing_by_group: dict[int, int] = field(default_factory=dict)
    read_s: float | None = None
    limit_s: float | None = None

    @property
    def missing(self) -> int:
        return max(0, self.acked - self.found - self.unknown)

    def result(self, failed: int = 0, indeterminate: int = 0) -> DeliveryResult:
        return DeliveryResult(
            acked=self.acked - self.unknown,
            consumed=self.found,
            lost=self.missing if self.complete else 0,
            duplicates=self.duplicates,
            out_of_order=self.out_of_order,
            failed=failed,
            indeterminate=indeterminate,
            verified=self.complete,
            unread=0 if self.complete else self.missing,
            read_back_s=None if self.read_s is None else round(self.read_s, 3),
            read_back_limit_s=None if self.limit_s is None else round(self.limit_s, 3),
        )


def judge(
    ledger: Ledger, marks: Marks, reached_end: bool, clock: ReadClock | None = None, short: int = 0
) -> Verdict:
    """The verdict on what `marks` saw of `ledger` (`reached_end`: the read got to every end owed)."""
    acked, found = ledger.total, marks.found(ledger)
    by_group: dict[int, int] = {}
    missing_by_group: dict[int, int] = {}
    for group, producer, lo, hi in ledger.groups:
        read = marks.seen.get(producer, bytearray())[lo : hi + 1]
        by_group[group] = by_group.get(group, 0) + hi - lo + 1
        missing = hi - lo + 1 - (len(read) - read.count(0))
        if missing:
            missing_by_group[group] = missing_by_group.get(group, 0) + missing
    return Verdict(
        acked=acked,
        found=found,
        unknown=ledger.unknown,
        duplicates=marks.duplicates,
        out_of_order=marks.out_of_order,
        complete=reached_end or acked - found <= ledger.unknown,
        short=0 if reached_end else short,
        acked_by_group=by_group,
        missing_by_group=missing_by_group,
        read_s=None if clock is None else clock.elapsed_s,
        limit_s=None if clock is None else clock.limit_s,
    )


def verify(
    bootstrap: str,
    ledger: Ledger,
    key_of: KeyOf,
    deadline: ReadDeadline | None = None,
    security: Mapping[str, str] | None = None,
) -> Verdict:
    """Read the ledger's topics from the beginning to the last acked offsets (or, with none logged,
    to their ends once they stop growing) and judge what was read (`security`: the target's
    librdkafka client security). The deadline follows the volume and the read rate. A client error
    is retried (reading back is idempotent, and one slow broker answer on a busy machine should not
    cost the run); Unreachable after the last attempt."""
    from confluent_kafka import KafkaException

    for attempt in range(1, VERIFY_ATTEMPTS + 1):
        try:
            return _verify_once(bootstrap, ledger, key_of, deadline, security)
        except KafkaException as exc:
            if attempt == VERIFY_ATTEMPTS:
                raise Unreachable(
                    f"delivery verification could not read {', '.join(ledger.topics)} back"
                    f" ({VERIFY_ATTEMPTS} attempts): {exc.args[0].str() if exc.args else exc}"
                ) from None
            time.sleep(2.0 * attempt)
    raise AssertionError("unreachable")


def _verify_once(
    bootstrap: str,
    ledger: Ledger,
    key_of: KeyOf,
    deadline: ReadDeadline | None,
    security: Mapping[str, str] | None,
) -> Verdict:
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    marks = Marks()
    if ledger.total == 0:
        return judge(ledger, marks, reached_end=True)
    consumer = verify_consumer(bootstrap, security)
    clock = (deadline or ReadDeadline()).start(ledger.total)
    position: dict[tuple[str, int], int] = {}
    limits: dict[tuple[str, int], int] = {}
    reached = False
    try:
        partitions = list(ledger.last_offsets) or [
            (topic, p)
            for topic in ledger.topics
            for p in consumer.list_topics(topic, timeout=10).topics[topic].partitions
        ]
        consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in partitions])
        stable, last = 0, None
        while not clock.expired():
            limits = (
                read_limits(consumer, ledger.last_offsets)
                if ledger.last_offsets
                else high_watermarks(consumer, partitions)
            )
            reached = _read_to(consumer, limits, position, marks, key_of, clock)
            if not reached or ledger.last_offsets or ledger.total - marks.found(ledger) <= ledger.unknown:
                break
            stable = stable + 1 if limits == last else 0
            if stable >= STABLE_CHECKS:  # the log will not grow: what is missing is lost
                break
            last = limits
            time.sleep(CHECK_PAUSE_S)
    finally:
        consumer.close()
    short = sum(1 for tp, limit in limits.items() if position.get(tp, -1) < limit)
    return judge(ledger, marks, reached, clock, short)


def _read_to(
    consumer: object,
    limits: dict[tuple[str, int], int],
    position: dict[tuple[str, int], int],
    marks: Marks,
    key_of: KeyOf,
    clock: ReadClock,
) -> bool:
    """Consume until every partition's position reaches its limit (True) or the clock expires."""
    while any(position.get(tp, -1) < limit for tp, limit in limits.items()):
        if clock.expired():
            return False
        batch = consume(consumer, 2000)
        for msg in batch:
            where, value = (msg.topic() or "", msg.partition() or 0), msg.value()
            if value is not None:
                marks.see(where, key_of(value))
            position[where] = msg.offset() or 0
        clock.progress(clock.read + len(batch))
    return True
