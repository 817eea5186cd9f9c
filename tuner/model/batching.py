"""How each client kind turns a ClientProfile into request-forming rules (docs/architecture.md).

    librdkafka  one partition per ProduceRequest: a partition's batch goes when it holds
                batch.num.messages / batch.size, or its first message waited linger.ms. Keyless
                messages stick to one partition for sticky.partitioning.linger.ms (default 2 x
                linger.ms, 0 = a random partition per message) with every partitioner.
    java        one request per broker carrying the head batch of every partition it leads, sent when
                any of them is full (batch.size bytes) or waited linger.ms (default 5 ms, Kafka 4.0);
                keyless records stick to a partition until batch.size bytes went to it (KIP-794).
    filebeat    libbeat's memory queue hands the output batches of up to min(bulk_max_size,
                flush.min_events) events, waiting up to flush.timeout to fill one; Sarama then sends
                one request per broker per flush: after bulk_flush_frequency, when bulk_max_size
                events are buffered, or as soon as possible (frequency 0, up to 5 requests in flight).

Verified on the lab's librdkafka 2.16: client `req.Produce` equals the number of partition batches
(`batchcnt`) and the broker's per-partition TotalProduceRequests count even when many partitions of
one broker are ready together (random partitioner, linger 100 ms, sticky off, 24 partitions): one
partition per request (librdkafka issue #1700 is still open).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tuner.spec.filebeat_profile import filebeat_config
from tuner.spec.profile import ClientProfile

# librdkafka defaults (CONFIGURATION.md, v2.x).
RDK_LINGER_MS = 5.0
RDK_BATCH_MESSAGES = 10_000
RDK_BATCH_BYTES = 1_000_000
RDK_MESSAGE_MAX_BYTES = 1_000_000
# Java producer defaults (Kafka 4.x).
JAVA_LINGER_MS = 5.0
JAVA_BATCH_BYTES = 16_384
JAVA_MAX_REQUEST_BYTES = 1_048_576
# Per-record framing inside a v2 record batch (varints, attributes, offsets) and the batch header.
RECORD_OVERHEAD_BYTES = 12
BATCH_HEADER_BYTES = 61
# Sarama's in-flight window (Net.MaxOpenRequests 5, Filebeat does not expose it) plus the one set
# the sending goroutine holds while it waits for a slot.
SARAMA_SLOTS = 6

PartitionMode = Literal["sticky_time", "sticky_bytes", "sticky_events", "round_robin", "random", "hash"]


@dataclass(frozen=True)
class Partitioning:
    """How a producer picks partitions: for keyless records (`keyless`) and keyed ones (`keyed`)."""

    keyless: PartitionMode
    keyed: PartitionMode
    sticky_ms: float = 0.0  # sticky_time: how long a partition is kept
    sticky_events: int = 1  # sticky_events / round_robin: events per partition
    sticky_bytes: int = 0  # sticky_bytes: bytes per partition


@dataclass(frozen=True)
class LibrdkafkaRules:
    kind: Literal["librdkafka"]
    linger_ms: float
    batch_messages: int  # cap from batch.num.messages
    batch_bytes: int  # cap from batch.size and message.max.bytes
    partitioning: Partitioning
    compression: str


@dataclass(frozen=True)
class JavaRules:
    kind: Literal["java"]
    linger_ms: float
    batch_bytes: int
    max_request_bytes: int
    partitioning: Partitioning
    compression: str


@dataclass(frozen=True)
class FilebeatRules:
    kind: Literal["filebeat"]
    queue_batch: int  # events per batch the queue hands over (bulk_max_size capped by the queue)
    queue_timeout_ms: float  # how long a queue batch may wait to fill (0 = at once)
    queue_events: int  # queue.mem.events: capacity, including events in flight
    flush_ms: float  # bulk_flush_frequency (0 = as soon as possible)
    flush_messages: int  # bulk_max_size: Sarama Flush.MaxMessages per request
    max_message_bytes: int
    partitioning: Partitioning
    compression: str


Rules = LibrdkafkaRules | JavaRules | FilebeatRules


def rules_for(profile: ClientProfile) -> Rules:
    """The request-forming rules `profile` stands for (ValueError for an invalid Filebeat profile)."""
    if profile.client == "filebeat":
        return _filebeat(profile)
    if profile.client == "java":
        return _java(profile)
    return _librdkafka(profile)


def _num(conf: dict[str, str], key: str, default: float) -> float:
    raw = conf.get(key)
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        return default


def _librdkafka(profile: ClientProfile) -> LibrdkafkaRules:
    conf = profile.librdkafka_config()
    linger = _num(conf, "linger.ms", _num(conf, "queue.buffering.max.ms", RDK_LINGER_MS))
    sticky = _num(conf, "sticky.partitioning.linger.ms", 2 * linger)
    partitioner = conf.get("partitioner", "consistent_random")
    keyed: PartitionMode = "random" if partitioner == "random" else "hash"
    batch_bytes = min(
        int(_num(conf, "batch.size", RDK_BATCH_BYTES)),
        int(_num(conf, "message.max.bytes", RDK_MESSAGE_MAX_BYTES)),
    )
    return LibrdkafkaRules(
        kind="librdkafka",
        linger_ms=linger,
        batch_messages=int(_num(conf, "batch.num.messages", RDK_BATCH_MESSAGES)),
        batch_bytes=batch_bytes,
        partitioning=Partitioning(
            keyless="sticky_time" if sticky > 0 else "random", keyed=keyed, sticky_ms=sticky
        ),
        compression=conf.get("compression.type", conf.get("compression.codec", "none")),
    )


def java_properties(profile: ClientProfile) -> dict[str, str]:
    """The Java producer properties a profile sets (client-neutral knobs, then overrides)."""
    conf: dict[str, str] = {}
    if profile.linger_ms is not None:
        conf["linger.ms"] = f"{profile.linger_ms:g}"
    if profile.batch_bytes is not None:
        conf["batch.size"] = str(profile.batch_bytes)
    if profile.compression is not None:
        conf["compression.type"] = profile.compression
        if profile.compression_level is not None and profile.compression in ("gzip", "lz4", "zstd"):
            conf[f"compression.{profile.compression}.level"] = str(profile.compression_level)
    if profile.acks is not None:
        conf["acks"] = profile.acks
    if profile.idempotence is not None:
        conf["enable.idempotence"] = "true" if profile.idempotence else "false"
    if profile.max_in_flight is not None:
        conf["max.in.flight.requests.per.connection"] = str(profile.max_in_flight)
    if profile.partitioner == "random":
        conf["partitioner.class"] = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
    conf.update(profile.overrides)
    return conf


def _java(profile: ClientProfile) -> JavaRules:
    conf = java_properties(profile)
    batch = int(_num(conf, "batch.size", JAVA_BATCH_BYTES))
    round_robin = conf.get("partitioner.class", "").endswith("RoundRobinPartitioner")
    return JavaRules(
        kind="java",
        linger_ms=_num(conf, "linger.ms", JAVA_LINGER_MS),
        batch_bytes=batch,
        max_request_bytes=int(_num(conf, "max.request.size", JAVA_MAX_REQUEST_BYTES)),
        partitioning=Partitioning(
            keyless="round_robin" if round_robin else "sticky_bytes",
            keyed="round_robin" if round_robin else "hash",
            sticky_bytes=batch,
        ),
        compression=conf.get("compression.type", "none"),
    )


def _filebeat(profile: ClientProfile) -> FilebeatRules:
    config = filebeat_config(profile)
    kafka, mem = config.kafka, config.mem
    part = kafka.partition
    keyless: PartitionMode
    if part.strategy == "random":
        keyless = "sticky_events" if part.group_events > 1 else "random"
    elif part.strategy == "round_robin":
        keyless = "round_robin"
    else:
        keyless = "random"  # partition.hash without a key: a random partition per event
    keyed: PartitionMode = "hash" if part.strategy == "hash" else keyless
    return FilebeatRules(
        kind="filebeat",
        queue_batch=config.batch_events,
        queue_timeout_ms=mem.effective_flush_timeout_s * 1000,
        queue_events=mem.events,
        flush_ms=kafka.bulk_flush_frequency * 1000,
        flush_messages=kafka.bulk_max_size if kafka.bulk_max_size > 0 else config.batch_events,
        max_message_bytes=kafka.max_message_bytes,
        partitioning=Partitioning(keyless=keyless, keyed=keyed, sticky_events=part.group_events),
        compression=kafka.compression,
    )


def batch_cap(rules: LibrdkafkaRules, message_bytes: float) -> int:
    """Most messages one librdkafka partition batch holds: batch.num.messages, or as many as fit
    batch.size (uncompressed, with record framing)."""
    fit = int((rules.batch_bytes - BATCH_HEADER_BYTES) // (message_bytes + RECORD_OVERHEAD_BYTES))
    return max(1, min(rules.batch_messages, fit))
