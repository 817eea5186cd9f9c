"""Read-back limits and per-partition order for delivery verification (docs/architecture.md).

Order: every producer's records must appear in each partition in the order it sent them. The record
id says who sent it and when (librdkafka engine: producer << 40 | sequence); a first copy whose
sequence is below one already read from the same producer in the same partition is out of order.
Duplicates (second copies) are counted as duplicates, not again as disorder.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tuner.driver.payload import ID_SHIFT, SEQ_MASK

OrderOf = Callable[[str], tuple[int, int] | None]  # record id -> (producer, sequence)

HIGH_WATERMARK_WAIT_S = 10.0


def librdkafka_order(ident: str) -> tuple[int, int] | None:
    try:
        rid = int(ident, 16)
    except ValueError:
        return None
    return rid >> ID_SHIFT, rid & SEQ_MASK


class PartitionOrder:
    def __init__(self, order_of: OrderOf) -> None:
        self.order_of = order_of
        self.highest: dict[tuple[int, int], int] = {}  # (partition, producer) -> highest sequence read
        self.out_of_order = 0

    def see(self, partition: int, ident: str) -> None:
        """A first copy of record `ident`, read from `partition` (in offset order)."""
        key = self.order_of(ident)
        if key is None:
            return
        producer, seq = key
        slot = (partition, producer)
        if seq < self.highest.get(slot, -1):
            self.out_of_order += 1
        else:
            self.highest[slot] = seq


def read_limits(consumer: Any, topic: str, last_acked: dict[int, int]) -> dict[int, int]:
    """The offset to read up to in each partition: its last acked offset, or the last offset the log
    holds when that is lower (a log truncated behind acked records: acks=1 and a lost leader). -1
    when the partition holds nothing to read. Waits a little for the high watermark to catch up
    (acks=1 acknowledges before the followers have the records)."""
    from confluent_kafka import KafkaException, TopicPartition

    limits: dict[int, int] = {}
    deadline = time.monotonic() + HIGH_WATERMARK_WAIT_S
    for partition, last in last_acked.items():
        while True:
            try:  # a new leader answers OFFSET_NOT_AVAILABLE until its high watermark catches up
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            except KafkaException:
                low, high = -1, -1
            if high > last or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if high < 0:  # no answer: read up to the last acked offset, as if nothing was truncated
            limits[partition] = last
        else:
            limits[partition] = min(last, high - 1) if high > low else -1
    return limits
