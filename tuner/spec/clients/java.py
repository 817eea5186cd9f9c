"""The Java producer (kafka-clients 4.x): properties, one request per broker per send.

A request carries the head batch of every partition the broker leads, sent when any of them is full
(batch.size bytes) or waited linger.ms (default 5 ms in Kafka 4.0); keyless records stick to a
partition until batch.size bytes went to it (KIP-794). Its load runs on the `java` engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

from pydantic import field_validator, model_validator

from tuner.core.envref import ENV_CONFIG_PROVIDER, java_spelling, profile_spelling
from tuner.core.numbers import parse_int
from tuner.core.redact import redact
from tuner.spec.clients.base import Family, Rendered, SearchContext, name_of, num
from tuner.spec.clients.logstash_output import FILENAME as LOGSTASH_FILENAME
from tuner.spec.clients.logstash_output import logstash_output
from tuner.spec.clients.producer import ProducerKind, ProducerProfile
from tuner.spec.clients.rules import JavaRules, LateTimer, Partitioning
from tuner.spec.engine_id import EngineId
from tuner.spec.java_client import check_property_names, unknown_property

# Java producer defaults (Kafka 4.x).
LINGER_MS = 5.0
BATCH_BYTES = 16_384
MAX_REQUEST_BYTES = 1_048_576
ACKS = "all"
COMPRESSION = "none"
# Durability defaults (Kafka 3+): acks all, retries without bound, 5 requests in flight, and
# idempotence on unless acks, retries or in-flight conflict with it (then off, silently, since 3.2).
RETRIES = "2147483647"
MAX_IN_FLIGHT = "5"
# The sender thread's linger timer, on a clock of whole milliseconds: it fires ~0.3 ms past a
# batch's deadline with a long tail, and in about one batch in ten up to 1 ms early. Over 24 runs
# at linger 5 and 20 ms, a record due 0.2 ms past the deadline made the batch 54-81% of the time,
# 0.5 ms past 17-28%, 1 ms past 1-15%, 0.2 ms before it 81-98% (docs/benchmarks.md "Linger timers").
LINGER_TIMER = LateTimer(median_ms=0.3, spread=0.8, early_share=0.1)
_ROUND_ROBIN = "org.apache.kafka.clients.producer.RoundRobinPartitioner"


class JavaProfile(ProducerProfile):
    """The Java producer's settings: the shared producer knobs (batches are bounded in bytes only:
    batch.num.messages has no Java counterpart)."""

    client: Literal["java"] = "java"

    @field_validator("overrides", mode="before")
    @classmethod
    def _provider_references(cls, value: Any) -> Any:
        """`${env:VAR}`, the form Kafka's EnvVarConfigProvider reads (and the rendered file holds),
        is the profile's `${VAR}`: a file's properties pasted into overrides keep their meaning."""
        if not isinstance(value, Mapping):
            return value
        return {k: profile_spelling(v) if isinstance(v, str) else v for k, v in value.items()}

    @model_validator(mode="after")
    def _known_properties(self) -> JavaProfile:
        # Property names against the client's own ProducerConfig names ("did you mean").
        check_property_names(self.overrides)
        return self


class Java(ProducerKind[JavaProfile]):
    name = "java"
    title = "Java"
    engine = EngineId.JAVA
    model = JavaProfile
    hints = MappingProxyType({"batch_messages": " (the Java producer bounds batches by batch_bytes)"})
    multi_partition_requests = True
    software = ("apache-kafka-java",)
    environment = (
        "bootstrap.servers", "security.protocol", "sasl.*", "ssl.*", "client.id", "key.serializer",
        "value.serializer",
    )  # fmt: skip
    SEARCHED = frozenset(
        {"linger.ms", "batch.size", "compression.type", "compression.gzip.level", "compression.lz4.level",
         "compression.zstd.level"}
    )  # fmt: skip
    measurement = ("a per-producer suffix on client.id",)
    knob_properties = MappingProxyType(
        {"linger_ms": ("linger.ms",), "batch_bytes": ("batch.size",), "compression": ("compression.type",),
         "compression_level": ("compression.gzip.level", "compression.lz4.level", "compression.zstd.level"),
         "acks": ("acks",), "idempotence": ("enable.idempotence",),
         "max_in_flight": ("max.in.flight.requests.per.connection",), "partitioner": ("partitioner.class",)}
    )  # fmt: skip
    secrets_hint = (
        "Secrets only as ${env:VAR} references, which Kafka's EnvVarConfigProvider resolves from the",
        "environment (config.providers=env, Kafka 3.5+).",
    )

    def settings_problem(
        self, names: Mapping[str, str], settings: Mapping[str, str]
    ) -> tuple[str, str] | None:
        # names only: the Java client judges values in a JVM (`kbt check java`, the engine)
        return next(((n, p) for n in sorted(names) if (p := unknown_property(n))), None)

    def durability_defaults(self, conf: Mapping[str, str]) -> dict[str, str]:
        acks = conf.get("acks", ACKS).lower()
        in_flight = conf.get("max.in.flight.requests.per.connection", MAX_IN_FLIGHT)
        retries = conf.get("retries", RETRIES)
        idempotent = bool(conf.get("transactional.id")) or (
            acks in ("all", "-1") and _at_most(in_flight, 5) and retries.strip() != "0"
        )
        return {
            "acks": ACKS,
            "enable.idempotence": "true" if idempotent else "false",
            "retries": RETRIES,
            "max.in.flight.requests.per.connection": MAX_IN_FLIGHT,
        }

    def file_settings(self, conf: Mapping[str, str]) -> dict[str, str]:
        """Every `${VAR}` reference as `${env:VAR}`, resolved by the client's own EnvVarConfigProvider,
        which the file then names."""
        out = {k: java_spelling(v) for k, v in conf.items()}
        providers = [p.strip() for p in out.get("config.providers", "").split(",") if p.strip()]
        if out != dict(conf) and "env" not in providers:  # beside the file's own providers, if any
            out["config.providers"] = ",".join([*providers, "env"])
            out["config.providers.env.class"] = ENV_CONFIG_PROVIDER
        return out

    def client_settings(self, profile: JavaProfile) -> dict[str, str]:
        conf: dict[str, str] = {}
        if profile.linger_ms is not None:
            conf["linger.ms"] = str(round(profile.linger_ms))  # a long in the Java client
        if profile.batch_bytes is not None:
            conf["batch.size"] = str(profile.batch_bytes)
        if profile.compression is not None:
            conf["compression.type"] = profile.compression
        if profile.compression_level is not None and profile.codec in ("gzip", "lz4", "zstd"):
            conf[f"compression.{profile.codec}.level"] = str(profile.compression_level)  # the codec run
        if profile.acks is not None:
            conf["acks"] = profile.acks
        if profile.idempotence is not None:
            conf["enable.idempotence"] = "true" if profile.idempotence else "false"
        if profile.max_in_flight is not None:
            conf["max.in.flight.requests.per.connection"] = str(profile.max_in_flight)
        if profile.partitioner == "random":
            conf["partitioner.class"] = _ROUND_ROBIN
        conf.update(profile.overrides)
        return self.with_durability(conf)

    def also_rendered(self, profile: JavaProfile, header: Sequence[str]) -> tuple[Rendered, ...]:
        # Logstash's Kafka output sets linger 0 and acks 1 itself: give it the defaults the
        # measured client ran with, so the rendered options mean the same batching and durability.
        defaults = {
            "linger.ms": str(round(LINGER_MS)),
            "batch.size": str(BATCH_BYTES),
            "compression.type": COMPRESSION,
        }
        settings = {**defaults, **redact(self.client_settings(profile))}
        # Idempotence has no output option: under Logstash the client derives it from the rest.
        ran = settings["enable.idempotence"]
        derived = self.durability_defaults({k: v for k, v in settings.items() if k != "enable.idempotence"})
        under = derived["enable.idempotence"]
        same = "as the measured run" if under == ran else f"NOT as the measured run: {ran}"
        notes = [
            f"enable.idempotence: no kafka output option; the client derives {under} from these ({same})"
        ]
        return (Rendered(LOGSTASH_FILENAME, logstash_output(settings, header, notes)),)

    def rules(self, profile: JavaProfile) -> JavaRules:
        conf = self.client_settings(profile)
        batch = int(num(conf, "batch.size", BATCH_BYTES))
        round_robin = conf.get("partitioner.class", "").endswith("RoundRobinPartitioner")
        return JavaRules(
            kind=self.name,
            linger_ms=num(conf, "linger.ms", LINGER_MS),
            batch_bytes=batch,
            max_request_bytes=int(num(conf, "max.request.size", MAX_REQUEST_BYTES)),
            partitioning=Partitioning(
                keyless="round_robin" if round_robin else "sticky_bytes",
                keyed="round_robin" if round_robin else "hash",
                sticky_bytes=batch,
            ),
            compression=conf.get("compression.type", COMPRESSION),
            linger_timer=LINGER_TIMER,
        )

    def families(self, ctx: SearchContext) -> list[Family]:
        keep = self.kept(ctx.base)
        out = []
        for size in sorted({BATCH_BYTES, 131_072, min(MAX_REQUEST_BYTES, ctx.topic_max_bytes)}):

            def make(linger: float, codec: str, size: int = size) -> JavaProfile:
                return self.model(  # this kind's model: a kind built on this one searches as itself
                    name=name_of(self.name, codec, linger, f"b{size // 1024}k"),
                    linger_ms=round(linger),
                    batch_bytes=size,
                    compression=codec,
                    **keep,
                )

            out.append(Family(f"batch.size {size}, linger", make, ctx.budget_ms))
        return out


def _at_most(text: str, bound: int) -> bool:
    try:
        return parse_int(text, "max.in.flight.requests.per.connection") <= bound
    except ValueError:
        return False


KIND = Java()
