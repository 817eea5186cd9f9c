"""The ClientKind protocol: what every client kind module provides.

A kind owns its typed settings (which ClientProfile fields it takes), the mapping to its engine
(`engine`, the id the driver layer dispatches on, and `client_settings`, the kind's own option
names and values), its request-formation model parameters (`rules`), its renderer, its checker,
`describe()`, and the settings the recommender's search starts from (`families`). Everything is
pure: data in, data out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tuner.core.redact import redact
from tuner.spec.clients.rules import Rules
from tuner.spec.profile import ClientProfile

# ClientProfile fields every kind takes.
COMMON_FIELDS = frozenset({"name", "description", "client", "security"})


@dataclass(frozen=True)
class SearchContext:
    """What the recommender knows when it proposes settings for a kind."""

    budget_ms: float  # the p99 budget (the longest linger-like knob worth trying)
    rate_per_producer: float  # events/s one producer offers
    keyless: bool
    topic_max_bytes: int  # the topic's max.message.bytes
    max_request_bytes: int | None
    base: ClientProfile | None  # the user's baseline of this kind (durability settings are kept)


@dataclass(frozen=True)
class Family:
    """Settings that differ only in one linger-like knob (ms)."""

    name: str
    make: Callable[[float, str], ClientProfile]  # (knob ms, codec) -> profile
    knob_max: float


@dataclass(frozen=True)
class Rendered:
    """A file the kind writes for a profile."""

    filename: str
    text: str


class ClientKind(Protocol):
    name: str  # the `client:` value
    title: str  # for people: "librdkafka", "Java", "Filebeat"
    engine: str  # the driver engine that runs its load
    fields: frozenset[str]  # ClientProfile fields it takes besides COMMON_FIELDS
    codecs: tuple[str, ...]  # compression codecs the client can send
    # One produce request carries several partitions (per broker per flush) or one partition batch.
    multi_partition_requests: bool

    def check(self, profile: ClientProfile) -> None:
        """ValueError naming the setting when the profile is not valid for this kind."""

    def client_settings(self, profile: ClientProfile) -> dict[str, str]:
        """The kind's own option names and values the profile sets (properties or filebeat.yml
        paths), as the client reads them."""

    def rules(self, profile: ClientProfile) -> Rules:
        """The request-formation model parameters the profile stands for."""

    def render(self, profile: ClientProfile, header: Sequence[str]) -> Rendered:
        """The client's config file for the profile, under `#` comment lines."""

    def check_fits(self, profile: ClientProfile, topic_max_bytes: int, event_bytes: int | None) -> None:
        """ValueError when the profile's batches or events cannot reach a topic with this limit."""

    def describe(self, profile: ClientProfile) -> str:
        """A short text of the batching settings, e.g. `librdkafka linger 850 ms sticky zstd`."""

    def families(self, ctx: SearchContext) -> list[Family]:
        """The setting families the recommender bisects for this kind."""

    def upgrade_v1(self, data: dict[str, Any]) -> dict[str, Any]:
        """A profile as stored by version-1 records, in today's shape."""


def check_fields(kind: ClientKind, profile: ClientProfile, hints: Mapping[str, str] | None = None) -> None:
    """Reject the ClientProfile fields a kind does not take (one spelling per knob)."""
    fields = type(profile).model_fields
    for field in sorted(set(fields) - COMMON_FIELDS - kind.fields):
        if getattr(profile, field) == fields[field].get_default(call_default_factory=True):
            continue  # left at its default (as dumps and records spell every field)
        hint = (hints or {}).get(field, "")
        raise ValueError(f"{field}: not a {kind.name} setting{hint}")


def kept_durability(base: ClientProfile | None, kind: ClientKind) -> dict[str, Any]:
    """Durability settings are the user's choice, not batching: keep the baseline's."""
    if base is None or base.client != kind.name:
        return {}
    return {
        f: getattr(base, f)
        for f in ("acks", "idempotence")
        if f in kind.fields and getattr(base, f) is not None
    }


def properties_text(properties: Mapping[str, str], header: Sequence[str]) -> str:
    """`key=value` lines under `#` comment lines, secrets redacted."""
    safe = redact(dict(properties))
    out = [f"# {line}" if line else "#" for line in header]
    out += [
        "# bootstrap.servers and security settings come from your deployment; give credentials only as",
        "# ${VAR} references resolved from the environment.",
    ]
    out += [f"{key}={_escape(str(value))}" for key, value in safe.items()]
    return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    # java.util.Properties: backslash escapes; leading spaces would be dropped.
    text = value.replace("\\", "\\\\")
    return "\\" + text if text.startswith(" ") else text


def num(conf: Mapping[str, str], key: str, default: float) -> float:
    """A numeric property, or the client's default when unset or not a number."""
    raw = conf.get(key)
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        return default


def name_of(client: str, codec: str, knob: float, extra: str = "") -> str:
    """The name of a recommender candidate, e.g. `rec-java-b128k-zstd-850ms`."""
    return "-".join(p for p in ("rec", client, extra, codec, f"{round(knob)}ms") if p)
