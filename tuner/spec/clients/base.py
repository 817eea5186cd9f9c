"""ClientKind: what every client kind module provides (one subclass and one instance per kind).

A kind owns its typed settings model (`model`, a tuner.spec.profile.ProfileBase subclass whose
`client` is the kind's name), the mapping to its engine (`engine`, an EngineId: the driver's
registry holds the engine for it; `client_settings`, the client's own option names and values),
its request-formation model parameters (`rules`), its renderer, its checker, `describe()`, and the
settings the recommender's search bisects (`families`). All pure. Kinds configured by properties build on
tuner/spec/clients/producer.py.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from tuner.core.numbers import parse_number
from tuner.spec.clients.rules import Rules
from tuner.spec.engine_id import EngineId
from tuner.spec.profile import ProfileBase

if TYPE_CHECKING:
    from tuner.spec.clients import ClientProfile

P = TypeVar("P", bound=ProfileBase)


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

    @property
    def sha256(self) -> str:
        """The hash a run record names its client's file by (store/figures.py ArtifactRef)."""
        return hashlib.sha256(self.text.encode()).hexdigest()


class ClientKind(Generic[P]):
    name: str  # the `client:` value
    title: str  # for people: "librdkafka", "Java", "Filebeat"
    engine: EngineId  # the driver engine that runs its load (tuner/driver/engines.py maps it)
    model: type[P]  # the kind's settings model (its `client` field is a Literal of `name`)
    hints: Mapping[str, str] = {}  # another kind's field -> where that setting goes for this kind
    codecs: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")  # codecs the client sends
    # One produce request carries several partitions (per broker per flush), or one partition batch.
    multi_partition_requests: bool
    # How a captured client is known as this kind (tuner/model/capture.py): a part of the software
    # name it gives the brokers (KIP-511, lower case), or its default client id; and a note when
    # the kind only stands in for that client.
    software: tuple[str, ...] = ()
    client_ids: tuple[str, ...] = ()
    stands_in_for: str | None = None
    secrets_hint: tuple[str, ...] = ()  # how a deployment gives this client its secrets (comment lines)

    def __init__(self) -> None:
        _BY_MODEL[self.model] = self

    def client_settings(self, profile: P) -> dict[str, str]:
        """The client's own option names and values the profile sets."""
        raise NotImplementedError

    def rules(self, profile: P) -> Rules:
        """The request-formation model parameters the profile stands for."""
        raise NotImplementedError

    def families(self, ctx: SearchContext) -> list[Family]:
        """The setting families the recommender bisects for this kind."""
        raise NotImplementedError

    def render(self, profile: P, header: Sequence[str]) -> Rendered:
        """The client's config file for the profile, under `#` comment lines, secrets redacted."""
        raise NotImplementedError

    def artifact(self, profile: P) -> Rendered:
        """The deployable file itself: `render` with no header. A run's client is started from this
        text (the engines load it as the client would), and `render(profile, header)` is the same
        text under the header's `#` lines, so the file a user receives is the file that ran."""
        return self.render(profile, ())

    def also_rendered(self, profile: P, header: Sequence[str]) -> tuple[Rendered, ...]:
        """Other tools' config files that run this client with the same settings (none by default)."""
        return ()

    def check_fits(self, profile: P, topic_max_bytes: int, event_bytes: int | None) -> None:
        """ValueError when the profile's batches cannot reach a topic with this limit."""

    # The endings of this client's own files that say nothing of the client (a team names them
    # `KIND:FILE`), e.g. `.properties`.
    own_file_suffixes: tuple[str, ...] = ()

    def own_file_profile(self, path: Path, data: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The profile a client's own config file stands for, when a team names that file where a
        profile goes: `data` is the file read as YAML, or None when the team named the file with
        this kind (`java:producer.properties`: read it this client's way). None when it is not this
        client's file."""
        return None

    def describe(self, profile: P) -> str:
        """A short text of the batching settings, e.g. `librdkafka linger 850 ms sticky zstd`."""
        return self.name

    # Settings one of which the client runs in place of the others, each a profile path (dotted, as
    # a sweep names it): a pair of names for one option, or options of which one is chosen.
    alternatives: tuple[tuple[str, ...], ...] = ()

    def drop_rivals(self, data: dict[str, Any], path: Sequence[str]) -> None:
        """Take out of `data` (a profile's dump) every other setting that decides what `path` sets
        (a sweep that names a value runs that value, whatever else the profile or its file says)."""
        dotted = ".".join(path)
        for group in self.alternatives:
            chosen = [m for m in group if dotted == m or dotted.startswith(m + ".")]
            for member in group if chosen else ():
                if member != chosen[0]:
                    _drop(data, member.split("."))

    def idle(self, profile: P, path: Sequence[str]) -> tuple[str, str] | None:
        """When the client does not act on the setting at `path` in `profile` because another of its
        settings turns it off: (that setting's profile path, dotted; why, one clause); else None."""
        return None

    def kept(self, base: ClientProfile | None) -> dict[str, Any]:
        """Durability settings are the user's choice, not batching: the baseline's, if of this kind."""
        if base is None or base.client != self.name:
            return {}
        return {
            f: getattr(base, f)
            for f in ("acks", "idempotence")
            if f in self.model.model_fields and getattr(base, f) is not None
        }

    def durability(self, profile: P) -> dict[str, str]:
        """The durability settings the profile's client runs with, by the client's names (a
        recommendation never changes them; kinds configured by properties state every one)."""
        return {k: str(v) for k, v in self.kept(cast("ClientProfile", profile)).items()}

    def durability_note(self, profile: P, base: ClientProfile | None) -> str | None:
        """A sentence for a recommendation: the durability the profile runs with and where it came
        from (None for a kind whose files state none of it)."""
        return None

    def captured(self, acks: str, compressed: bool, record_limit: int | None) -> dict[str, Any]:
        """The settings of a profile that replays a captured group of this kind: the acks it sent
        ("all", "1" or "0"), whether its batches were compressed, and a record limit when its
        largest record passes the client's default (None: the default holds)."""
        return {}

    def upgrade_v1(self, data: dict[str, Any]) -> dict[str, Any]:
        """A profile as version-1 records stored it, in today's shape."""
        return data


_BY_MODEL: dict[type[ProfileBase], ClientKind[Any]] = {}  # each kind module's instance, by its model


def kind_by_model(model: type[ProfileBase]) -> ClientKind[Any]:
    """The kind whose settings model is `model` (its module created it)."""
    return _BY_MODEL[model]


def _drop(data: dict[str, Any], keys: Sequence[str]) -> None:
    """`data` without the nested key at `keys` (absent: nothing to take)."""
    node: Any = data
    for key in keys[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(keys[-1], None)


def num(conf: Mapping[str, str], key: str, default: float) -> float:
    """A numeric property, or the client's default when unset or not a number."""
    try:
        return parse_number(conf[key], key) if key in conf else default
    except ValueError:
        return default


def name_of(client: str, codec: str, knob: float, extra: str = "") -> str:
    """A recommender candidate's name, e.g. `rec-java-b128k-zstd-850ms`."""
    return "-".join(p for p in ("rec", client, extra, codec, f"{round(knob)}ms") if p)


def team_file_profile(
    kind: ClientKind[Any], path: Path, left: Sequence[str], **settings: Any
) -> dict[str, Any]:
    """A team file as a profile of `kind`: named from the file's name (a run name's characters),
    described as what it is and what of it the lab or the target sets instead (`left`)."""
    what = f" ({', '.join(left)}: the lab's or the target's)" if left else ""
    return {
        "name": re.sub(r"[^A-Za-z0-9._-]", "-", path.stem)[:100].strip(".") or kind.name,
        "client": kind.name,
        "description": f"{path.name} as {kind.title} reads it{what}",
        **settings,
    }
