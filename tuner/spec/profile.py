"""ClientProfile: which client kind, and that kind's typed settings.

librdkafka and Java take the producer knobs below (`None` = the client's own default) plus raw
`overrides` properties; Filebeat takes its own `filebeat:` section (output.kafka + queue.mem, as in
filebeat.yml). Which fields a kind takes, and what they map to, is the kind's
(tuner/spec/clients/): one spelling per knob.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializationInfo, field_serializer, field_validator, model_validator

from tuner.core.envref import is_pure_reference
from tuner.core.errors import did_you_mean
from tuner.core.numbers import parse_number
from tuner.core.redact import is_secret_name
from tuner.spec.base import ConfigMap, StrictModel
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.limits import DEFAULT_MESSAGE_TIMEOUT_MS, MESSAGE_TIMEOUT_KEYS, TOPIC_NAME_PATTERN
from tuner.spec.otelcol import OtelcolConfig

Compression = Literal["none", "gzip", "snappy", "lz4", "zstd"]
Acks = Literal["0", "1", "all"]
# Client-neutral partitioners:
#   default: the client's own default
#   random:  a random partition per keyless record (Filebeat's `partition.hash` without a key)
#   sticky:  keyless records stick to one partition per batch (Java's KIP-480/794 behaviour; for
#            librdkafka: consistent_random with sticky.partitioning.linger.ms = 2 x linger.ms)
#   hash:    murmur2 of the key (Java-compatible), sticky for keyless records
Partitioner = Literal["default", "random", "sticky", "hash"]

# Valid compression levels per codec (librdkafka `compression.level` ranges; -1 = codec default).
COMPRESSION_LEVELS: dict[str, tuple[int, int]] = {
    "gzip": (-1, 9),
    "lz4": (-1, 12),
    "zstd": (-1, 22),
}


class ClientProfile(StrictModel):
    """One producer configuration, named after its intent (`filebeat-like`, `batched-zstd`)."""

    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    description: str = ""
    client: str = "librdkafka"  # a kind of tuner.spec.clients.KINDS
    linger_ms: float | None = Field(default=None, ge=0, le=900_000)
    batch_messages: int | None = Field(default=None, gt=0, le=1_000_000)
    batch_bytes: int | None = Field(default=None, gt=0)
    compression: Compression | None = None
    compression_level: int | None = None
    acks: Acks | None = None
    idempotence: bool | None = None
    partitioner: Partitioner = "default"
    max_in_flight: int | None = Field(default=None, gt=0, le=1_000_000)
    # Which listener the client uses: the lab's SASL_SSL one (SCRAM-SHA-512 over TLS, credentials
    # from the lab's files or the environment, never from the profile) or plain text.
    security: Literal["plaintext", "sasl_ssl"] = "plaintext"
    # Raw client properties applied last, e.g. {"queue.buffering.max.kbytes": "65536"}.
    overrides: ConfigMap = Field(default_factory=dict)
    # Filebeat's settings: an output.kafka + queue.mem fragment spelled as in filebeat.yml (hosts and
    # topic are the engine's).
    filebeat: FilebeatConfig | None = None
    # The OpenTelemetry Collector's settings (kafka exporter, filelog receiver), as in its config.
    otelcol: OtelcolConfig | None = None

    @field_validator("filebeat", mode="before")
    @classmethod
    def _fragment(cls, value: Any) -> Any:
        from tuner.spec.clients.filebeat import as_fragment

        return as_fragment(value)

    @field_serializer("filebeat")
    def _compact(self, value: FilebeatConfig | None, info: SerializationInfo) -> dict[str, Any] | None:
        """Only what the profile sets (records and dumps stay short and read back the same)."""
        from tuner.spec.clients.filebeat import compact

        return None if value is None else compact(value, info.mode)

    @field_validator("acks", mode="before")
    @classmethod
    def _acks(cls, value: Any) -> Any:
        if value is None:
            return None
        text = str(value).strip().lower()
        if text in ("-1", "all"):
            return "all"
        return text

    @field_validator("overrides", mode="after")
    @classmethod
    def _no_literal_secrets(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if is_secret_name(key) and not is_pure_reference(text):
                raise ValueError(
                    f'"{key}" holds a secret: give it as a ${{VAR}} reference to an environment'
                    " variable, not literally"
                )
        return value

    @model_validator(mode="after")
    def _check(self) -> ClientProfile:
        from tuner.spec.clients import KINDS

        kind = KINDS.get(self.client)
        if kind is None:
            raise ValueError(
                f'client: unknown client kind "{self.client}"{did_you_mean(self.client, list(KINDS))}'
            )
        kind.check(self)
        if self.compression_level is not None:
            codec = self.compression or "none"
            if codec not in COMPRESSION_LEVELS:
                raise ValueError(f"compression_level does not apply to compression {codec}")
            low, high = COMPRESSION_LEVELS[codec]
            if not low <= self.compression_level <= high:
                raise ValueError(
                    f"compression_level {self.compression_level} is outside {low}..{high} for {codec}"
                )
        if self.linger_ms is not None:
            timeout_ms = self.message_timeout_ms
            if timeout_ms is not None and self.linger_ms >= timeout_ms:
                raise ValueError(
                    f"linger_ms {self.linger_ms:g} must be below the delivery timeout"
                    f" (message.timeout.ms {timeout_ms:g}): every record would expire while lingering"
                )
        if self.idempotence:
            if self.acks not in (None, "all"):
                raise ValueError(f"idempotence needs acks all (got acks {self.acks})")
            if self.max_in_flight is not None and self.max_in_flight > 5:
                raise ValueError(f"idempotence needs max_in_flight <= 5 (got {self.max_in_flight})")
        return self

    @property
    def message_timeout_ms(self) -> float | None:
        """The delivery timeout in force: an override's value, else librdkafka's default; None when
        the override is not a number (librdkafka reports that itself)."""
        for key in MESSAGE_TIMEOUT_KEYS:
            if key in self.overrides:
                try:
                    return parse_number(self.overrides[key], key)
                except ValueError:
                    return None
        return float(DEFAULT_MESSAGE_TIMEOUT_MS)

    def client_settings(self) -> dict[str, str]:
        """The client's own settings for this profile (properties, filebeat.yml paths), by its kind."""
        from tuner.spec.clients import kind_of

        return kind_of(self).client_settings(self)
