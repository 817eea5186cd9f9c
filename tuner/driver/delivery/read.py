"""Reading a run's topics back for delivery verification (tuner.driver.delivery.check): the consumer,
how far each partition is read, and the deadline that follows the volume and the read rate."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tuner.core.kafka_clients import Connection, new_consumer
from tuner.spec.thresholds import THRESHOLDS

HIGH_WATERMARK_WAIT_S = 10.0


def verify_consumer(bootstrap: str, security: Mapping[str, str] | None = None) -> Any:
    """A consumer in a group of its own that reads from the beginning and commits nothing
    (`security`: the target's librdkafka client security)."""
    return new_consumer(
        Connection(bootstrap, security or {}),
        {
            "group.id": f"kbt-verify-{uuid.uuid4().hex[:12]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        },
    )


def consume(consumer: Any, batch: int) -> list[Any]:
    """Up to `batch` records within a second. End-of-partition events are skipped (the high
    watermark may still trail the last acked offset); any other error is raised."""
    from confluent_kafka import KafkaError, KafkaException

    records = []
    for msg in consumer.consume(num_messages=batch, timeout=1.0):
        err = msg.error()
        if err is None:
            records.append(msg)
        elif err.code() != KafkaError._PARTITION_EOF:
            raise KafkaException(err)
    return records


@dataclass(frozen=True)
class ReadDeadline:
    """How long a read-back may take (thresholds.yml `read_back_*`): it follows the volume and the
    measured read rate, so a large run reaches a verdict and a stalled one ends. A read-back that
    ends before the last acked record leaves the rest unread, never lost."""

    min_s: float = THRESHOLDS.read_back_min_s
    floor_per_s: float = THRESHOLDS.read_back_floor_per_s
    stall_s: float = THRESHOLDS.read_back_stall_s
    max_s: float = THRESHOLDS.read_back_max_s

    def start(self, expected: int) -> ReadClock:
        """A clock for reading `expected` records, started now."""
        return ReadClock(self, max(0, expected))


class ReadClock:
    """One read-back's deadline: reported progress moves it out to the projected end."""

    PROJECTION_MARGIN = 1.5  # the projected time left, and half again (a busy machine reads unevenly)

    def __init__(
        self, rule: ReadDeadline, expected: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rule, self._clock = rule, clock
        self.expected = expected
        self.started = self._last_progress = clock()
        self.read = 0
        self._cap = self.started + rule.max_s
        self.deadline = min(self._cap, self.started + max(rule.min_s, expected / rule.floor_per_s))

    def progress(self, read: int) -> None:
        """`read` records read so far."""
        now = self._clock()
        if read > self.read:
            self.read, self._last_progress = read, now
        elapsed = now - self.started
        if self.read > 0 and elapsed > 0:
            left_s = max(0, self.expected - self.read) / (self.read / elapsed)
            self.deadline = min(self._cap, max(self.deadline, now + self.PROJECTION_MARGIN * left_s))

    def expired(self) -> bool:
        now = self._clock()
        return now >= self.deadline or now - self._last_progress >= self._rule.stall_s

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self.started

    @property
    def limit_s(self) -> float:
        """The deadline as it stands, from the start."""
        return self.deadline - self.started


def read_limits(consumer: Any, last_acked: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """The offset to read up to in each partition: its last acked offset, or the last offset the log
    holds when that is lower (a log truncated behind acked records: acks=1 and a lost leader). -1
    when the partition holds nothing to read. Waits a little for the high watermark to catch up
    (acks=1 acknowledges before the followers have the records)."""
    from confluent_kafka import KafkaException, TopicPartition

    limits: dict[tuple[str, int], int] = {}
    deadline = time.monotonic() + HIGH_WATERMARK_WAIT_S
    for (topic, partition), last in last_acked.items():
        while True:
            try:  # a new leader answers OFFSET_NOT_AVAILABLE until its high watermark catches up
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            except KafkaException:
                low, high = -1, -1
            if high > last or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if high < 0:  # no answer: read up to the last acked offset, as if nothing was truncated
            limits[(topic, partition)] = last
        else:
            limits[(topic, partition)] = min(last, high - 1) if high > low else -1
    return limits


def high_watermarks(consumer: Any, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Each partition's last offset a reader may see; -1 when it holds nothing to read, also a log
    whose records were all deleted (its low watermark at its high one), as `read_limits` says."""
    from confluent_kafka import TopicPartition

    ends: dict[tuple[str, int], int] = {}
    for t, p in partitions:
        low, high = consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10)
        ends[(t, p)] = int(high) - 1 if high > low else -1
    return ends
