"""The OpenTelemetry Collector's settings a `client: otelcol` profile takes (`otelcol:`), spelled as
in the collector's config: the kafka exporter's section under `kafka`, the filelog receiver's under
`filelog`. Defaults are those of the collector release kbt builds (tuner/spec/clients/otelcol.py says
how they form requests). Only what a profile sets is written to a collector config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tuner.spec.base import Acks, StrictModel, normal_acks
from tuner.spec.duration import Duration, positive
from tuner.spec.limits import MAX_COMPRESSION_LEVEL

# The collector release kbt builds (loadtests/otelcol-engine/go.mod) and whose defaults these are.
RELEASE = "0.165"
LINGER = Duration.of_ms(10)
FLUSH_MAX_MESSAGES = 10_000
MAX_MESSAGE_BYTES = 1_000_000
REQUIRED_ACKS = "1"
COMPRESSION = "none"
ENCODING = "otlp_proto"
POLL_INTERVAL = Duration.of_ms(200)
EMIT_BATCH = 100  # pkg/stanza's batching emitter: entries per export
EMIT_FLUSH = Duration.of_ms(100)  # and its flush tick
BATCH_FLUSH_TIMEOUT = Duration.of_ms(200)  # sending_queue.batch defaults, once the section is set
BATCH_MIN_SIZE = 8192
Encoding = Literal["otlp_proto", "otlp_json", "raw"]
Codec = Literal["none", "gzip", "snappy", "lz4", "zstd"]


def with_unit(value: Any) -> Any:
    """A collector duration carries its unit: the collector reads a bare number as nanoseconds
    (`linger: 50` is 50 ns, checked with its print-config) and refuses a unitless text, where
    Filebeat's durations, kbt's `Duration`, read a bare number as seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return value
    text = str(value).strip()
    if text != "0" and _UNITLESS.fullmatch(text):
        reads = "refuses it" if isinstance(value, str) else f"reads it as {text} ns"
        raise ValueError(f"{text} has no unit: the collector {reads}; write {text}ms or {text}s")
    return value


_UNITLESS = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


# The levels the collector takes per codec (configcompression ValidateParams): gzip's -2 (Huffman
# only), -1 (default), 0 (none) .. 9; zstd maps any level to its nearest; snappy and lz4 take none.
LEVELS = {"gzip": range(-2, 10), "zstd": range(-MAX_COMPRESSION_LEVEL, MAX_COMPRESSION_LEVEL + 1)}


class CompressionParams(StrictModel):
    level: int = Field(default=0, ge=-MAX_COMPRESSION_LEVEL, le=MAX_COMPRESSION_LEVEL)


class Producer(StrictModel):
    linger: Duration | None = None
    flush_max_messages: int | None = Field(default=None, gt=0, le=10_000_000)
    max_message_bytes: int | None = Field(default=None, gt=0, le=104_857_600)
    compression: Codec | None = None
    compression_params: CompressionParams | None = None
    required_acks: Acks | None = None
    max_inflight_requests_per_broker: int | None = Field(default=None, gt=0, le=1000)

    _acks = field_validator("required_acks", mode="before")(normal_acks)
    _linger_unit = field_validator("linger", mode="before")(with_unit)

    @model_validator(mode="after")
    def _level(self) -> Producer:
        codec, level = self.compression or COMPRESSION, (self.compression_params or CompressionParams()).level
        if codec != "none" and level != 0 and level not in LEVELS.get(codec, ()):
            allowed = LEVELS.get(codec)
            which = f"{allowed.start} .. {allowed.stop - 1}" if allowed else "none (0)"
            raise ValueError(f"compression_params.level: {codec} takes {which} (got {level})")
        return self


class Batch(StrictModel):
    """Exporter-side batching (exporterhelper `sending_queue.batch`), items sized."""

    flush_timeout: Duration = BATCH_FLUSH_TIMEOUT
    min_size: int = Field(default=BATCH_MIN_SIZE, ge=0, le=10_000_000)
    max_size: int = Field(default=0, ge=0, le=10_000_000)  # 0: no limit
    sizer: Literal["items"] = "items"

    _timeout_unit = field_validator("flush_timeout", mode="before")(with_unit)

    @model_validator(mode="after")
    def _sizes(self) -> Batch:
        if self.max_size and self.max_size < self.min_size:
            raise ValueError(f"max_size {self.max_size} is below min_size {self.min_size}")
        if self.flush_timeout.ns <= 0:
            raise ValueError(f"flush_timeout: must be greater than 0 (got {self.flush_timeout})")
        return self


class SendingQueue(StrictModel):
    enabled: bool | None = None
    num_consumers: int | None = Field(default=None, gt=0, le=1000)
    queue_size: int | None = Field(default=None, gt=0, le=10_000_000)
    batch: Batch | None = None

    @field_validator("enabled", mode="before")
    @classmethod
    def _true_or_false(cls, value: Any) -> Any:
        """true or false alone, as the collector takes it (it refuses `enabled: yes` or "true")."""
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"must be true or false (got {value!r})")
        return value


class Logs(StrictModel):
    encoding: Encoding | None = None


class StickyKey(StrictModel):
    hasher: Literal["sarama_compat", "murmur2"] = "sarama_compat"


class Empty(StrictModel):
    pass


class RecordPartitioner(StrictModel):
    """At most one strategy, as the exporter requires."""

    sticky_key: StickyKey | None = None
    round_robin: Empty | None = None
    least_backup: Empty | None = None

    @model_validator(mode="after")
    def _one(self) -> RecordPartitioner:
        if sum(x is not None for x in (self.sticky_key, self.round_robin, self.least_backup)) != 1:
            raise ValueError("set exactly one of sticky_key, round_robin, least_backup")
        return self

    @property
    def mode(self) -> str:
        return "round_robin" if self.round_robin else "least_backup" if self.least_backup else "sticky_key"


class Kafka(StrictModel):
    producer: Producer = Field(default_factory=Producer)
    sending_queue: SendingQueue = Field(default_factory=SendingQueue)
    logs: Logs = Field(default_factory=Logs)
    record_partitioner: RecordPartitioner | None = None


class Filelog(StrictModel):
    poll_interval: Duration | None = None

    _poll_unit = field_validator("poll_interval", mode="before")(with_unit)

    @field_validator("poll_interval")
    @classmethod
    def _positive(cls, value: Duration | None) -> Duration | None:
        return value if value is None else positive(value)


class OtelcolConfig(StrictModel):
    """The batching-relevant part of a collector config: only what a profile sets is written."""

    kafka: Kafka = Field(default_factory=Kafka)
    filelog: Filelog = Field(default_factory=Filelog)

    @model_validator(mode="before")
    @classmethod
    def _dotted(cls, data: Any) -> Any:
        from tuner.spec.filebeat_load import expand_dotted  # it imports the loader, which imports us

        if not isinstance(data, Mapping):
            return data
        for key in data:
            # a dotted key is named as written: its first part alone ("producer") says too little
            head = str(key).split(".", 1)[0]
            if "." in str(key) and head not in cls.model_fields:
                hint = f' (did you mean "kafka.{key}"?)' if head in Kafka.model_fields else ""
                raise ValueError(f'unknown key "{key}"{hint}')
        return expand_dotted(data)

    def compact(self, mode: str = "json") -> dict[str, Any]:
        """The settings the profile sets, nested as in the collector's config (JSON values). An unset
        option is left out, never written as null: the collector refuses a null where it expects a
        value ("'sending_queue' unexpected type <nil> for 'enabled'")."""
        return self.model_dump(mode=mode, exclude_unset=True, exclude_none=True)

    @property
    def linger(self) -> Duration:
        return self.kafka.producer.linger or LINGER

    @property
    def encoding(self) -> str:
        return self.kafka.logs.encoding or ENCODING

    @property
    def compression(self) -> str:
        return self.kafka.producer.compression or COMPRESSION

    @property
    def poll_interval(self) -> Duration:
        return self.filelog.poll_interval or POLL_INTERVAL

    @property
    def batching(self) -> Batch | None:
        """Exporter-side batching in effect (only with the queue on and its batch section set)."""
        queue = self.kafka.sending_queue
        return queue.batch if queue.enabled is not False else None
