"""The one `${VAR}` grammar, shared by spec validation, Filebeat profile validation, expansion and
redaction (there were three regexes that disagreed on `${VAR:default}`).

    ${NAME}             a reference: the value comes from the environment
    ${NAME:?message}    a reference that fails with `message` when NAME is unset (Filebeat's form)
    ${NAME:default}     a reference with a fallback; the fallback is *literal text*, so for a
                        secret-named key it is a literal secret and is rejected and redacted

NAME is a letter or `_` then letters, digits, `_` or `.` (Filebeat allows dotted names).

A config provider's form reads as NAME = `env` with a default by that grammar, but names its variable
after the colon (`provider_reference`):

    ${env:NAME}             the OpenTelemetry Collector's env provider, and the Kafka Java client's
                            EnvVarConfigProvider (KIP-887): NAME is the variable, not a literal
    ${env:NAME:-default}    the collector's fallback: `default` is literal text
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The Kafka Java client's provider of `${env:NAME}` references (KIP-887): how a Java client reads
# its secrets from the environment.
ENV_CONFIG_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
_GRAMMAR = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_.]*)(?::(?P<rest>[^}]*))?\}$")


@dataclass(frozen=True)
class EnvReference:
    name: str
    default: str | None  # the literal fallback of ${NAME:default}; None when there is none
    required_message: str | None  # the message of ${NAME:?message}

    @property
    def holds_literal(self) -> bool:
        """True when the reference carries literal text of its own (a non-empty default)."""
        return bool(self.default)


def parse_reference(value: object) -> EnvReference | None:
    """The reference `value` is (surrounding whitespace ignored), or None when it is not one."""
    if not isinstance(value, str):
        return None
    match = _GRAMMAR.match(value.strip())
    if match is None:
        return None
    rest = match.group("rest")
    if rest is None:
        return EnvReference(match.group("name"), None, None)
    if rest.startswith("?"):
        return EnvReference(match.group("name"), None, rest[1:])
    return EnvReference(match.group("name"), rest, None)


_PROVIDER = re.compile(r"^\$\{env:(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}$")


def provider_reference(value: object) -> EnvReference | None:
    """The `${env:NAME}` or `${env:NAME:-default}` reference `value` is, named NAME; else None."""
    match = _PROVIDER.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    return EnvReference(match.group("name"), match.group("default"), None)


def is_reference(value: object) -> bool:
    return parse_reference(value) is not None


def is_pure_reference(value: object) -> bool:
    """A reference that carries no literal text: safe to store and show for a secret-named key."""
    ref = parse_reference(value)
    return ref is not None and not ref.holds_literal
