"""librdkafka (confluent-kafka): properties, one partition batch per produce request.

A partition's batch goes when it holds batch.num.messages / batch.size, or its first message
waited linger.ms. Keyless messages stick to one partition for sticky.partitioning.linger.ms
(default 2 x linger.ms, 0 = a random partition per message) with every partitioner. Verified on the
lab's librdkafka 2.16: client `req.Produce` equals the number of partition batches (`batchcnt`) even
when many partitions of one broker are ready together (librdkafka issue #1700 is still open).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tuner.spec.clients.base import (
    Family,
    Rendered,
    SearchContext,
    check_fields,
    kept_durability,
    name_of,
    num,
    properties_text,
)
from tuner.spec.clients.rules import LibrdkafkaRules, Partitioning, PartitionMode
from tuner.spec.profile import ClientProfile

# librdkafka defaults (CONFIGURATION.md, v2.x).
LINGER_MS = 5.0
BATCH_MESSAGES = 10_000
BATCH_BYTES = 1_000_000
MESSAGE_MAX_BYTES = 1_000_000
_PARTITIONER = {"random": "random", "sticky": "consistent_random", "hash": "murmur2_random"}
PRODUCER_FIELDS = frozenset(
    {"linger_ms", "batch_messages", "batch_bytes", "compression", "compression_level", "acks",
     "idempotence", "partitioner", "max_in_flight", "overrides"}
)  # fmt: skip


class Librdkafka:
    name = "librdkafka"
    title = "librdkafka"
    engine = "librdkafka"
    fields = PRODUCER_FIELDS
    codecs: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")
    multi_partition_requests = False

    def check(self, profile: ClientProfile) -> None:
        check_fields(self, profile, {"filebeat": " (give librdkafka properties as knobs or overrides)"})

    def client_settings(self, profile: ClientProfile) -> dict[str, str]:
        conf: dict[str, str] = {}
        if profile.linger_ms is not None:
            conf["linger.ms"] = f"{profile.linger_ms:g}"
        if profile.batch_messages is not None:
            conf["batch.num.messages"] = str(profile.batch_messages)
        if profile.batch_bytes is not None:
            conf["batch.size"] = str(profile.batch_bytes)
        if profile.compression is not None:
            conf["compression.type"] = profile.compression
        if profile.compression_level is not None:
            conf["compression.level"] = str(profile.compression_level)
        if profile.acks is not None:
            conf["acks"] = "-1" if profile.acks == "all" else profile.acks
        if profile.idempotence is not None:
            conf["enable.idempotence"] = "true" if profile.idempotence else "false"
        if profile.partitioner != "default":
            conf["partitioner"] = _PARTITIONER[profile.partitioner]
            if profile.partitioner in ("sticky", "hash"):
                linger = profile.linger_ms if profile.linger_ms is not None else LINGER_MS
                conf["sticky.partitioning.linger.ms"] = str(max(1, round(2 * linger)))
        if profile.max_in_flight is not None:
            conf["max.in.flight.requests.per.connection"] = str(profile.max_in_flight)
        conf.update(profile.overrides)
        return conf

    def rules(self, profile: ClientProfile) -> LibrdkafkaRules:
        conf = self.client_settings(profile)
        linger = num(conf, "linger.ms", num(conf, "queue.buffering.max.ms", LINGER_MS))
        sticky = num(conf, "sticky.partitioning.linger.ms", 2 * linger)
        keyed: PartitionMode = "random" if conf.get("partitioner") == "random" else "hash"
        return LibrdkafkaRules(
            kind=self.name,
            linger_ms=linger,
            batch_messages=int(num(conf, "batch.num.messages", BATCH_MESSAGES)),
            batch_bytes=min(
                int(num(conf, "batch.size", BATCH_BYTES)),
                int(num(conf, "message.max.bytes", MESSAGE_MAX_BYTES)),
            ),
            partitioning=Partitioning(
                keyless="sticky_time" if sticky > 0 else "random", keyed=keyed, sticky_ms=sticky
            ),
            compression=conf.get("compression.type", conf.get("compression.codec", "none")),
        )

    def render(self, profile: ClientProfile, header: Sequence[str]) -> Rendered:
        return Rendered(f"{self.name}.properties", properties_text(self.client_settings(profile), header))

    def check_fits(self, profile: ClientProfile, topic_max_bytes: int, event_bytes: int | None) -> None:
        check_batch_bytes(profile, topic_max_bytes)

    def describe(self, profile: ClientProfile) -> str:
        return describe_producer(self.name, profile)

    def families(self, ctx: SearchContext) -> list[Family]:
        partitioner = "sticky" if ctx.keyless else (ctx.base.partitioner if ctx.base else "hash")
        batch_bytes = min(BATCH_BYTES, ctx.topic_max_bytes, ctx.max_request_bytes or BATCH_BYTES)
        keep = kept_durability(ctx.base, self)

        def make(linger: float, codec: str) -> ClientProfile:
            return ClientProfile(
                name=name_of(self.name, codec, linger),
                client=self.name,
                linger_ms=round(linger),
                batch_messages=BATCH_MESSAGES,
                batch_bytes=batch_bytes,
                compression=codec,
                partitioner=partitioner,
                **keep,
            )

        return [Family(f"{partitioner} partitioning, linger", make, ctx.budget_ms)]

    def upgrade_v1(self, data: dict[str, Any]) -> dict[str, Any]:
        return data


def check_batch_bytes(profile: ClientProfile, topic_max_bytes: int) -> None:
    if profile.batch_bytes is not None and profile.batch_bytes > topic_max_bytes:
        raise ValueError(
            f"batch_bytes: {profile.batch_bytes} (profile {profile.name}) exceeds the broker's"
            f" message.max.bytes {topic_max_bytes} (raise the topic config max.message.bytes)"
        )


def describe_producer(name: str, profile: ClientProfile, batch_size: bool = False) -> str:
    parts = [name]
    if profile.linger_ms is not None:
        parts.append(f"linger {profile.linger_ms:g} ms")
    if batch_size and profile.batch_bytes is not None:
        parts.append(f"batch.size {profile.batch_bytes}")
    if profile.partitioner != "default":
        parts.append(profile.partitioner)
    parts.append(profile.compression or "default codec")
    return " ".join(parts)


KIND = Librdkafka()
