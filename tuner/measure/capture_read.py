"""A live cluster read for `kbt capture`, and nothing written to it: topics and their partition
leaders (admin metadata), each partition's end offset (ListOffsets), and the newest records of a
topic read by a consumer that is assign()ed its partitions (no subscribe, so no group is joined;
no commits, no stored offsets): sizes and keys kept, values only when asked.

    topics, broker_ids = describe_topics(conn)
    ends = end_offsets(conn, topics)
    sample = sample_topic(conn, topic, per_partition=200, timeout_s=5)
"""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import OffsetSpec

from tuner.core.errors import Unreachable
from tuner.core.kafka_clients import Connection, admin_client, metadata, new_consumer
from tuner.measure.distinct_count import DistinctKeys

METADATA_TIMEOUT_S = 15.0
MAX_SAMPLE_PARTITIONS = 64  # partitions a topic's sample reads (its first ones)
MAX_PAYLOAD_BYTES = 4096  # a kept payload is cut to this many bytes
# The consumer that samples: no group is joined (assign only), nothing is committed or stored;
# librdkafka still wants a group.id to build a consumer at all.
_SAMPLER = {
    "group.id": "kbt-capture-sample",
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "latest",
    "enable.partition.eof": True,
    "log_level": 0,
}
# librdkafka logs every failed connect and a purged queue at close: the one-line error says what matters.
_QUIET = {"log_level": 0}


def describe_topics(conn: Connection) -> tuple[list[dict[str, Any]], list[int]]:
    """(each topic that is not internal: name, partitions, replication factor, leaders; the
    cluster's broker ids, sorted); Unreachable when the cluster does not answer."""
    try:
        meta = metadata(admin_client(conn, _QUIET), METADATA_TIMEOUT_S)
    except Unreachable as exc:
        raise Unreachable(f"{conn.bootstrap_servers}: {exc.message}") from None
    topics: list[dict[str, Any]] = []
    for name, topic in sorted(meta.topics.items()):
        if name.startswith("__") or topic.error is not None or not topic.partitions:
            continue
        parts = [topic.partitions[p] for p in sorted(topic.partitions)]
        topics.append(
            {
                "name": name,
                "partitions": len(parts),
                "replication_factor": max(len(p.replicas) for p in parts),
                "leaders": [p.leader for p in parts],
            }
        )
    ids = _topic_ids(conn, [str(t["name"]) for t in topics])
    for t in topics:
        t["topic_id"] = ids.get(str(t["name"]), "")
    return topics, sorted(meta.brokers)


def _topic_ids(conn: Connection, names: list[str]) -> dict[str, str]:
    """Each topic's id as Kafka prints it (produce requests v13+ name topics by id, KIP-516); a
    topic that does not answer has none (its requests then count under no topic)."""
    if not names:
        return {}
    admin = admin_client(conn, _QUIET)  # held while its futures resolve
    ids = {}
    for name, future in admin.describe_topics(
        TopicCollection(names), request_timeout=METADATA_TIMEOUT_S
    ).items():
        try:
            ids[name] = kafka_topic_id(str(future.result(timeout=METADATA_TIMEOUT_S * 2).topic_id))
        except (KafkaException, TimeoutError):
            continue
    return ids


def kafka_topic_id(text: str) -> str:
    """A topic id as Kafka prints it (Uuid.toString: URL-safe base64, no padding); the Python
    client prints the standard alphabet, so an id with a `+` or `/` would match no logged request."""
    return text.replace("+", "-").replace("/", "_").rstrip("=")


def end_offsets(conn: Connection, topics: list[dict[str, Any]]) -> dict[str, list[int | None]]:
    """Each topic's end offset per partition (None for a partition that does not answer: it then
    counts 0 over the window, see appended)."""
    wanted = {
        TopicPartition(t["name"], p): OffsetSpec.latest() for t in topics for p in range(t["partitions"])
    }
    ends: dict[str, list[int | None]] = {t["name"]: [None] * t["partitions"] for t in topics}
    if not wanted:
        return ends
    admin = admin_client(conn, _QUIET)  # held while its futures resolve: a collected client never answers
    futures = admin.list_offsets(wanted, request_timeout=METADATA_TIMEOUT_S)
    for tp, future in futures.items():
        try:
            ends[tp.topic][tp.partition] = max(0, future.result(timeout=METADATA_TIMEOUT_S * 2).offset)
        except (KafkaException, TimeoutError):
            continue
    return ends


def appended(first: list[int | None] | None, last: list[int | None]) -> list[int]:
    """Records each partition took between two end-offset reads; a topic absent from the first
    (created inside the window) starts at 0; a partition either read missed counts 0."""
    start: list[int | None] = list(first) if first is not None else [0] * len(last)
    start += [0] * (len(last) - len(start))  # partitions added inside the window start at 0
    return [0 if a is None or b is None else max(0, b - a) for a, b in zip(start, last, strict=False)]


def sample_topic(
    conn: Connection, topic: str, partitions: int, per_partition: int, timeout_s: float, payloads: bool
) -> dict[str, Any]:
    """The newest `per_partition` records of each of the topic's first partitions, read within
    `timeout_s`: a tuner.store.capture.TopicSample's fields."""
    consumer = new_consumer(conn, _SAMPLER)
    try:
        starts = []
        for p in range(min(partitions, MAX_SAMPLE_PARTITIONS)):
            try:
                tp = TopicPartition(topic, p)
                low, high = consumer.get_watermark_offsets(tp, timeout=METADATA_TIMEOUT_S)
            except KafkaException:  # deleted or moved since the metadata was read: nothing to sample
                continue
            if high > low:
                starts.append(TopicPartition(topic, p, max(low, high - per_partition)))
        if starts:
            consumer.assign(starts)
        return _read(consumer, topic, len(starts), per_partition, timeout_s, payloads)
    finally:
        consumer.close()


def _read(
    consumer: Consumer, topic: str, partitions: int, per_partition: int, timeout_s: float, payloads: bool
) -> dict[str, Any]:
    """The sample of the `partitions` assigned, up to `per_partition` records each."""
    sample: dict[str, Any] = {
        "topic": topic,
        "value_bytes": [],
        "key_bytes": [],
        "keyless": 0,
        "payloads": [],
    }
    keys = DistinctKeys()  # 8 bytes a key, not the key
    read_from: set[int] = set()  # partitions that gave at least one record
    deadline = time.monotonic() + timeout_s
    # A partition reports its end each time it catches up: on a topic still written to, one
    # partition can report it many times, so the ends are counted by partition, once each.
    ended: set[int] = set()
    read = 0
    while read < partitions * per_partition and len(ended) < partitions and time.monotonic() < deadline:
        for msg in consumer.consume(500, timeout=min(1.0, max(0.05, deadline - time.monotonic()))):
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    ended.add(msg.partition() or 0)
                continue
            read += 1
            read_from.add(msg.partition() or 0)
            value, key = msg.value() or b"", msg.key()
            sample["value_bytes"].append(len(value))
            if key is None:
                sample["keyless"] += 1
            else:
                sample["key_bytes"].append(len(key))
                keys.add(key)
            if payloads:
                sample["payloads"].append(value[:MAX_PAYLOAD_BYTES].hex())
    sample["distinct_keys"] = keys.count
    sample["partitions_read"] = len(read_from)
    return sample
