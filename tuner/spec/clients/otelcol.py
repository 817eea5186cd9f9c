"""The OpenTelemetry Collector (filelog receiver -> kafka exporter), collector release 0.165.

A `client: otelcol` profile carries the collector's own settings under `otelcol:`, spelled as in the
collector's config (nested or dotted keys, durations as Go writes them): the kafka exporter's
section under `kafka`, the filelog receiver's under `filelog`:

    client: otelcol
    otelcol:
      kafka.producer: {linger: 100ms, compression: zstd}
      kafka.sending_queue.batch: {flush_timeout: 1s, min_size: 8192}
      kafka.record_partitioner: {round_robin: {}}

How the collector forms produce requests (exporter/kafkaexporter and pkg/stanza of that release):
the receiver reads each file every `poll_interval` (200 ms) and hands the lines of a read on in
batches of up to 100 entries, the last partial batch at the emitter's next 100 ms tick; each batch is
one export. The exporter's `sending_queue` (on, 10 consumers) merges exports only when its `batch`
section is set (exporter-side batching, the batching the current release recommends over the batch
processor; it is off by default while its feature gate is alpha). Encoding `otlp_proto` (the
default) makes one Kafka record of one export, `raw` one record per line. franz-go then sends one
request per broker carrying every partition batch ready for it: a batch is ready after `linger`
(10 ms) or when it holds `max_message_bytes`; `required_acks` 1 keeps one request in flight per broker;
keyless records stick to one partition until its batch leaves (`sticky_key`, the default).
Its load runs real collector pods (tuner/driver/otelcol/).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import SerializationInfo, field_serializer

from tuner.core.errors import BadInput
from tuner.core.inputs import plain_data, read_yaml, shown_path
from tuner.core.redact import redact
from tuner.core.yaml_block import block_yaml
from tuner.spec.base import flat_settings
from tuner.spec.clients.base import (
    ClientKind,
    Family,
    Rendered,
    SearchContext,
    name_of,
    team_file_profile,
)
from tuner.spec.clients.rules import OtelcolRules, Partitioning
from tuner.spec.engine_id import EngineId
from tuner.spec.filebeat_load import expand_dotted
from tuner.spec.otelcol import (
    BATCH_MIN_SIZE,
    EMIT_BATCH,
    EMIT_FLUSH,
    ENCODING,
    FLUSH_MAX_MESSAGES,
    MAX_MESSAGE_BYTES,
    RELEASE,
    REQUIRED_ACKS,
    OtelcolConfig,
)
from tuner.spec.otelcol_own import team_collector
from tuner.spec.profile import ProfileBase

# The batch flush timer's mean lateness, fitted on the real runs of loadtests/otelcol-sweep.yaml
# (docs/benchmarks.md "OpenTelemetry Collector"): a 1 s timer flushed every ~1.15 s on the lab.
BATCH_TIMER_LATE_MS = 150.0
MAX_BATCH = 10_000_000  # sending_queue.batch.min_size's bound here
_HINTS = {
    "linger_ms": " (set otelcol: kafka.producer.linger)",
    "batch_messages": " (set otelcol: kafka.sending_queue.batch.min_size)",
    "batch_bytes": " (set otelcol: kafka.producer.max_message_bytes)",
    "compression": " (set otelcol: kafka.producer.compression)",
    "compression_level": " (set otelcol: kafka.producer.compression_params.level)",
    "acks": " (set otelcol: kafka.producer.required_acks)",
    "partitioner": " (set otelcol: kafka.record_partitioner)",
    "max_in_flight": " (set otelcol: kafka.producer.max_inflight_requests_per_broker)",
    "idempotence": " (the collector's producer is idempotent with required_acks all)",
    "overrides": " (set collector options under otelcol:)",
}


class OtelcolProfile(ProfileBase):
    """The collector's settings: its kafka exporter and filelog receiver options (`otelcol:`)."""

    client: Literal["otelcol"] = "otelcol"
    otelcol: OtelcolConfig | None = None

    @field_serializer("otelcol")
    def _compact(self, value: OtelcolConfig | None, info: SerializationInfo) -> dict[str, Any] | None:
        """Only what the profile sets: a dump read back (a sweep's profile files, records) sets
        nothing more, so an option left to the collector's default stays unwritten."""
        return None if value is None else value.compact(info.mode)


def config_of(profile: ProfileBase) -> OtelcolConfig:
    """The profile's collector settings (the release's defaults where it sets nothing); ValueError
    for another kind's profile."""
    if not isinstance(profile, OtelcolProfile):
        raise ValueError(f"profile {profile.name} is a {profile.client} profile, not an otelcol one")
    return profile.otelcol or OtelcolConfig()


def _without(section: Mapping[str, Any], *searched: str) -> dict[str, Any]:
    return {k: v for k, v in section.items() if k not in searched}


class Otelcol(ClientKind[OtelcolProfile]):
    name = "otelcol"
    title = "OpenTelemetry Collector"
    engine = EngineId.OTELCOL
    model = OtelcolProfile
    hints = _HINTS
    multi_partition_requests = True
    software = ("kgo", "franz")
    alternatives = (  # the exporter's one partitioner
        tuple(f"otelcol.kafka.record_partitioner.{s}" for s in ("sticky_key", "round_robin", "least_backup")),
    )
    stands_in_for = "franz-go clients are replayed as the OpenTelemetry Collector kind (franz-go)"

    def own_file_profile(self, path: Path, data: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A team's collector config named as a profile (or `otelcol:FILE`): the kafka exporter and
        filelog receiver settings of its logs pipeline that kbt runs, as the collector reads them;
        where it sends and how it connects are the lab's or the target's, and exporter options kbt
        does not run are named (tuner/spec/otelcol_own.py)."""
        if data is not None and ("client" in data or not {"exporters", "service"} <= set(map(str, data))):
            return None
        data = plain_data(read_yaml(path, "collector config", go_yaml="v3"))  # as the collector reads it
        if not isinstance(data, Mapping):
            raise BadInput(f"{shown_path(path)}: expected a mapping of keys at the top level")
        try:
            settings, left, not_carried = team_collector(data, shown_path(path))
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        profile = team_file_profile(self, path, left, otelcol=settings)
        if not_carried:
            profile["description"] += f"; not run by kbt (the collector's defaults): {', '.join(not_carried)}"
        return profile

    def idle(self, profile: OtelcolProfile, path: Sequence[str]) -> tuple[str, str] | None:
        batch = list(path[:4]) == ["otelcol", "kafka", "sending_queue", "batch"]
        if batch and config_of(profile).kafka.sending_queue.enabled is False:
            why = "the collector batches only in a sending_queue that is on (this profile's is off)"
            return "otelcol.kafka.sending_queue.enabled", why
        return None

    def client_settings(self, profile: OtelcolProfile) -> dict[str, str]:
        """Collector option paths the profile sets (relative to the config root), as YAML text."""
        data = config_of(profile).compact()
        return {
            **flat_settings(data.get("kafka", {}), "exporters.kafka."),
            **flat_settings(data.get("filelog", {}), "receivers.file_log."),
        }

    def rules(self, profile: OtelcolProfile) -> OtelcolRules:
        config = config_of(profile)
        producer = config.kafka.producer
        batch = config.batching
        part = config.kafka.record_partitioner
        mode = part.mode if part else "sticky_key"
        acks = producer.required_acks or REQUIRED_ACKS
        return OtelcolRules(
            kind=self.name,
            poll_ms=config.poll_interval.ms,
            emit_batch=EMIT_BATCH,
            emit_flush_ms=EMIT_FLUSH.ms,
            batch_min=batch.min_size if batch else 0,
            batch_max=batch.max_size if batch else 0,
            batch_timeout_ms=batch.flush_timeout.ms if batch else 0.0,
            record_per_line=config.encoding == "raw",
            linger_ms=config.linger.ms,
            max_message_bytes=producer.max_message_bytes or MAX_MESSAGE_BYTES,
            buffered_records=producer.flush_max_messages or FLUSH_MAX_MESSAGES,
            in_flight=1 if acks == "all" else producer.max_inflight_requests_per_broker or 1,
            partitioning=Partitioning(
                keyless="round_robin" if mode == "round_robin" else "sticky_batch",
                keyed="round_robin" if mode == "round_robin" else "hash",
            ),
            compression=config.compression,
            timer_late_ms=BATCH_TIMER_LATE_MS,
        )

    def families(self, ctx: SearchContext) -> list[Family]:
        """Exporter-side batching with the flush timeout as the knob (min_size from the rate). The
        rest of a baseline's settings (required_acks, max_message_bytes, encoding, partitioner,
        queue consumers, poll interval) stay: the collector runs them, and the recommendation is
        measured with them."""
        base = config_of(ctx.base).compact() if isinstance(ctx.base, OtelcolProfile) else {}
        kafka = base.get("kafka", {})
        rest = {k: v for k, v in kafka.items() if k not in ("producer", "sending_queue")}
        producer = _without(kafka.get("producer", {}), "linger", "compression", "compression_params")
        queue = _without(kafka.get("sending_queue", {}), "batch")  # the search's own
        if "enabled" in queue:  # stated: a fragment merged over a config that turned it off
            queue["enabled"] = True  # would leave the batching it recommends off
        out = []
        for linger_ms in (10, 100):

            def make(knob: float, codec: str, linger_ms: int = linger_ms) -> OtelcolProfile:
                timeout = max(1, round(knob))
                settings = {
                    **base,
                    "kafka": {
                        **rest,
                        "producer": {**producer, "linger": f"{linger_ms}ms", "compression": codec},
                        "sending_queue": {
                            **queue,
                            "batch": {
                                "flush_timeout": f"{timeout}ms",
                                # the timer, not the size, sends the batch at this rate
                                "min_size": min(
                                    MAX_BATCH,
                                    max(BATCH_MIN_SIZE, round(ctx.rate_per_producer * timeout / 1000) + 1),
                                ),
                            },
                        },
                    },
                }
                return OtelcolProfile(
                    name=name_of(self.name, codec, knob, f"l{linger_ms}"),
                    otelcol=OtelcolConfig.model_validate(settings),
                )

            out.append(
                Family(f"linger {linger_ms}ms, sending_queue.batch.flush_timeout", make, ctx.budget_ms)
            )
        return out

    def render(self, profile: OtelcolProfile, header: Sequence[str]) -> Rendered:
        """A collector config fragment: the kafka exporter and filelog receiver options to merge into
        the deployment's config (`--config base.yaml --config this.yaml`)."""
        data = config_of(profile).compact()
        out = [f"# {line}" if line else "#" for line in header]
        out += [
            f"# OpenTelemetry Collector {RELEASE} (contrib kafka exporter, filelog receiver): merge into",
            "# your config (--config base.yaml --config this.yaml); brokers, topic and credentials stay",
            "# your deployment's (brokers: ${env:KAFKA_HOSTS} takes every broker comma-separated; a",
            "# password only as ${env:VAR}).",
        ]
        exporter = redact(flat_settings(data.get("kafka", {})))  # no secret reaches a fragment
        kafka = expand_dotted({k: _scalar(v) for k, v in exporter.items()})
        doc: dict[str, Any] = {"exporters": {"kafka": kafka}}
        if data.get("filelog"):
            doc["receivers"] = {"file_log": data["filelog"]}
        out += block_yaml(doc)
        return Rendered(f"{self.name}.yaml", "\n".join(out) + "\n")

    def describe(self, profile: OtelcolProfile) -> str:
        config = config_of(profile)
        parts = [self.name, f"linger {config.linger}"]
        if config.batching is not None:
            parts.append(f"batch {config.batching.min_size}/{config.batching.flush_timeout}")
        part = config.kafka.record_partitioner
        if part is not None and part.mode != "sticky_key":
            parts.append(part.mode)
        if config.encoding != ENCODING:
            parts.append(config.encoding)
        return " ".join([*parts, config.compression])

    def check_fits(self, profile: OtelcolProfile, topic_max_bytes: int, event_bytes: int | None) -> None:
        limit = config_of(profile).kafka.producer.max_message_bytes or MAX_MESSAGE_BYTES
        if limit > topic_max_bytes:
            raise ValueError(
                f"kafka.producer.max_message_bytes: {limit} (profile {profile.name}) exceeds the broker's"
                f" message.max.bytes {topic_max_bytes} (lower it or raise the topic's max.message.bytes)"
            )


def _scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


KIND = Otelcol()
