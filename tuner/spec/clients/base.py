"""ClientKind: what every client kind module provides (one subclass and one instance per kind).

A kind owns its typed settings (the ClientProfile fields it takes), the mapping to its engine
(`engine`, an EngineId: the driver's registry holds the engine for it; `client_settings`, the
client's own option names and values), its request-formation model parameters (`rules`), its
renderer, its checker, `describe()`, and the settings the recommender's search bisects
(`families`). All pure. The defaults below suit a producer configured by properties (librdkafka,
Java).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tuner.core.numbers import parse_number
from tuner.core.redact import redact
from tuner.spec.clients.rules import Rules
from tuner.spec.engine_id import EngineId
from tuner.spec.profile import ClientProfile

COMMON_FIELDS = frozenset({"name", "description", "client", "security"})  # every kind takes these
PRODUCER_FIELDS = frozenset(
    {"linger_ms", "batch_messages", "batch_bytes", "compression", "compression_level", "acks",
     "idempotence", "partitioner", "max_in_flight", "overrides"}
)  # fmt: skip


@dataclass(frozen=True)
class SearchContext:
    """What the recommender knows when it proposes settings for a kind."""

    budget_ms: float  # the p99 budget: the longest linger-like knob worth trying
    rate_per_producer: float  # events/s one producer offers
    keyless: bool
    topic_max_bytes: int  # the topic's max.message.bytes
    max_request_bytes: int | None
    base: ClientProfile | None  # the user's baseline (its durability settings are kept)


@dataclass(frozen=True)
class Family:
    """Settings that differ only in one linger-like knob (ms)."""

    name: str
    make: Callable[[float, str], ClientProfile]  # (knob ms, codec) -> profile
    knob_max: float


@dataclass(frozen=True)
class Rendered:
    filename: str
    text: str


class ClientKind:
    name: str  # the `client:` value
    title: str  # for people: "librdkafka", "Java", "Filebeat"
    engine: EngineId  # the driver engine that runs its load (tuner/driver/engines.py maps it)
    fields: frozenset[str] = PRODUCER_FIELDS  # ClientProfile fields it takes besides COMMON_FIELDS
    hints: Mapping[str, str] = {}  # field -> where that setting goes for this kind
    codecs: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")  # codecs the client sends
    # One produce request carries several partitions (per broker per flush), or one partition batch.
    multi_partition_requests: bool

    def check(self, profile: ClientProfile) -> None:
        """ValueError naming a field the kind does not take (one spelling per knob)."""
        fields = type(profile).model_fields
        for field in sorted(set(fields) - COMMON_FIELDS - self.fields):
            if getattr(profile, field) != fields[field].get_default(call_default_factory=True):
                raise ValueError(f"{field}: not a {self.name} setting{self.hints.get(field, '')}")

    def client_settings(self, profile: ClientProfile) -> dict[str, str]:
        """The client's own option names and values the profile sets."""
        raise NotImplementedError

    def rules(self, profile: ClientProfile) -> Rules:
        """The request-formation model parameters the profile stands for."""
        raise NotImplementedError

    def families(self, ctx: SearchContext) -> list[Family]:
        """The setting families the recommender bisects for this kind."""
        raise NotImplementedError

    def render(self, profile: ClientProfile, header: Sequence[str]) -> Rendered:
        """The client's config file for the profile, under `#` comment lines, secrets redacted."""
        out = [f"# {line}" if line else "#" for line in header]
        out += [
            "# bootstrap.servers and security settings come from your deployment; give credentials only as",
            "# ${VAR} references resolved from the environment.",
        ]
        for key, value in redact(self.client_settings(profile)).items():
            text = str(value).replace("\\", "\\\\")  # java.util.Properties escapes; keep leading spaces
            out.append(f"{key}=" + ("\\" + text if text.startswith(" ") else text))
        return Rendered(f"{self.name}.properties", "\n".join(out) + "\n")

    def also_rendered(self, profile: ClientProfile, header: Sequence[str]) -> tuple[Rendered, ...]:
        """Other tools' config files that run this client with the same settings (none by default)."""
        return ()

    def check_fits(self, profile: ClientProfile, topic_max_bytes: int, event_bytes: int | None) -> None:
        """ValueError when the profile's batches cannot reach a topic with this limit."""
        if profile.batch_bytes is not None and profile.batch_bytes > topic_max_bytes:
            raise ValueError(
                f"batch_bytes: {profile.batch_bytes} (profile {profile.name}) exceeds the broker's"
                f" message.max.bytes {topic_max_bytes} (raise the topic config max.message.bytes)"
            )

    def describe(self, profile: ClientProfile) -> str:
        """A short text of the batching settings, e.g. `librdkafka linger 850 ms sticky zstd`."""
        parts = [self.name]
        if profile.linger_ms is not None:
            parts.append(f"linger {profile.linger_ms:g} ms")
        if "batch_messages" not in self.fields and profile.batch_bytes is not None:
            parts.append(f"batch.size {profile.batch_bytes}")  # the batch knob of byte-bounded clients
        if profile.partitioner != "default":
            parts.append(profile.partitioner)
        return " ".join([*parts, profile.compression or "default codec"])

    def kept(self, base: ClientProfile | None) -> dict[str, Any]:
        """Durability settings are the user's choice, not batching: the baseline's, if of this kind."""
        if base is None or base.client != self.name:
            return {}
        return {
            f: getattr(base, f)
            for f in ("acks", "idempotence")
            if f in self.fields and getattr(base, f) is not None
        }

    def upgrade_v1(self, data: dict[str, Any]) -> dict[str, Any]:
        """A profile as version-1 records stored it, in today's shape."""
        return data


def num(conf: Mapping[str, str], key: str, default: float) -> float:
    """A numeric property, or the client's default when unset or not a number."""
    try:
        return parse_number(conf[key], key) if key in conf else default
    except ValueError:
        return default


def name_of(client: str, codec: str, knob: float, extra: str = "") -> str:
    """A recommender candidate's name, e.g. `rec-java-b128k-zstd-850ms`."""
    return "-".join(p for p in ("rec", client, extra, codec, f"{round(knob)}ms") if p)
