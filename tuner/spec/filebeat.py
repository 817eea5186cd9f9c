"""Filebeat's documented `output.kafka` and `queue.mem` options as pydantic models.

Names, defaults, ranges and enums follow libbeat (elastic/beats): `libbeat/outputs/kafka/config.go`
(kafkaConfig, defaultConfig, Validate), `libbeat/outputs/kafka/partition.go` (partitioners),
`libbeat/publisher/queue/memqueue/config.go` and `broker.go` (queue defaults and the way
`flush.min_events` / `flush.timeout` are normalised), and the Kafka output reference page. Durations
accept what Filebeat accepts: a Go duration string ("500ms", "1s", "1m30s") or a number of seconds.
Credentials may only be `${VAR}` references: a literal secret in a profile is an error.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from tuner.core.envref import is_pure_reference, is_reference
from tuner.core.numbers import parse_int
from tuner.spec.base import StrictModel
from tuner.spec.duration import Duration
from tuner.spec.filebeat_input import FilebeatInput
from tuner.spec.filebeat_lines import DEFAULT_FILEBEAT, FilebeatLine, has_log_input, line_of
from tuner.spec.limits import (
    MAX_COMPRESSION_LEVEL,
    MAX_COUNT,
    MAX_ITEMS,
    MAX_KAFKA_BYTES,
    MAX_MEMORY_BYTES,
    MAX_PRODUCERS,
)

# ---- secrets ------------------------------------------------------------------------------------

# ${VAR} or ${VAR:?error message} (tuner.core.envref); a ${VAR:default} would carry a literal
# secret as its default.
SECRET_OPTIONS = ("username", "password", "key_passphrase")
# A profile's or a checked file's secret that is not such a reference (its value never echoed).
LITERAL_SECRET = "literal credentials are not allowed: use an environment reference like ${KAFKA_PASSWORD}"


def _secret_reference(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, str) or not is_pure_reference(value):
        raise ValueError(LITERAL_SECRET)  # never the value: it may be the secret itself
    return value.strip()


SecretRef = Annotated[str | None, BeforeValidator(_secret_reference)]


def _one_as_list(value: Any) -> Any:
    """go-ucfg reads one string where a list is expected as that list of one: `hash: message`,
    `ssl.certificate_authorities: ca.pem`, and `hosts: "${KAFKA_HOSTS}"`, the form that holds
    several comma-separated brokers (go-ucfg splits the variable's value into a list)."""
    return [value] if isinstance(value, str) else value


Strings = Annotated[list[str], BeforeValidator(_one_as_list), Field(max_length=MAX_ITEMS)]
# The validator outside the union (a field's own metadata, its repr free of addresses), the bound
# on the list inside it (None is no list to measure).
OptionalStrings = Annotated[
    Annotated[list[str], Field(max_length=MAX_ITEMS)] | None, BeforeValidator(_one_as_list)
]

# ---- enums and limits ---------------------------------------------------------------------------

# libbeat compressionModes (config.go): zstd is not offered by Filebeat's Kafka output.
COMPRESSION_ALIASES = {
    "none": "none", "no": "none", "off": "none", "gzip": "gzip", "lz4": "lz4", "snappy": "snappy",
}  # fmt: skip
Compression = Literal["none", "gzip", "lz4", "snappy"]
GZIP_LEVELS = (0, 9)
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Kafka protocol versions libbeat accepts (libbeat/common/kafka/version.go): 0.8.2.0 ... 2.6.0.
# Kafka 4.x brokers need at least 2.1.0.
MIN_VERSION = (0, 8, 2, 0)
MAX_VERSION = (2, 6, 0, 0)
KAFKA4_MIN_VERSION = (2, 1, 0, 0)
_VERSION = re.compile(r"^\d+(\.\d+){0,3}$")

DEFAULT_VERSION = "2.1.0"
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000


def version_tuple(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (4 - len(parts)))


# ---- output.kafka -------------------------------------------------------------------------------


class PartitionGroup(StrictModel):
    """`partition.random` / `partition.round_robin`: switch partition every `group_events` events."""

    group_events: int = Field(default=1, ge=1, le=MAX_COUNT)
    reachable_only: bool = False


class PartitionHash(StrictModel):
    """`partition.hash`: hash the key (or `hash` fields); no key and `random` -> a random partition."""

    hash: Strings = Field(default_factory=list)
    random: bool = True
    reachable_only: bool = False


class Partition(StrictModel):
    """At most one strategy; none configured means `hash` (libbeat initPartitionStrategy)."""

    random: PartitionGroup | None = None
    round_robin: PartitionGroup | None = None
    hash: PartitionHash | None = None

    @model_validator(mode="before")
    @classmethod
    def _empty_sections(cls, data: Any) -> Any:
        # `partition.round_robin:` with nothing under it enables the strategy with its defaults.
        if isinstance(data, dict):
            return {k: ({} if v is None else v) for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _one(self) -> Partition:
        chosen = [name for name in ("random", "round_robin", "hash") if getattr(self, name) is not None]
        if len(chosen) > 1:
            raise ValueError(f"choose one partition strategy (got {', '.join(chosen)})")
        return self

    @property
    def strategy(self) -> Literal["random", "round_robin", "hash"]:
        return (
            "random" if self.random is not None else "round_robin" if self.round_robin is not None else "hash"
        )

    @property
    def group_events(self) -> int:
        chosen = self.random or self.round_robin
        return chosen.group_events if chosen is not None else 1

    @property
    def reachable_only(self) -> bool:
        chosen = self.random or self.round_robin or self.hash
        return chosen.reachable_only if chosen is not None else False


class Sasl(StrictModel):
    mechanism: str | None = None

    @field_validator("mechanism")
    @classmethod
    def _mechanism(cls, value: str | None) -> str | None:
        if value is not None and value.upper() not in SASL_MECHANISMS:
            raise ValueError(f'unknown value "{value}" (expected one of {", ".join(SASL_MECHANISMS)})')
        return value.upper() if value is not None else None


class Ssl(StrictModel):
    """libbeat tlscommon client options (`ssl.*`)."""

    enabled: bool | None = None
    verification_mode: Literal["full", "strict", "certificate", "none"] | None = None
    supported_protocols: Annotated[
        Annotated[list[Literal["TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"]], Field(max_length=4)] | None,
        BeforeValidator(_one_as_list),
    ] = None
    cipher_suites: OptionalStrings = None
    curve_types: OptionalStrings = None
    certificate_authorities: OptionalStrings = None
    certificate: str | None = None
    key: str | None = None
    key_passphrase: SecretRef = None
    key_passphrase_path: str | None = None
    ca_trusted_fingerprint: str | None = None
    ca_sha256: OptionalStrings = None
    renegotiation: Literal["never", "once", "freely"] | None = None

    @field_validator("key")
    @classmethod
    def _no_inline_key(cls, value: str | None) -> str | None:
        if value is not None and "PRIVATE KEY" in value:
            raise ValueError("an inline private key is a literal secret: give a file path or ${VAR}")
        return value


class Kerberos(StrictModel):
    enabled: bool | None = None
    auth_type: Literal["keytab", "password"] | None = None
    config_path: str | None = None
    keytab: str | None = None
    service_name: str | None = None
    username: SecretRef = None
    password: SecretRef = None
    realm: str | None = None
    enable_krb5_fast: bool | None = None


class MetadataRetry(StrictModel):
    max: int = Field(default=3, ge=0, le=MAX_COUNT)
    backoff: Duration = Duration.parse("250ms")


class Metadata(StrictModel):
    refresh_frequency: Duration = Duration.parse("10m")
    full: bool = False
    retry: MetadataRetry = Field(default_factory=MetadataRetry)


class Backoff(StrictModel):
    init: Duration = Duration.parse("1s")  # libbeat takes 0 too
    max: Duration = Duration.parse("60s")


def _a_second_or_more(value: Duration) -> Duration:
    """libbeat's `validate:"min=1"` on a duration: go-ucfg reads the bound 1 as one second."""
    if value.ns < 10**9:
        raise ValueError(f"must be at least 1s (got {value})")
    return value


Timeout = Annotated[Duration, AfterValidator(_a_second_or_more)]


class Header(StrictModel):
    key: str = Field(min_length=1)
    value: str


class TopicRule(StrictModel):
    topic: str | None = None
    mappings: dict[str, str] | None = Field(None, max_length=MAX_ITEMS)
    default: str | None = None
    when: dict[str, Any] | None = Field(None, max_length=MAX_ITEMS)


class KafkaOutput(StrictModel):
    """`output.kafka` with libbeat's defaults (docs/architecture.md, "Facts kbt relies on")."""

    enabled: bool = True
    hosts: Strings = Field(min_length=1)
    topic: str | None = None
    topics: list[TopicRule] | None = Field(None, max_length=MAX_ITEMS)
    key: str | None = None
    partition: Partition = Field(default_factory=Partition)
    headers: list[Header] | None = Field(None, max_length=MAX_ITEMS)
    client_id: str = Field(default="beats", min_length=1)
    worker: int = Field(default=1, ge=1, le=MAX_PRODUCERS)
    workers: int | None = Field(default=None, ge=1, le=MAX_PRODUCERS)
    codec: dict[str, Any] | None = Field(None, max_length=MAX_ITEMS)
    metadata: Metadata = Field(default_factory=Metadata)
    max_retries: int = Field(default=3, ge=-1, le=MAX_COUNT)
    backoff: Backoff = Field(default_factory=Backoff)
    bulk_max_size: int = Field(default=2048, ge=0, le=MAX_COUNT)
    bulk_flush_frequency: Duration = Duration(0)
    timeout: Timeout = Duration.parse("30s")
    broker_timeout: Timeout = Duration.parse("10s")
    channel_buffer_size: int = Field(default=256, ge=1, le=MAX_COUNT)
    keep_alive: Duration = Duration(0)
    compression: Compression = "gzip"
    # Filebeat reads it for gzip only (its range is checked below); no codec has a level past zstd's
    compression_level: int = Field(default=4, le=MAX_COMPRESSION_LEVEL)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=1, le=MAX_KAFKA_BYTES)
    required_acks: Literal[-1, 0, 1] = 1
    version: str = DEFAULT_VERSION
    username: SecretRef = None
    password: SecretRef = None
    sasl: Sasl = Field(default_factory=Sasl)
    ssl: Ssl | None = None
    kerberos: Kerberos | None = None
    enable_krb5_fast: bool | None = None

    @field_validator("compression", mode="before")
    @classmethod
    def _compression(cls, value: Any) -> Any:
        if isinstance(value, str) and value.lower() in COMPRESSION_ALIASES:
            return COMPRESSION_ALIASES[value.lower()]
        return value

    @field_validator("required_acks", mode="before")
    @classmethod
    def _acks(cls, value: Any) -> Any:
        if isinstance(value, str) and re.fullmatch(r"\s*-?[0-9]{1,3}\s*", value, re.ASCII):
            return parse_int(value, "required_acks")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        text = str(value).strip() if isinstance(value, str | int | float) else value
        if not isinstance(text, str) or not _VERSION.match(text):
            raise ValueError(f"must be a Kafka version like 2.1.0 (got {value!r})")
        if not MIN_VERSION <= version_tuple(text) <= MAX_VERSION:
            raise ValueError(f"Kafka version {text} is outside the supported 0.8.2.0 .. 2.6.0")
        return text

    @field_validator("codec")
    @classmethod
    def _codec(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            unknown = [k for k in value if k not in ("json", "format")]
            if unknown or len(value) != 1:
                raise ValueError("set exactly one of codec.json or codec.format")
        return value

    @field_validator("max_retries")
    @classmethod
    def _retries(cls, value: int) -> int:
        if value == 0:
            raise ValueError("must be -1 (retry forever) or a positive count (libbeat rejects 0)")
        return value

    @model_validator(mode="after")
    def _check(self) -> KafkaOutput:
        if self.topic is None and not self.topics:
            raise ValueError("topic: either topic or topics must be set")
        if self.compression == "gzip":
            low, high = GZIP_LEVELS
            if not low <= self.compression_level <= high:
                raise ValueError(
                    f"compression_level: must be between {low} and {high} for gzip"
                    f" (got {self.compression_level})"
                )
        if self.username is not None and self.password is None:
            raise ValueError("password: must be set when username is configured")
        for host in self.hosts:
            if not is_reference(host) and not re.match(r"^[A-Za-z0-9._\-\[\]:]+:\d{1,5}$", host):
                raise ValueError(f'hosts: "{host}" is not host:port or a ${{VAR}} reference')
        return self

    @property
    def effective_workers(self) -> int:
        return self.workers or self.worker


# ---- queue.mem ----------------------------------------------------------------------------------


class MemQueueFlush(StrictModel):
    min_events: int = Field(default=2048, ge=0, le=MAX_COUNT)
    timeout: Duration = Duration.parse("1s")


class MemQueue(StrictModel):
    """`queue.mem` with Filebeat 7.17's memqueue defaults (4096 events, flush.min_events 2048,
    flush.timeout 1s): the build kbt runs, so what a profile leaves unset is what its pods run.
    8.13+ and 9.x ship 3200 / 1600 / 10s: FilebeatConfig fills those in for a profile whose
    `filebeat_version` is of that line."""

    events: int = Field(default=4096, ge=32, le=MAX_COUNT)
    bytes: int | None = Field(default=None, ge=32768, le=MAX_MEMORY_BYTES)
    flush: MemQueueFlush = Field(default_factory=MemQueueFlush)

    @model_validator(mode="after")
    def _check(self) -> MemQueue:
        if self.flush.min_events > self.events:
            raise ValueError(
                f"flush.min_events: {self.flush.min_events} must not exceed events ({self.events})"
            )
        return self

    @property
    def max_get_events(self) -> int:
        """The most events one batch can take from the queue (memqueue broker.go newQueue):
        flush.min_events 0 or 1 selects the old synchronous mode, half the queue per batch."""
        if self.flush.min_events <= 1:
            return (self.events + 1) // 2
        return min(self.flush.min_events, self.events)

    @property
    def effective_flush_timeout(self) -> Duration:
        """How long a batch request waits to fill up (0 = hand over what is there at once)."""
        return Duration(0) if self.flush.min_events <= 1 else self.flush.timeout


class QueueSection(StrictModel):
    mem: MemQueue = Field(default_factory=MemQueue)


class OutputSection(StrictModel):
    kafka: KafkaOutput


class FilebeatConfig(StrictModel):
    """A Filebeat configuration fragment: `output.kafka` plus `queue.mem`, and (profiles only) the
    pods' input side (`input`, tuner/spec/filebeat_input.py) and the Filebeat version the settings
    are for (`filebeat_version`, tuner/spec/filebeat_lines.py): what the fragment leaves unset is
    that version line's default (7.17: queue 4096 / 2048 / 1s; 8.13+ and 9.x: 3200 / 1600 / 10s)."""

    output: OutputSection
    queue: QueueSection = Field(default_factory=QueueSection)
    input: FilebeatInput = Field(default_factory=FilebeatInput)
    filebeat_version: str = DEFAULT_FILEBEAT

    @field_validator("filebeat_version", mode="before")
    @classmethod
    def _known_version(cls, value: Any) -> Any:
        text = str(value).strip() if isinstance(value, str | int | float) else value
        if isinstance(text, str):
            line_of(text)  # ValueError for a version kbt does not model
        return text

    @model_validator(mode="before")
    @classmethod
    def _line_defaults(cls, data: Any) -> Any:
        """The version line's queue defaults for what the fragment leaves unset, and the input
        type it runs (9.x has no `log` input: filestream when unset)."""
        if not isinstance(data, dict) or not isinstance(data.get("filebeat_version"), str | int | float):
            return data
        version = str(data["filebeat_version"]).strip()
        try:
            line = line_of(version)
        except ValueError:
            return data  # the field validator says why
        data = dict(data)
        queue = data.get("queue", {})
        mem = queue.get("mem", {}) if isinstance(queue, dict) else None
        flush = mem.get("flush", {}) if isinstance(mem, dict) else None
        if isinstance(queue, dict) and isinstance(mem, dict) and isinstance(flush, dict):
            flush = {"min_events": line.queue_min_events, "timeout": line.queue_timeout, **flush}
            mem = {"events": line.queue_events, **mem, "flush": flush}
            data["queue"] = {**queue, "mem": mem}
        inp = data.get("input", {})
        if isinstance(inp, dict) and "type" not in inp and not has_log_input(version):
            data["input"] = {**inp, "type": "filestream"}
        return data

    @model_validator(mode="after")
    def _input_exists(self) -> FilebeatConfig:
        if self.input.type == "log" and not has_log_input(self.filebeat_version):
            raise ValueError(
                f"input.type: Filebeat {self.filebeat_version} has no log input (disabled since 9.0):"
                " use filestream"
            )
        return self

    @property
    def line(self) -> FilebeatLine:
        return line_of(self.filebeat_version)

    @property
    def kafka(self) -> KafkaOutput:
        return self.output.kafka

    @property
    def mem(self) -> MemQueue:
        return self.queue.mem

    @property
    def batch_events(self) -> int:
        """Events per batch handed to the output: bulk_max_size capped by the queue (memqueue
        runloop.go handleGetRequest; bulk_max_size 0 asks for the queue's maximum)."""
        bulk = self.kafka.bulk_max_size
        cap = self.mem.max_get_events
        return cap if bulk <= 0 else min(bulk, cap)

    @property
    def fill_events(self) -> int:
        """Events a batch request waits for before flush.timeout: 7.17 fills its flush.min_events
        buffer whatever bulk_max_size asks (eventloop.go); 8.13+ waits for the batch itself."""
        return self.mem.max_get_events if self.line.fill == "flush.min_events" else self.batch_events
