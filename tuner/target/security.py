"""Client security in Kafka's own properties format, mapped for the clients kbt drives.

A target's security is written once, the way `kafka-producer-perf-test --producer.config` or
`kcat -F` take it (security.protocol, sasl.mechanism, sasl.jaas.config or sasl.username/password,
ssl.truststore.* or ssl.ca.location, ssl.keystore.*). `ClientSecurity` is what it means; it is
rendered here for librdkafka (kbt's own clients and the librdkafka engine) and for the other
engines in `engine_security`; a JKS or PKCS12 truststore is read as a PEM CA file for the clients
that take PEM only (`truststore`). Values may be `${VAR}` references: they stay references in
everything that is shown or stored, and are resolved (and registered with the redaction layer) only
by `resolve`, when a client is built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from tuner.core.envref import is_pure_reference
from tuner.core.errors import BadInput, did_you_mean
from tuner.core.kafka_clients import Connection
from tuner.core.redact import is_secret_name, register_secret
from tuner.spec.references import expand_references
from tuner.target.base import Target

T = TypeVar("T")
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Keys a target's client properties may hold: security only (batching is the profile's business).
KNOWN_KEYS = (
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.jaas.config",
    "sasl.username",
    "sasl.password",
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.ca.location",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.endpoint.identification.algorithm",
    "client.dns.lookup",
)
_JAAS = re.compile(
    r"^\s*(?P<module>[\w.$]+)\s+required\b(?P<options>.*?);?\s*$",
    re.S,
)
# An option of a JAAS line in every quoting form Kafka's JaasConfig accepts (its tokenizer takes
# "double", 'single' or a bare word: password=x;). Each repeat is bounded by a delimiter, so
# matching stays linear.
_JAAS_OPTION = re.compile(r"""(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s;"']+))""")


def _option_value(m: re.Match[str]) -> str:
    """The value a JAAS option match stands for, whichever quoting it was written in."""
    double, single, bare = m.group(2, 3, 4)
    return jaas_unquoted(double) if double is not None else single if single is not None else bare


_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": "PLAIN",
    "org.apache.kafka.common.security.scram.ScramLoginModule": "SCRAM",
}


def check_properties(props: Mapping[str, str], where: str) -> None:
    """Known keys only, secrets only as `${VAR}` references, a known protocol and mechanism."""
    for key, value in props.items():
        if key not in KNOWN_KEYS:
            raise BadInput(f'{where}: unknown client property "{key}"{did_you_mean(key, KNOWN_KEYS)}')
        if key == "sasl.jaas.config":
            _check_jaas(value, where)
        elif is_secret_name(key) and not is_pure_reference(value):  # ${VAR:literal} is a literal
            raise BadInput(
                f'{where}: "{key}" must be a ${{VAR}} reference (credentials are never written in a file)'
            )
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        hint = did_you_mean(protocol, PROTOCOLS) or f" is not one of {', '.join(PROTOCOLS)}"
        raise BadInput(f"{where}: security.protocol {protocol!r}{hint}")
    mechanism = props.get("sasl.mechanism") or props.get("sasl.mechanisms")
    other = props.get("sasl.mechanisms")
    # Both names set: kbt's clients read one, the engines the other, so they must agree.
    if mechanism is not None and other is not None and other.upper() != mechanism.upper():
        raise BadInput(
            f"{where}: sasl.mechanism {mechanism!r} and sasl.mechanisms {other!r} disagree: set one of them"
        )
    if mechanism is not None and mechanism.upper() not in MECHANISMS:
        raise BadInput(
            f"{where}: sasl.mechanism {mechanism!r} is not supported (one of {', '.join(MECHANISMS)})"
        )


SECRET_ENV_PREFIX = "KBT_COMMAND_CONFIG_"


def hold_literal_secrets(props: Mapping[str, str]) -> dict[str, str]:
    """The operator's own Kafka client file (`--command-config`, as Kafka's tools take it) may hold
    a secret as written. Each such value moves into this process's environment (children inherit
    it; nothing else sees it), registered with the redaction layer, and the property becomes the
    `${VAR}` reference a target file would hold: from here on the secret is handled, shown and
    stored exactly like a target file's."""
    held: dict[str, str] = {}
    for key, value in props.items():
        name = SECRET_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", key).upper()
        if is_pure_reference(value):
            held[key] = value
        elif key == "sasl.jaas.config":

            def hold(m: re.Match[str], name: str = name) -> str:
                if m.group(1).lower() != "password" or is_pure_reference(_option_value(m)):
                    return m.group(0)
                os.environ[f"{name}_PASSWORD"] = register_secret(_option_value(m))
                return f'{m.group(1)}="${{{name}_PASSWORD}}"'

            held[key] = _JAAS_OPTION.sub(hold, value)
        elif is_secret_name(key):
            os.environ[name] = register_secret(value)
            held[key] = f"${{{name}}}"
        else:
            held[key] = value
    return held


# A value a client or its deployment fills in: `${VAR}`, or a Java config provider's `${env:VAR}`.
_FILLED_IN = re.compile(r"\$\{[^{}\s]+\}")


def literal_secret_keys(props: Mapping[str, str]) -> list[str]:
    """The properties of a team's own client file that hold a secret as written (a JAAS password
    included): valid to its client, but a secret in a file that is copied and committed."""
    found = []
    for key, value in props.items():
        if key == "sasl.jaas.config":
            literal = any(
                m.group(1).lower() == "password" and not _FILLED_IN.fullmatch(_option_value(m).strip())
                for m in _JAAS_OPTION.finditer(value)
            )
        else:
            literal = is_secret_name(key) and bool(value.strip()) and not _FILLED_IN.fullmatch(value.strip())
        if literal:
            found.append(key)
    return found


def _check_jaas(value: str, where: str) -> None:
    if is_pure_reference(value):
        return
    for m in _JAAS_OPTION.finditer(value):
        if m.group(1).lower() == "password" and not is_pure_reference(_option_value(m)):
            raise BadInput(
                f'{where}: the password in "sasl.jaas.config" must be a ${{VAR}} reference'
                " (credentials are never written in a file)"
            )


@dataclass(frozen=True)
class ClientSecurity:
    """What a target's client properties mean, values resolved (secrets registered for redaction)."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None  # PEM bundle of trusted CAs
    truststore: tuple[str, str, str | None] | None = None  # (location, type, password)
    keystore: tuple[str, str, str | None] | None = None  # client certificate store (PKCS12/JKS)
    certificate_file: str | None = None  # PEM client certificate and key
    key_file: str | None = None
    key_password: str | None = None
    verify_hostname: bool = True

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL")

    @property
    def tls(self) -> bool:
        return self.protocol.endswith("SSL")


def _resolve_all(props: Mapping[str, str], where: str) -> dict[str, str]:
    resolved = dict(props)
    resolved.update(expand_references(props, where))
    jaas = resolved.get("sasl.jaas.config")
    if jaas is not None:  # ${VAR} references inside the JAAS options

        def expand(m: re.Match[str]) -> str:  # each option written back double-quoted
            raw = _option_value(m)
            value = expand_references({f"sasl.jaas.config {m.group(1)}": raw}, where)
            text = value.get(f"sasl.jaas.config {m.group(1)}", raw)
            if m.group(1).lower() == "password":
                register_secret(text)
                register_secret(jaas_quoted(text))  # the form the JAAS line holds
            return f'{m.group(1)}="{jaas_quoted(text)}"'

        resolved["sasl.jaas.config"] = _JAAS_OPTION.sub(expand, jaas)
    return resolved


def jaas_quoted(text: str) -> str:
    """A value inside a JAAS "double-quoted" option. The login config's tokenizer reads a
    backslash as an escape, so a password holding a double quote or a backslash is escaped here,
    not cut short at its first quote."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def jaas_unquoted(text: str) -> str:
    """The value a JAAS "double-quoted" option stands for (the inverse of `jaas_quoted`)."""
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def resolve(props: Mapping[str, str], where: str) -> ClientSecurity:
    """The meaning of Kafka-format client properties, `${VAR}` references resolved from the
    environment (an unset variable is a one-line BadInput)."""
    check_properties(props, where)
    p = _resolve_all(props, where)
    protocol = p.get("security.protocol", "PLAINTEXT").upper()
    mechanism = (p.get("sasl.mechanism") or p.get("sasl.mechanisms") or "").upper() or None
    username, password = p.get("sasl.username"), p.get("sasl.password")
    jaas = p.get("sasl.jaas.config")
    if jaas is not None:
        match = _JAAS.match(jaas)
        if match is None or match.group("module") not in _MODULES:
            raise BadInput(
                f"{where}: sasl.jaas.config must use PlainLoginModule or ScramLoginModule with"
                ' username="..." password="..."'
            )
        options = {
            m.group(1).lower(): _option_value(m) for m in _JAAS_OPTION.finditer(match.group("options"))
        }
        username, password = options.get("username", username), options.get("password", password)
        if mechanism is None:
            mechanism = "PLAIN" if _MODULES[match.group("module")] == "PLAIN" else None
    if protocol.startswith("SASL"):
        if mechanism is None:
            raise BadInput(f"{where}: {protocol} needs sasl.mechanism ({', '.join(MECHANISMS)})")
        if not username or password is None:
            raise BadInput(f"{where}: {protocol} needs a username and password (sasl.jaas.config)")
    truststore = _store(p, "truststore")
    return ClientSecurity(
        protocol=protocol,
        mechanism=mechanism,
        username=username,
        password=register_secret(password) if password else password,
        ca_file=truststore[0] if truststore and truststore[1] == "PEM" else p.get("ssl.ca.location"),
        truststore=truststore,
        keystore=_store(p, "keystore"),
        certificate_file=p.get("ssl.certificate.location"),
        key_file=p.get("ssl.key.location"),
        key_password=p.get("ssl.key.password"),
        verify_hostname=p.get("ssl.endpoint.identification.algorithm", "https").lower() == "https",
    )


def _store(p: Mapping[str, str], store: str) -> tuple[str, str, str | None] | None:
    """`ssl.<store>.*` as (location, type, password), the type JKS when unset; None without a location."""
    location = p.get(f"ssl.{store}.location")
    if location is None:
        return None
    return location, p.get(f"ssl.{store}.type", "JKS").upper(), p.get(f"ssl.{store}.password")


def pem_ca_file(sec: ClientSecurity, where: str = "target") -> str | None:
    """The CA file in PEM: ssl.ca.location, or a JKS/PKCS12 truststore's certificates as PEM."""
    if sec.ca_file or sec.truststore is None:
        return sec.ca_file
    from tuner.target.truststore import truststore_ca_file

    location, kind, password = sec.truststore
    return truststore_ca_file(location, kind, password, where)


def given(values: Mapping[str, T | None]) -> dict[str, T]:
    """The entries of `values` that are set (a client's config leaves an unset file out)."""
    return {k: v for k, v in values.items() if v}


def librdkafka_config(sec: ClientSecurity, where: str = "target") -> dict[str, str]:
    """librdkafka (confluent-kafka) properties."""
    out = {"security.protocol": sec.protocol}
    if sec.sasl:
        out.update({"sasl.mechanisms": sec.mechanism or "", "sasl.username": sec.username or ""})
        out["sasl.password"] = sec.password or ""
    if sec.tls:
        out |= given({"ssl.ca.location": pem_ca_file(sec, where)})
        if sec.keystore is not None:
            if sec.keystore[1] != "PKCS12":
                raise BadInput(f"{where}: librdkafka reads PKCS12 keystores only, not {sec.keystore[1]}")
            out["ssl.keystore.location"] = sec.keystore[0]
            if sec.keystore[2]:
                out["ssl.keystore.password"] = sec.keystore[2]
        out |= given({"ssl.certificate.location": sec.certificate_file, "ssl.key.location": sec.key_file})
        out |= given({"ssl.key.password": sec.key_password})
        out["ssl.endpoint.identification.algorithm"] = "https" if sec.verify_hostname else "none"
    return out


def connection(target: Target) -> Connection:
    """How kbt's own clients (admin, read-back) reach the target: its bootstrap servers and its
    client security as librdkafka properties, `${VAR}` references resolved."""
    return Connection(target.bootstrap_servers, client_config(target))


def client_config(target: object, name: str | None = None) -> dict[str, str]:
    """The client security of a target (or of anything carrying its `client_properties`: a stress
    target, a stress plan) as librdkafka properties, `${VAR}` references resolved; empty for a
    PLAINTEXT target. `name` (default: the target's) heads an error about a missing variable."""
    props = getattr(target, "client_properties", None) or {}
    if not props:
        return {}
    label = name or str(getattr(target, "name", "target"))
    return librdkafka_config(resolve(props, f"{label}: client"), label)
