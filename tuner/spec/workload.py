"""WorkloadSpec: the traffic a sweep offers (topics, producers, rate, messages, keys, timing)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from tuner.core import inputs
from tuner.core.numbers import parse_int
from tuner.core.paths import expand_user, resolved
from tuner.core.text import one_line
from tuner.core.units import MAX_BROKER_ID
from tuner.spec.base import ConfigMap, StrictModel, check_unique
from tuner.spec.duration import MAX_SPEC_SECONDS
from tuner.spec.limits import (
    BROKER_MESSAGE_MAX_BYTES,
    KEY_PATTERN_MAX_CHARS,
    MAX_CONSUMER_GROUPS,
    MAX_COUNT,
    MAX_ITEMS,
    MAX_PARTITIONS,
    MAX_PROCESSES,
    MAX_PRODUCERS,
    MAX_RATE_PER_S,
    MAX_RATIO,
    MAX_RUN_S,
    MIN_DURATION_S,
    MIN_INSYNC_REPLICAS_KEY,
    MIN_RATE_PER_PRODUCER,
    TOPIC_MAX_MESSAGE_BYTES_KEY,
    TOPIC_NAME_PATTERN,
)

MAX_EVENT_BYTES = 64 * 1024 * 1024
BrokerId = Annotated[int, Field(ge=0, le=MAX_BROKER_ID)]


def _positive_int(text: str) -> int | None:
    try:
        value = parse_int(text, "")
    except ValueError:
        return None
    return value if value > 0 else None


class TopicSpec(StrictModel):
    """One topic the run creates before producing and deletes afterwards."""

    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    partitions: int = Field(gt=0, le=MAX_PARTITIONS)
    replication_factor: int = Field(default=1, gt=0, le=16)
    # Raw topic configs, e.g. {"remote.storage.enable": "true", "local.retention.ms": "60000"}.
    configs: ConfigMap = Field(default_factory=dict)
    # The broker leading each partition, one id per partition (a captured cluster's placement):
    # the run creates the topic with an explicit replica assignment, this leader first. Without
    # it Kafka places leaders round-robin. Left out of the dump when unset, so the run hashes of
    # specs without it stay as they were.
    leaders: list[BrokerId] | None = Field(
        default=None, max_length=MAX_PARTITIONS, exclude_if=lambda value: value is None
    )
    # Each partition's share of the keyed records, one per partition (a captured topic's records
    # per partition): with `keys: random` the engine draws keys its client's partitioner puts on
    # each partition in these shares, instead of keys that fall where their hashes put them.
    key_shares: list[Annotated[float, Field(ge=0, le=MAX_RATIO)]] | None = Field(
        default=None, max_length=MAX_PARTITIONS, exclude_if=lambda value: value is None
    )

    @property
    def max_message_bytes(self) -> int:
        """The largest record batch the broker accepts for this topic."""
        raw = self.configs.get(TOPIC_MAX_MESSAGE_BYTES_KEY)
        return parse_int(raw, TOPIC_MAX_MESSAGE_BYTES_KEY) if raw is not None else BROKER_MESSAGE_MAX_BYTES

    @model_validator(mode="after")
    def _check_per_partition(self) -> TopicSpec:
        for field, values in (("leaders", self.leaders), ("key_shares", self.key_shares)):
            if values is not None and len(values) != self.partitions:
                what = "broker id(s)" if field == "leaders" else "share(s)"
                raise ValueError(
                    f"{field}: {len(values)} {what} for {self.partitions} partition(s);"
                    " give one per partition"
                )
        if self.key_shares is not None and not sum(self.key_shares) > 0:
            raise ValueError("key_shares: all zero; at least one partition takes records")
        return self

    @model_validator(mode="after")
    def _check_max_message_bytes(self) -> TopicSpec:
        for key in (TOPIC_MAX_MESSAGE_BYTES_KEY, MIN_INSYNC_REPLICAS_KEY):
            raw = self.configs.get(key)
            if raw is not None and _positive_int(raw) is None:
                raise ValueError(f'configs."{key}" must be a positive integer (got "{raw}")')
        isr = _positive_int(self.configs.get(MIN_INSYNC_REPLICAS_KEY) or "")
        if isr is not None and isr > self.replication_factor:
            # Kafka creates such a topic, then refuses every acks=all write (NOT_ENOUGH_REPLICAS).
            raise ValueError(
                f'configs."{MIN_INSYNC_REPLICAS_KEY}" {isr} exceeds replication_factor'
                f" {self.replication_factor}: every acks=all write would fail"
            )
        return self


class LogFileSource(StrictModel):
    """Replay a log file: line by line, or lines joined (newline-separated) into events of about
    `event_bytes`. `path` is relative to the spec file. When the file is absent, `if_missing:
    generate` falls back to generated log-like lines of the same size (the example specs use this so
    they run anywhere); `error` makes loading fail."""

    kind: Literal["log_file"]
    path: str = Field(min_length=1)
    event_bytes: int | None = Field(default=None, gt=0, le=MAX_EVENT_BYTES)
    if_missing: Literal["error", "generate"] = "error"
    # Absolute path, filled in by the loader (not part of the spec or its hash).
    resolved_path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo) -> LogFileSource:
        # Paths resolve (and are checked) only when loading a spec file, which passes its directory
        # as context; a stored run record reloads without touching the file system.
        context = info.context or {}
        if "base_dir" not in context:
            return self
        if self.resolved_path is None:
            path = expand_user(self.path)
            base = context["base_dir"]
            if not path.is_absolute() and base is not None:
                path = Path(base) / path
            object.__setattr__(self, "resolved_path", resolved(path))
        if self.if_missing == "error" and not self.available:
            raise ValueError(f'path: no such log file "{self.path}" (set if_missing: generate to fall back)')
        return self

    @property
    def available(self) -> bool:
        return self.resolved_path is not None and inputs.is_file(self.resolved_path)

    @property
    def nominal_bytes(self) -> int | None:
        """Target event size when known up front (None for line-by-line replay)."""
        return self.event_bytes


class GeneratedSource(StrictModel):
    """Generated log-like lines (timestamp, level, component, text) of exactly `bytes` each."""

    kind: Literal["generated"]
    bytes: int = Field(gt=0, le=MAX_EVENT_BYTES)

    @property
    def nominal_bytes(self) -> int:
        return self.bytes


class SizeBucket(StrictModel):
    bytes: int = Field(gt=0, le=MAX_EVENT_BYTES)
    weight: float = Field(gt=0, le=MAX_RATIO)


class SizeDistributionSource(StrictModel):
    """Generated log-like events whose size is drawn from weighted buckets, e.g. 95% 1.6 KB and
    5% 600 KB."""

    kind: Literal["size_distribution"]
    buckets: list[SizeBucket] = Field(min_length=1, max_length=MAX_ITEMS)

    @property
    def nominal_bytes(self) -> int:
        """The largest event size: what must fit under the broker's message limit."""
        return max(b.bytes for b in self.buckets)

    @property
    def mean_bytes(self) -> float:
        total = sum(b.weight for b in self.buckets)
        return sum(b.bytes * b.weight for b in self.buckets) / total


MessageSource = Annotated[
    LogFileSource | GeneratedSource | SizeDistributionSource, Field(discriminator="kind")
]


@functools.lru_cache(maxsize=16)
def key_matcher(pattern: str) -> Any:
    """`keys.pattern` compiled by RE2: matching takes time linear in the event (Python's `re`
    backtracks: `(a*)*b` against a long run of a's never ends). ValueError in spec words when the
    pattern is too long or outside RE2's syntax (backreferences, lookaround)."""
    import re2

    if len(pattern) > KEY_PATTERN_MAX_CHARS:
        raise ValueError(f"keys.pattern: {len(pattern)} characters; at most {KEY_PATTERN_MAX_CHARS}")
    options = re2.Options()
    options.log_errors = False  # the error is worded below, not logged to stderr by RE2
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(
            f"keys.pattern: not a regex kbt can match in linear time ({one_line(str(reason), 80)});"
            " RE2 syntax: no backreferences or lookaround"
        ) from None


class KeySpec(StrictModel):
    """Record keys: `none` (keyless, the Filebeat default), `random` (uniform over `cardinality`
    keys) or `field` (the first group of `pattern` matched against the event)."""

    kind: Literal["none", "random", "field"] = "none"
    cardinality: int | None = Field(default=None, gt=0, le=MAX_COUNT)
    pattern: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # `keys: none` / `keys: random` are shorthands for {kind: ...}.
        if isinstance(data, str):
            return {"kind": data}
        return data

    @model_validator(mode="after")
    def _check(self) -> KeySpec:
        if self.kind == "field":
            if not self.pattern:
                raise ValueError("keys: kind field needs a pattern (a regex whose first group is the key)")
            if key_matcher(self.pattern).groups < 1:
                raise ValueError("keys.pattern: needs a capture group (the key)")
        elif self.pattern is not None:
            raise ValueError(f"keys.pattern only applies to kind field (kind is {self.kind})")
        if self.kind != "random" and self.cardinality is not None:
            raise ValueError(f"keys.cardinality only applies to kind random (kind is {self.kind})")
        return self

    def key_of(self, text: str) -> str | None:
        """The key of one event (kind field): the pattern's first group, or None without a match."""
        match = key_matcher(self.pattern or "").search(text)
        return str(match.group(1)) if match and match.group(1) is not None else None


class ConsumerGroupSpec(StrictModel):
    """A consumer group reading the workload's topics while it runs (used by stress tests):
    `realtime` reads at the head, `lagging` reads `lag_s` seconds behind."""

    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    mode: Literal["realtime", "lagging"]
    consumers: int = Field(default=1, gt=0, le=64)
    lag_s: float | None = Field(default=None, gt=0, le=MAX_SPEC_SECONDS)

    @model_validator(mode="after")
    def _check(self) -> ConsumerGroupSpec:
        if self.mode == "lagging" and self.lag_s is None:
            raise ValueError("a lagging consumer group needs lag_s")
        if self.mode == "realtime" and self.lag_s is not None:
            raise ValueError("lag_s only applies to a lagging consumer group")
        return self


Rate = Annotated[float, Field(le=MAX_RATE_PER_S)] | Literal["max"]


class WorkloadSpec(StrictModel):
    """What is offered: `producers` producer instances ("pods") spread over `processes` OS processes,
    each sending `rate_per_producer` msgs/s (open loop, latency from the intended send time) or as
    fast as it can (`max`, closed loop), for `duration_s` seconds of which the first `warmup_s` are
    not measured."""

    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    description: str = ""
    topics: list[TopicSpec] = Field(min_length=1, max_length=16)
    producers: int = Field(default=1, gt=0, le=MAX_PRODUCERS)
    processes: int = Field(default=1, gt=0, le=MAX_PROCESSES)
    rate_per_producer: Rate
    message: MessageSource
    keys: KeySpec = Field(default_factory=KeySpec)
    duration_s: float = Field(ge=MIN_DURATION_S, le=MAX_RUN_S)
    warmup_s: float = Field(default=0, ge=0, le=MAX_RUN_S)  # and shorter than duration_s
    consumer_groups: list[ConsumerGroupSpec] = Field(default_factory=list, max_length=MAX_CONSUMER_GROUPS)

    @field_validator("rate_per_producer", mode="before")
    @classmethod
    def _rate(cls, value: Any) -> Any:
        if value == "max":
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f'must be a number of msgs/s per producer or "max" (got {value!r})')
        if value <= 0:
            raise ValueError(f'must be a positive number of msgs/s per producer or "max" (got {value})')
        if value < MIN_RATE_PER_PRODUCER:
            raise ValueError(f"must be at least {MIN_RATE_PER_PRODUCER} msgs/s per producer (got {value:g})")
        if value > MAX_RATE_PER_S:
            raise ValueError(f"must be at most {MAX_RATE_PER_S:g} msgs/s per producer (got {value:g})")
        return float(value)

    @model_validator(mode="after")
    def _check(self) -> WorkloadSpec:
        if self.warmup_s >= self.duration_s:
            raise ValueError(
                f"warmup_s ({self.warmup_s:g}) must be shorter than duration_s ({self.duration_s:g})"
            )
        if self.processes > self.producers:
            raise ValueError(f"processes ({self.processes}) cannot exceed producers ({self.producers})")
        check_unique("topic", [t.name for t in self.topics])
        shared = [i for i, t in enumerate(self.topics) if t.key_shares is not None]
        if shared and self.keys.kind != "random":
            raise ValueError(
                f"topics[{shared[0]}].key_shares needs keys: random (the engine picks the keys that"
                f" land on each partition; keys are {self.keys.kind})"
            )
        check_unique("consumer group", [g.name for g in self.consumer_groups])
        size = self.message.nominal_bytes
        limit = self.max_message_bytes
        if size is not None and size > limit:
            raise ValueError(
                f"message: events of {size} bytes exceed the topic limit of {limit} bytes"
                f' (raise topic config "{TOPIC_MAX_MESSAGE_BYTES_KEY}")'
            )
        return self

    @property
    def offered_msgs_per_s(self) -> float | None:
        """Total offered load, or None for closed loop (`max`)."""
        if self.rate_per_producer == "max":
            return None
        return float(self.rate_per_producer) * self.producers

    @property
    def max_message_bytes(self) -> int:
        """The smallest per-topic record batch limit across the workload's topics."""
        return min(t.max_message_bytes for t in self.topics)


def dump_keeping_path(model: BaseModel) -> dict[str, Any]:
    """`model`'s JSON dump with its log file source's resolved path (a dump leaves it out), so the
    spec validated again from it reads the file its spec file named."""
    data = model.model_dump(mode="json")
    resolved = getattr(getattr(model, "message", None), "resolved_path", None)
    if resolved is not None:
        data["message"]["resolved_path"] = str(resolved)
    return data


def with_message_path(workload: WorkloadSpec, message_path: str | None) -> WorkloadSpec:
    """`workload` with its log file source's path restored after a JSON trip that dropped it (on
    another machine: when the file is there too)."""
    message = workload.message
    if message_path is not None and getattr(message, "resolved_path", "absent") is None:
        object.__setattr__(message, "resolved_path", Path(message_path))
    return workload
