"""Delivery verification from an engine's acked-records files (docs/architecture.md).

Each line is `partition offset id`. The topic is read back up to the last acked offset of every
partition; lost = acked ids never read from a partition read to its end (unread while the
read-back had not got there when its deadline passed), duplicates = ids read more than once, out of
order = first copies stored after a later record of the same producer in the same partition.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from tuner.core.errors import Unreachable
from tuner.driver.order_check import OrderOf, PartitionOrder, read_limits
from tuner.driver.read_back import ReadDeadline, consume, verify_consumer
from tuner.driver.result import DeliveryResult

IdOf = Callable[[bytes], str | None]
# A client timeout while reading back is retried this many times in all.
VERIFY_ATTEMPTS = 3


def read_acked(paths: Iterable[Path]) -> tuple[dict[int, int], dict[str, int]]:
    """Last acked offset per partition, and each acked id's partition."""
    last: dict[int, int] = {}
    ids: dict[str, int] = {}
    for path in paths:
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) != 3:
                    continue
                partition, offset = int(parts[0]), int(parts[1])
                if offset >= 0:
                    last[partition] = max(last.get(partition, -1), offset)
                ids[parts[2]] = partition
    return last, ids


def verify_acked(
    bootstrap: str,
    topic: str,
    acked_files: Iterable[Path],
    id_of: IdOf,
    failed: int = 0,
    indeterminate: int = 0,
    deadline: ReadDeadline | None = None,
    order_of: OrderOf | None = None,
    security: Mapping[str, str] | None = None,
) -> DeliveryResult:
    """Consume `topic` up to the last acked offsets (or the end of a log truncated behind them) and
    compare ids with the acked ones; with `order_of`, count records out of per-partition order. An
    acked id missing from a partition the read-back finished is lost; one in a partition it had not
    finished when its deadline passed is unread (the result is then not verified)."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    last, acked = read_acked(acked_files)
    if not acked:
        return DeliveryResult(failed=failed, indeterminate=indeterminate, verified=True)
    consumer = verify_consumer(bootstrap, security)
    seen: Counter[str] = Counter()
    order = PartitionOrder(order_of) if order_of is not None else None
    read = 0
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in last])
        remaining = {p: offset for p, offset in read_limits(consumer, topic, last).items() if offset >= 0}
        clock = (deadline or ReadDeadline()).start(sum(offset + 1 for offset in remaining.values()))
        while remaining and not clock.expired():
            for msg in consume(consumer, 1000):
                read += 1
                partition = msg.partition() or 0
                value = msg.value()
                if value is not None:
                    ident = id_of(value)
                    if ident is not None:
                        seen[ident] += 1
                        if order is not None and seen[ident] == 1:
                            order.see(partition, ident)
                offset = msg.offset()
                if offset is not None and offset >= remaining.get(partition, 1 << 62):
                    remaining.pop(partition, None)
            clock.progress(read)
    finally:
        consumer.close()
    missing = [partition for ident, partition in acked.items() if ident not in seen]
    unread = sum(1 for partition in missing if partition in remaining)
    duplicates = sum(n - 1 for n in seen.values() if n > 1)
    return DeliveryResult(
        acked=len(acked),
        consumed=sum(1 for i in seen if i in acked),
        lost=len(missing) - unread,
        duplicates=duplicates,
        out_of_order=order.out_of_order if order is not None else 0,
        failed=failed,
        indeterminate=indeterminate,
        verified=not remaining,
        unread=unread,
        read_back_s=round(clock.elapsed_s, 3),
        read_back_limit_s=round(clock.limit_s, 3),
    )


def filebeat_event_id(value: bytes) -> str | None:
    """The `kbt.id` the Sarama engine puts at the end of every event document."""
    marker = value.rfind(b'"kbt":{"id":"')
    if marker < 0:
        return None
    start = marker + len(b'"kbt":{"id":"')
    end = value.find(b'"', start)
    return value[start:end].decode() if end > start else None


def verify_read_back(
    bootstrap: str,
    topic: str,
    acked_files: list[Path],
    id_of: IdOf,
    failed: int,
    indeterminate: int,
    order_of: OrderOf | None = None,
    security: Mapping[str, str] | None = None,
) -> DeliveryResult:
    """verify_acked, again on a client timeout: reading back is idempotent, and one slow broker
    answer on a busy machine should not cost the run (Unreachable after the last attempt)."""
    from confluent_kafka import KafkaException

    for attempt in range(1, VERIFY_ATTEMPTS + 1):
        try:
            return verify_acked(
                bootstrap,
                topic,
                acked_files,
                id_of,
                failed=failed,
                indeterminate=indeterminate,
                order_of=order_of,
                security=security,
            )
        except KafkaException as exc:
            if attempt == VERIFY_ATTEMPTS:
                raise Unreachable(
                    f"delivery verification could not read {topic} back ({VERIFY_ATTEMPTS} attempts):"
                    f" {exc.args[0].str() if exc.args else exc}"
                ) from None
            time.sleep(2.0 * attempt)
    raise AssertionError("unreachable")
