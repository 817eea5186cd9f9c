"""ClientProfile: which client, its client-neutral batching knobs, and raw overrides.

`None` on a knob means "the client's own default". `librdkafka_config()` maps the knobs to
librdkafka properties; the Java and Filebeat mappers live with their engines.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tuner.core.envref import is_pure_reference
from tuner.core.redact import is_secret_name
from tuner.spec.base import StrictModel
from tuner.spec.limits import DEFAULT_MESSAGE_TIMEOUT_MS, MESSAGE_TIMEOUT_KEYS, TOPIC_NAME_PATTERN

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

_LIBRDKAFKA_PARTITIONER = {"random": "random", "sticky": "consistent_random", "hash": "murmur2_random"}


class ClientProfile(StrictModel):
    """One producer configuration, named after its intent (`filebeat-like`, `batched-zstd`)."""

    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    description: str = ""
    client: Literal["librdkafka", "java", "filebeat"] = "librdkafka"
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
    overrides: dict[str, str] = Field(default_factory=dict)

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

    @field_validator("overrides", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {
                str(k): ("true" if v is True else "false" if v is False else str(v)) for k, v in value.items()
            }
        return value

    @model_validator(mode="after")
    def _check(self) -> ClientProfile:
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
    def multi_partition_requests(self) -> bool:
        """Whether one produce request carries several partitions: Sarama (Filebeat) and the Java
        producer send one request per broker per flush; librdkafka one per partition batch."""
        return self.client in ("filebeat", "java")

    @property
    def message_timeout_ms(self) -> float | None:
        """The delivery timeout in force: an override's value, else librdkafka's default; None when
        the override is not a number (librdkafka reports that itself)."""
        for key in MESSAGE_TIMEOUT_KEYS:
            if key in self.overrides:
                try:
                    return float(self.overrides[key])
                except ValueError:
                    return None
        return float(DEFAULT_MESSAGE_TIMEOUT_MS)

    def librdkafka_config(self) -> dict[str, str]:
        """The librdkafka producer properties this profile sets (bootstrap etc. are the driver's)."""
        conf: dict[str, str] = {}
        if self.linger_ms is not None:
            conf["linger.ms"] = f"{self.linger_ms:g}"
        if self.batch_messages is not None:
            conf["batch.num.messages"] = str(self.batch_messages)
        if self.batch_bytes is not None:
            conf["batch.size"] = str(self.batch_bytes)
        if self.compression is not None:
            conf["compression.type"] = self.compression
        if self.compression_level is not None:
            conf["compression.level"] = str(self.compression_level)
        if self.acks is not None:
            conf["acks"] = "-1" if self.acks == "all" else self.acks
        if self.idempotence is not None:
            conf["enable.idempotence"] = "true" if self.idempotence else "false"
        if self.partitioner != "default":
            conf["partitioner"] = _LIBRDKAFKA_PARTITIONER[self.partitioner]
            if self.partitioner in ("sticky", "hash"):
                linger = self.linger_ms if self.linger_ms is not None else 5.0
                conf["sticky.partitioning.linger.ms"] = str(max(1, round(2 * linger)))
        if self.max_in_flight is not None:
            conf["max.in.flight.requests.per.connection"] = str(self.max_in_flight)
        conf.update(self.overrides)
        return conf
