"""The client-kind registry: one module per client kind, registered here.

`ClientProfile` is the union of the kinds' settings models keyed on `client:` (absent: the first
kind, librdkafka). `kind_of(profile)` is how every other layer reaches a kind's settings mapping,
engine id, model parameters, renderer and checker; nothing outside this package compares client
names. Adding a kind is one module (see base.ClientKind; producer.py for a kind configured by
properties) and its settings model added to the union below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args

from pydantic import BeforeValidator, Discriminator, Tag, TypeAdapter

from tuner.core.errors import did_you_mean
from tuner.spec.clients import filebeat, java, librdkafka, otelcol
from tuner.spec.clients.base import ClientKind, Family, Rendered, SearchContext, kind_by_model
from tuner.spec.clients.rules import Rules
from tuner.spec.profile import ProfileBase

# The registration: each kind's settings model, one per line (the first is the default kind).
_Models = Union[  # noqa: UP007 (one member per line)
    librdkafka.LibrdkafkaProfile,
    filebeat.FilebeatProfile,
    java.JavaProfile,
    otelcol.OtelcolProfile,
]

KINDS: dict[str, ClientKind[Any]] = {
    kind.name: kind for kind in (kind_by_model(model) for model in get_args(_Models))
}
DEFAULT_KIND = next(iter(KINDS))  # a profile without `client:`
PROFILE_FIELDS = frozenset(field for kind in KINDS.values() for field in kind.model.model_fields)


def _settle(data: Any) -> Any:
    """`client` filled in (absent: the default kind); an unknown kind named in one line."""
    if isinstance(data, ProfileBase):
        return data
    if not isinstance(data, Mapping):
        raise ValueError(f"must be a mapping of profile settings (got {type(data).__name__})")
    client = data.get("client", DEFAULT_KIND)
    if not isinstance(client, str):
        raise ValueError(f"client: must be a client kind name, one of {', '.join(KINDS)}")
    if client not in KINDS:
        raise ValueError(f'client: unknown client kind "{client}"{did_you_mean(client, list(KINDS))}')
    return {**data, "client": client}


def without_other_kinds_fields(model: type[ProfileBase], data: Mapping[Any, Any]) -> dict[Any, Any]:
    """`data` for `model` without other kinds' fields at their unset value (the flat shape records
    kept before each kind owned its settings); another kind's field that is set is named in one
    line, with where that setting goes for this kind. Unknown keys are left to the model, which
    names them with "did you mean"."""
    kind = kind_by_model(model)
    others = sorted(k for k in data if k in PROFILE_FIELDS and k not in model.model_fields)
    for key in others:
        if data[key] != _unset_value(key):
            raise ValueError(f"{key}: not a {kind.name} setting{kind.hints.get(key, '')}")
    return {k: v for k, v in data.items() if k not in others}


def _unset_value(field: str) -> Any:
    """The value a field has when a profile does not set it (the same in every kind that has it)."""
    kind = next(k for k in KINDS.values() if field in k.model.model_fields)
    return kind.model.model_fields[field].get_default(call_default_factory=True)


def _tag(data: Any) -> str | None:
    client = data.get("client") if isinstance(data, Mapping) else getattr(data, "client", None)
    return KINDS[client].model.__name__ if client in KINDS else None


if TYPE_CHECKING:
    ClientProfile = _Models
else:  # tagged by model name: an error's location never names a key the user did not write
    ClientProfile = Annotated[
        Union[tuple(Annotated[m, Tag(m.__name__)] for m in get_args(_Models))],  # noqa: UP007
        Discriminator(_tag),
        BeforeValidator(_settle),
    ]
_ADAPTER: TypeAdapter[ClientProfile] = TypeAdapter(ClientProfile)


def profile_of(data: Any, context: Mapping[str, Any] | None = None) -> ClientProfile:
    """A profile from a mapping (YAML, a record), as its kind's model; pydantic ValidationError."""
    return _ADAPTER.validate_python(data, context=context)


def kind_of(profile: ClientProfile) -> ClientKind[Any]:
    return KINDS[profile.client]


def kind_named(name: str) -> ClientKind[Any]:
    """The kind called `name` (KeyError for an unknown one; profiles are validated against KINDS)."""
    return KINDS[name]


def rules_of(profile: ClientProfile) -> Rules:
    """The request-formation model parameters `profile` stands for, from its kind."""
    return kind_of(profile).rules(profile)


def same_kind(a: ClientProfile, b: ClientProfile) -> bool:
    return kind_of(a) is kind_of(b)


__all__ = ["ClientKind", "Family", "Rendered", "SearchContext"]  # the re-exports of clients/base.py
