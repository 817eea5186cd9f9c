"""librdkafka (confluent-kafka): properties, one partition batch per produce request.

A partition's batch goes when it holds batch.num.messages / batch.size, or its first message
waited linger.ms. Keyless messages stick to one partition for sticky.partitioning.linger.ms
(default 2 x linger.ms, 0 = a random partition per message) with every partitioner. Verified on the
lab's librdkafka 2.16: client `req.Produce` equals the number of partition batches (`batchcnt`) even
when many partitions of one broker are ready together (librdkafka issue #1700 is still open).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, model_validator

from tuner.spec.base import config_strings
from tuner.spec.clients.base import Family, SearchContext, name_of, num
from tuner.spec.clients.producer import Partitioner, ProducerKind, ProducerProfile, same_value
from tuner.spec.clients.rules import LateTimer, LibrdkafkaRules, Partitioning, PartitionMode
from tuner.spec.engine_id import EngineId
from tuner.spec.librdkafka_client import as_deployed, config_names_document, number_type, settings_problem
from tuner.spec.limits import MAX_ITEMS

# librdkafka defaults (CONFIGURATION.md, v2.x).
LINGER_MS = 5.0
BATCH_MESSAGES = 10_000
BATCH_BYTES = 1_000_000
MESSAGE_MAX_BYTES = 1_000_000
# Durability defaults (CONFIGURATION.md): acks all, no idempotence, retries without bound, and up to
# 1,000,000 requests in flight (5 with idempotence, which librdkafka then enforces).
ACKS = "-1"
RETRIES = "2147483647"
MAX_IN_FLIGHT = "1000000"
MAX_IN_FLIGHT_IDEMPOTENT = "5"
# The broker thread wakes ~0.2 ms past a batch's linger deadline (a record due 0.1 ms past it made
# the batch 77% of the time, 0.2 ms past 51%, 0.5 ms past 3%; docs/benchmarks.md "Linger timers").
LINGER_TIMER = LateTimer(median_ms=0.2, spread=0.6)
_PARTITIONER = {"random": "random", "sticky": "consistent_random", "hash": "murmur2_random"}
# librdkafka's canonical name of each alias its files may use (its own table, as committed).
CANONICAL: Mapping[str, str] = MappingProxyType(config_names_document()["aliases"])


class LibrdkafkaProfile(ProducerProfile):
    """librdkafka's settings: the shared producer knobs plus a batch bound in messages."""

    client: Literal["librdkafka"] = "librdkafka"
    batch_messages: int | None = Field(default=None, gt=0, le=1_000_000)
    # each value's number judged by librdkafka's own type of it (linger.ms 0.5 is a float to it)
    overrides: Annotated[dict[str, str], config_strings(number_type), Field(max_length=MAX_ITEMS)] = Field(
        default_factory=dict
    )

    @model_validator(mode="after")
    def _each_property_once(self) -> LibrdkafkaProfile:
        """One property under two names (a knob's and an alias override, e.g. linger_ms and
        queue.buffering.max.ms) with two values: librdkafka takes the one set last, the model
        the knob's. Refused, naming both."""
        seen: dict[str, tuple[str, str]] = {}
        for key, value in KIND.client_settings(self).items():
            name = CANONICAL.get(key, key)
            first = seen.setdefault(name, (key, value))
            if first[0] != key and not same_value(key, first[1], value):
                raise ValueError(
                    f"{first[0]}={first[1]} and {key}={value} set one librdkafka property ({name}):"
                    " set it once"
                )
        return self

    @model_validator(mode="after")
    def _read_by_librdkafka(self, info: ValidationInfo) -> LibrdkafkaProfile:
        """Every override a property a librdkafka producer reads ("did you mean"); a profile read
        from a file (the loader's context names its directory) also as the installed librdkafka
        takes its settings: a bad value or a conflict refused before anything runs. A profile the
        model builds or a record holds is not handed to a client."""
        from_file = info.context is not None and "base_dir" in info.context
        checked = KIND.client_settings(self) if from_file else {}
        found = KIND.settings_problem(self.overrides, checked)
        if found is not None:
            raise ValueError(found[1])
        return self


class Librdkafka(ProducerKind[LibrdkafkaProfile]):
    name = "librdkafka"
    title = "librdkafka"
    engine = EngineId.LIBRDKAFKA
    model = LibrdkafkaProfile
    hints = MappingProxyType({"filebeat": " (give librdkafka properties as knobs or overrides)"})
    multi_partition_requests = False
    software = ("rdkafka", "confluent-kafka")
    DURABILITY = (
        ("acks", ("request.required.acks",)),
        ("enable.idempotence", ()),
        ("retries", ("message.send.max.retries",)),
        ("max.in.flight.requests.per.connection", ("max.in.flight",)),
    )
    aliases = CANONICAL
    knob_properties = MappingProxyType(
        {"linger_ms": ("linger.ms",), "batch_messages": ("batch.num.messages",),
         "batch_bytes": ("batch.size",), "compression": ("compression.type",),
         "compression_level": ("compression.level",), "acks": ("acks",),
         "idempotence": ("enable.idempotence",), "max_in_flight": ("max.in.flight.requests.per.connection",),
         "partitioner": ("partitioner", "sticky.partitioning.linger.ms")}
    )  # fmt: skip
    SEARCHED = frozenset(
        {"linger.ms", "queue.buffering.max.ms", "batch.num.messages", "batch.size", "compression.type",
         "compression.codec", "compression.level", "partitioner", "sticky.partitioning.linger.ms"}
    )  # fmt: skip
    measurement = ("statistics.interval.ms", "delivery report callbacks")
    secrets_hint = (
        "librdkafka expands no variables: your application reads this file and adds sasl.password",
        "(or ssl.key.password) from its secret store or environment to the configuration it builds.",
    )

    def settings_problem(
        self, names: Mapping[str, str], settings: Mapping[str, str]
    ) -> tuple[str, str] | None:
        # what the deployment sets is judged too (a protocol, a mechanism), but its brokers, its
        # host's files and its secrets' values (as_deployed)
        return settings_problem(names, as_deployed(settings, self.set_by_deployment))

    def durability_defaults(self, conf: Mapping[str, str]) -> dict[str, str]:
        # a transactional producer is idempotent whatever the setting says
        transactional = bool(conf.get("transactional.id"))
        idempotent = conf.get("enable.idempotence", "false").lower() == "true" or transactional
        return {
            "acks": ACKS,
            "enable.idempotence": "true" if transactional else "false",
            "retries": RETRIES,
            "max.in.flight.requests.per.connection": MAX_IN_FLIGHT_IDEMPOTENT
            if idempotent
            else MAX_IN_FLIGHT,
        }

    def client_settings(self, profile: LibrdkafkaProfile) -> dict[str, str]:
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
        if profile.max_in_flight is not None:
            conf["max.in.flight.requests.per.connection"] = str(profile.max_in_flight)
        if profile.partitioner != "default":
            conf["partitioner"] = _PARTITIONER[profile.partitioner]
            if profile.partitioner in ("sticky", "hash"):
                ran = {**conf, **profile.overrides}  # twice the linger the client runs, an override's too
                conf["sticky.partitioning.linger.ms"] = str(max(1, round(2 * _linger(ran))))
        conf.update(profile.overrides)
        return self.with_durability(conf)

    def rules(self, profile: LibrdkafkaProfile) -> LibrdkafkaRules:
        conf = self.client_settings(profile)
        linger = _linger(conf)
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
            linger_timer=LINGER_TIMER,
        )

    def families(self, ctx: SearchContext) -> list[Family]:
        # keyless: sticky; else the baseline's partitioner (the client default for a kind without one)
        base = ctx.base
        partitioner: Partitioner = base.partitioner if isinstance(base, ProducerProfile) else "default"
        partitioner = "sticky" if ctx.keyless else "hash" if base is None else partitioner
        batch_bytes = min(BATCH_BYTES, ctx.topic_max_bytes, ctx.max_request_bytes or BATCH_BYTES)
        keep = self.kept(ctx.base)

        def make(linger: float, codec: str) -> LibrdkafkaProfile:
            return self.model(  # this kind's model: a kind built on this one searches as itself
                name=name_of(self.name, codec, linger),
                linger_ms=round(linger),
                batch_messages=BATCH_MESSAGES,
                batch_bytes=batch_bytes,
                compression=codec,
                partitioner=partitioner,
                **keep,
            )

        return [Family(f"{partitioner} partitioning, linger", make, ctx.budget_ms)]


KIND = Librdkafka()


def _linger(conf: Mapping[str, str]) -> float:
    """The linger a librdkafka configuration runs: linger.ms, else its alias, else the default."""
    return num(conf, "linger.ms", num(conf, "queue.buffering.max.ms", LINGER_MS))
