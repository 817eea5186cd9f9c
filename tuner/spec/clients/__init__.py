"""The client-kind registry: one module per client kind, registered here.

`kind_of(profile)` is how every other layer reaches a kind's settings mapping, engine id, model
parameters, renderer and checker; nothing outside this package compares client names. Adding a kind
is one module (see base.ClientKind) and one line in KINDS.
"""

from __future__ import annotations

from tuner.spec.clients import filebeat, java, librdkafka, otelcol
from tuner.spec.clients.base import ClientKind, Family, Rendered, SearchContext
from tuner.spec.clients.rules import Rules
from tuner.spec.profile import ClientProfile

KINDS: dict[str, ClientKind] = {
    librdkafka.KIND.name: librdkafka.KIND,
    filebeat.KIND.name: filebeat.KIND,
    java.KIND.name: java.KIND,
    otelcol.KIND.name: otelcol.KIND,
}


def kind_of(profile: ClientProfile) -> ClientKind:
    return KINDS[profile.client]


def kind_named(name: str) -> ClientKind:
    """The kind called `name` (KeyError for an unknown one; profiles are validated against KINDS)."""
    return KINDS[name]


def rules_of(profile: ClientProfile) -> Rules:
    """The request-formation model parameters `profile` stands for, from its kind."""
    return kind_of(profile).rules(profile)


def same_kind(a: ClientProfile, b: ClientProfile) -> bool:
    return kind_of(a) is kind_of(b)


__all__ = [
    "KINDS",
    "ClientKind",
    "Family",
    "Rendered",
    "SearchContext",
    "kind_named",
    "kind_of",
    "rules_of",
    "same_kind",
]
