"""The producer knobs librdkafka and Java share, and what a properties-configured kind does by default.

`ProducerProfile` holds the client-neutral knobs (`None` = the client's own default) plus raw
`overrides` properties; a kind configured by properties subclasses it (adding knobs only it has)
and `ProducerKind` (rendering a .properties file, describing the knobs, checking batch bytes).

Durability (acks, idempotence, retries, requests in flight) is the user's, never tuned: a kind's
settings always state it, the client's real default where the profile sets none (`DURABILITY`,
`durability_defaults`), so the file a user deploys says what the run that confirmed it used; a
recommendation keeps the baseline's (`kept`). What a deployment sets outside the file (the brokers,
security, the client id) is the kind's `environment`: its engine layers exactly those on top.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import Field, field_validator, model_validator

from tuner.core.envref import is_pure_reference
from tuner.core.errors import BadInput
from tuner.core.inputs import shown_path
from tuner.core.numbers import parse_number
from tuner.core.properties import properties_line, properties_with_lines, read_properties
from tuner.core.redact import is_secret_name, redact
from tuner.spec.base import Acks, ConfigMap, normal_acks
from tuner.spec.clients.base import ClientKind, Rendered, kind_by_model, team_file_profile
from tuner.spec.limits import DEFAULT_MESSAGE_TIMEOUT_MS, MAX_KAFKA_BYTES, MESSAGE_TIMEOUT_KEYS
from tuner.spec.profile import ProfileBase

if TYPE_CHECKING:
    from tuner.spec.clients import ClientProfile

Compression = Literal["none", "gzip", "snappy", "lz4", "zstd"]
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


class ProducerProfile(ProfileBase):
    """A producer configured by properties: the shared knobs, mapped to property names by its kind."""

    linger_ms: float | None = Field(default=None, ge=0, le=900_000)
    batch_bytes: int | None = Field(default=None, gt=0, le=MAX_KAFKA_BYTES)
    compression: Compression | None = None
    compression_level: int | None = None  # bounded by its codec's range in _check
    acks: Acks | None = None
    idempotence: bool | None = None
    partitioner: Partitioner = "default"
    max_in_flight: int | None = Field(default=None, gt=0, le=1_000_000)
    # Raw client properties applied last, e.g. {"queue.buffering.max.kbytes": "65536"}.
    overrides: ConfigMap = Field(default_factory=dict)

    _acks = field_validator("acks", mode="before")(normal_acks)

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
    def _consistent(self) -> ProducerProfile:
        if self.compression_level is not None:
            codec = self.codec
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
    def raw_properties(self) -> Mapping[str, str]:
        return self.overrides

    @property
    def codec(self) -> str:
        """The codec the client runs: an override's of compression.type (under any name its client
        takes for it: overrides are written last, so they win), else the knob's, else none."""
        kind = kind_by_model(type(self))
        same = kind.canonical if isinstance(kind, ProducerKind) else str
        named = [v for k, v in self.overrides.items() if same(k) == same("compression.type")]
        return named[-1].strip().lower() if named else self.compression or "none"

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


_BOOLEANS = ({"true", "t", "1"}, {"false", "f", "0"})  # librdkafka's spellings of each


def same_value(key: str, a: str, b: str) -> bool:
    """Two spellings of one property's value the clients take alike: acks all is -1, case aside (a
    client stores its enums and booleans in its own case; a string it keeps is kept as written), a
    boolean's 1/t and 0/f, a number in any notation (5.0 is 5; librdkafka reads 010 as octal 8, and
    that stays a difference)."""
    x, y = (_normal(key, v) for v in (a, b))
    if x == y or any(x in words and y in words for words in _BOOLEANS):
        return True
    try:
        return parse_number(x, key) == parse_number(y, key)
    except ValueError:
        return False


def _normal(key: str, value: str) -> str:
    text = value.strip().lower()
    return "-1" if key in ("acks", "request.required.acks") and text == "all" else text  # acks all


P = TypeVar("P", bound=ProducerProfile)


class ProducerKind(ClientKind[P]):
    """A kind configured by properties: a .properties file, batches bounded by batch_bytes."""

    # The durability properties, each with the aliases the client also takes for it.
    DURABILITY: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("acks", ()),
        ("enable.idempotence", ()),
        ("retries", ()),
        ("max.in.flight.requests.per.connection", ()),
    )
    # What a deployment sets outside the file; the kind's engine layers these (and its own
    # measurement hooks, `measurement`) on top of the file, nothing else.
    # The properties a recommendation's search sets, under every name the client takes for them.
    SEARCHED: frozenset[str] = frozenset()
    environment: tuple[str, ...] = ("bootstrap.servers", "security.protocol", "sasl.*", "ssl.*", "client.id")
    measurement: tuple[str, ...] = ()

    own_file_suffixes = (".properties", ".conf", ".config", ".cfg")
    # Another name the client takes for a property -> the client's own name for it.
    aliases: Mapping[str, str] = {}
    # Each knob -> the properties it decides (`client_settings` writes them from it, or leaves them to
    # the client's default); a unit test holds every kind's mapping to its client_settings.
    knob_properties: Mapping[str, tuple[str, ...]] = {}

    def canonical(self, key: str) -> str:
        """The client's own name of a property it takes under `key`."""
        return self.aliases.get(key, key)

    def drop_rivals(self, data: dict[str, Any], path: Sequence[str]) -> None:
        """A knob's property, or an override's, in place of the same property under any other of its
        names: an override of it (the file's), or the knob that writes it."""
        overrides = data.get("overrides")
        if not isinstance(overrides, dict):
            overrides = {}
        if len(path) == 1 and path[0] in self.knob_properties:
            decided = {self.canonical(k) for k in self.knob_properties[path[0]]}
            for key in [k for k in overrides if self.canonical(k) in decided]:
                del overrides[key]
        elif len(path) == 2 and path[0] == "overrides":
            name = self.canonical(path[1])
            for key in [k for k in overrides if k != path[1] and self.canonical(k) == name]:
                del overrides[key]
            for knob, keys in self.knob_properties.items():
                if name in {self.canonical(k) for k in keys}:
                    data.pop(knob, None)

    def set_by_deployment(self, key: str) -> bool:
        """A property the deployment sets outside the file (`environment`, under any of its names),
        or a secret."""
        canonical = self.canonical(key)
        names = {key, canonical, *(a for a, c in self.aliases.items() if c == canonical)}
        return is_secret_name(key) or any(fnmatchcase(n, p) for n in names for p in self.environment)

    def own_file_profile(self, path: Path, data: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A team's producer properties named `KIND:FILE` where a profile goes (a properties file
        does not say which client reads it): every property as an override, as the client reads it,
        but what the deployment sets (brokers, security, client id, serializers, secrets): the lab's
        or the target's. Durability is the file's. A YAML file is never this kind's own."""
        if data is not None:
            return None
        if path.suffix.lower() in (".yml", ".yaml"):  # read as properties, its YAML keys were settings
            raise BadInput(
                f"{shown_path(path)}: a YAML file, not {self.title} properties: name a Filebeat or"
                " collector config without a kind"
            )
        props = self.read_file(read_properties(path), shown_path(path))
        left = sorted(k for k in props if self.set_by_deployment(k))
        return team_file_profile(
            self, path, left, overrides={k: v for k, v in props.items() if k not in left}
        )

    def read_file(self, text: str, shown: str) -> dict[str, str]:
        """A properties file's settings, each a property the client reads with a value it takes
        (`settings_problem`): else BadInput naming the file's line of the property."""
        lines = properties_with_lines(text, shown)
        props = {k: v for k, (v, _) in lines.items()}
        found = self.settings_problem(props, props)
        if found is not None:
            key, problem = found
            raise BadInput(f"{shown}:{lines[key][1]}: {problem}" if key in lines else f"{shown}: {problem}")
        return props

    def settings_problem(
        self, names: Mapping[str, str], settings: Mapping[str, str]
    ) -> tuple[str, str] | None:
        """The first property of `names` the client does not read, or of `settings` it refuses
        (what the deployment sets, secrets included, is left to the deployment), as (the property,
        one line); None when it takes them all."""
        return None

    def durability_defaults(self, conf: Mapping[str, str]) -> dict[str, str]:
        """The client's own default of each durability property, given the settings in `conf`."""
        raise NotImplementedError

    def with_durability(self, conf: dict[str, str]) -> dict[str, str]:
        """`conf` with every durability property stated: the client's default where neither the
        property nor one of its aliases is set (the same behaviour, written down)."""
        defaults = self.durability_defaults(conf)
        for key, aliases in self.DURABILITY:
            if key not in conf and not any(a in conf for a in aliases):
                conf[key] = defaults[key]
        return conf

    def durability(self, profile: P) -> dict[str, str]:
        """The durability properties the profile's client runs with (aliases under their own name)."""
        conf = self.client_settings(profile)
        out = {}
        for key, aliases in self.DURABILITY:
            found = [k for k in (key, *aliases) if k in conf]
            out[key] = conf[found[-1]] if found else ""
        return out

    def kept(self, base: ClientProfile | None) -> dict[str, Any]:
        """The baseline's settings a candidate keeps, if of this kind: its durability knobs, and
        every override but the properties the search sets (`SEARCHED`): durability, and how the
        team runs the client (max.request.size, buffer.memory, client.id ...). Else nothing, and
        the client's defaults apply, stated in the file all the same."""
        keep = super().kept(base)
        if base is None or base.client != self.name or not isinstance(base, ProducerProfile):
            return keep
        if base.max_in_flight is not None:
            keep["max_in_flight"] = base.max_in_flight
        own = {k: v for k, v in base.overrides.items() if k not in self.SEARCHED}
        if own:
            keep["overrides"] = own
        return keep

    def captured(self, acks: str, compressed: bool, record_limit: int | None) -> dict[str, Any]:
        # the acks it sent, idempotence as a producer at acks=all has it by default; the codec is not
        # visible to a reading consumer, so a compressed group replays with zstd
        return {"acks": acks, "idempotence": acks == "all", "compression": "zstd" if compressed else "none"}

    def durability_note(self, profile: P, base: ClientProfile | None) -> str | None:
        ran = self.durability(profile)
        text = ", ".join(f"{k}={v}" for k, v in ran.items())
        if base is None or base.client != self.name:
            return f"Durability (never tuned): {text}: a {self.title} baseline's, else the client's defaults."
        if ran != self.durability(cast(P, base)):
            return f"Durability CHANGED from baseline {base.name}: {text}."
        return f"Durability as baseline {base.name} had it: {text}."

    def render(self, profile: P, header: Sequence[str]) -> Rendered:
        """The client's config file for the profile, under `#` comment lines, secrets redacted.
        Without a header it is the artifact a run's client starts from (`artifact`)."""
        out = [f"# {line}" if line else "#" for line in header]
        out += self._preamble(profile)
        for key, value in self.file_settings(redact(self.client_settings(profile))).items():
            out.append(properties_line(key, str(value)))
        return Rendered(f"{self.name}.properties", "\n".join(out) + "\n")

    def file_settings(self, conf: Mapping[str, str]) -> dict[str, str]:
        """The properties as the file holds them (a kind may spell `${VAR}` references its way)."""
        return dict(conf)

    def _preamble(self, profile: P) -> list[str]:
        env = "Set by your environment, not in this file: " + ", ".join(self.environment) + "."
        lines = [f"# {line}" for line in textwrap.wrap(env, 98, break_on_hyphens=False)]
        lines += [f"# {line}" for line in self.secrets_hint]
        if self.measurement:
            lines.append(
                f"# kbt's runs layer the same on top of this file, plus {', '.join(self.measurement)}."
            )
        lines += [
            "# Durability is yours (kbt tunes batching only): acks, enable.idempotence, retries and",
            "# max.in.flight.requests.per.connection are stated below as the baseline had them (the",
            "# client's defaults where it set none).",
        ]
        defaults = self.durability_defaults({})
        changed = [
            f"{k}={v} (default {defaults[k]})"
            for k, v in self.durability(profile).items()
            if v != defaults[k] and k != "enable.idempotence"  # idempotence's default follows acks
        ]
        if changed:
            lines.append(f"# Not the {self.title} client's default: {', '.join(changed)}.")
        return lines

    def check_fits(self, profile: P, topic_max_bytes: int, event_bytes: int | None) -> None:
        if profile.batch_bytes is not None and profile.batch_bytes > topic_max_bytes:
            raise ValueError(
                f"batch_bytes: {profile.batch_bytes} (profile {profile.name}) exceeds the broker's"
                f" message.max.bytes {topic_max_bytes} (raise the topic config max.message.bytes)"
            )

    def describe(self, profile: P) -> str:
        parts = [self.name]
        if profile.linger_ms is not None:
            parts.append(f"linger {profile.linger_ms:g} ms")
        if "batch_messages" not in self.model.model_fields and profile.batch_bytes is not None:
            parts.append(f"batch.size {profile.batch_bytes}")  # the batch knob of byte-bounded clients
        if profile.partitioner != "default":
            parts.append(profile.partitioner)
        return " ".join([*parts, profile.compression or "default codec"])
