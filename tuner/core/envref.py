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

Each reader takes its own names, and this module is the one home of every form:

    the collector           ${env:NAME}, ${env:NAME:-default} and ${NAME} (its default scheme is env);
                            NAME as its env provider checks it (`^[a-zA-Z_][a-zA-Z0-9_]*$`), and
                            ${NAME:-default} is no reference to it (an invalid uri: it refuses the
                            config): `collector_reference`, `collector_names`
    the Java client         ${env:NAME} anywhere in a value (Kafka's ConfigTransformer finds
                            `${provider:[path:]key}` in the text, and its EnvVarConfigProvider takes
                            any key without `}`, dots and dashes too): `java_env_names`; a profile's
                            `${NAME}` and the file's `${env:NAME}` are one reference to it
                            (`java_spelling`, `profile_spelling`)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The Kafka Java client's provider of `${env:NAME}` references (KIP-887): how a Java client reads
# its secrets from the environment.
ENV_CONFIG_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
_SHELL_NAME = r"[A-Za-z_][A-Za-z0-9_]*"  # a variable's name as the collector's env provider takes it
_DOTTED_NAME = r"[A-Za-z_][A-Za-z0-9_.]*"  # Filebeat's and a kbt profile's ${NAME}
_GRAMMAR = re.compile(rf"^\$\{{(?P<name>{_DOTTED_NAME})(?::(?P<rest>[^}}]*))?\}}$")


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


_PROVIDER = re.compile(rf"^\$\{{env:(?P<name>{_SHELL_NAME})(?::-(?P<default>[^}}]*))?\}}$")


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


# ---- the collector's forms ----------------------------------------------------------------------

_COLLECTOR_WHOLE = re.compile(
    rf"^\$\{{(?:env:(?P<name>{_SHELL_NAME})(?::-(?P<default>.*))?|(?P<bare>{_SHELL_NAME}))\}}$", re.S
)
_COLLECTOR_ANY = re.compile(
    rf"\$\{{(?:env:(?P<name>{_SHELL_NAME})(?P<fallback>:-|\}})|(?P<bare>{_SHELL_NAME})\}})"
)


def collector_reference(value: object) -> EnvReference | None:
    """The reference a whole collector config value is (`${env:NAME}`, `${env:NAME:-default}`,
    `${NAME}`; surrounding whitespace ignored), or None."""
    match = _COLLECTOR_WHOLE.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    return EnvReference(match.group("name") or match.group("bare"), match.group("default"), None)


def collector_names(text: str) -> list[tuple[str, bool]]:
    """Every variable a collector config's text refers to, in order, each with whether that
    reference has a fallback (`${env:NAME:-default}`)."""
    return [
        (m.group("name") or m.group("bare"), m.group("fallback") == ":-")
        for m in _COLLECTOR_ANY.finditer(text)
    ]


# ---- the Java client's forms --------------------------------------------------------------------

_JAVA_ANY = re.compile(r"\$\{env:(?:[^}]*?:)?(?P<name>[^}]*?)\}")
_JAVA_AS_PROFILE = re.compile(rf"\$\{{env:({_DOTTED_NAME})\}}")
_PROFILE_ANY = re.compile(rf"\$\{{({_DOTTED_NAME})\}}")


def java_env_names(text: str) -> list[str]:
    """Every variable the Java client's EnvVarConfigProvider is asked for in `text`, in order."""
    return [m.group("name") for m in _JAVA_ANY.finditer(text)]


def java_spelling(text: str) -> str:
    """`text` with every profile `${NAME}` as the Java client's `${env:NAME}`."""
    return _PROFILE_ANY.sub(r"${env:\1}", text)


def profile_spelling(text: str) -> str:
    """`text` with every Java `${env:NAME}` a profile can name as the profile's `${NAME}`."""
    return _JAVA_AS_PROFILE.sub(r"${\1}", text)
