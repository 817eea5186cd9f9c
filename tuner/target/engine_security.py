"""A connection's client security for the engines that are not librdkafka: Kafka's Java producer,
Filebeat (`output.kafka`) and the OpenTelemetry Collector's kafka exporter.

Every engine is handed the run's connection properties in librdkafka terms (what
`tuner.target.security.librdkafka_config` makes of a target file, and the lab's SASL_SSL
properties), secrets resolved in memory. `split_security` reads them back into `ClientSecurity`;
`java_security` and `filebeat_security` write it in the client's own configuration language with
every secret as a *reference the client resolves itself*, and return the values apart:

- Java: `${env:KBT_CLIENT_SECRET_...}` through Kafka's own EnvVarConfigProvider
  (`config.providers=env`, restricted to kbt's variable names);
- Filebeat: `${KBT_CLIENT_SECRET_...}`, which Filebeat (7.x, 8.x, 9.x alike) expands from its
  environment when it loads filebeat.yml;
- the collector: `${env:KBT_CLIENT_SECRET_...}`, its own env config provider.

The values go into the child process's environment only (`SecretEnv`), never into a plan, a
filebeat.yml, a record or a log; they are registered with the redaction layer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tuner.core.envref import ENV_CONFIG_PROVIDER
from tuner.core.errors import BadInput
from tuner.core.redact import is_secret_name, register_secret
from tuner.target.security import MECHANISMS, PROTOCOLS, ClientSecurity, given, jaas_quoted, pem_ca_file

SECRET_ENV_PREFIX = "KBT_CLIENT_SECRET_"
# The librdkafka properties a connection's security is written in (librdkafka_config's keys).
LIBRDKAFKA_SECURITY_KEYS = frozenset(
    {
        "security.protocol",
        "sasl.mechanisms",
        "sasl.mechanism",
        "sasl.username",
        "sasl.password",
        "ssl.ca.location",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
    }
)
# The JVM system property that limits which config providers a client may instantiate.
AUTOMATIC_PROVIDERS_PROPERTY = "org.apache.kafka.automatic.config.providers"
_JAAS_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@dataclass
class SecretEnv:
    """Secret values by environment variable name: the child's environment, nothing else."""

    values: dict[str, str] = field(default_factory=dict)

    def hold(self, what: str, value: str) -> str:
        """The variable name holding `value` (registered for redaction)."""
        name = SECRET_ENV_PREFIX + "".join(c if c.isascii() and c.isalnum() else "_" for c in what).upper()
        self.values[name] = register_secret(value)
        return name


def split_security(props: Mapping[str, str]) -> tuple[ClientSecurity | None, dict[str, str]]:
    """The connection's security (None for none) and the remaining properties (a profile's
    resolved `${VAR}` overrides, in the engine's own names)."""
    sec = librdkafka_security(props)
    rest = {k: v for k, v in props.items() if k not in LIBRDKAFKA_SECURITY_KEYS}
    if not sec:
        return None, rest
    protocol = sec.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise BadInput(f"security.protocol {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    mechanism = (sec.get("sasl.mechanisms") or sec.get("sasl.mechanism") or "").upper() or None
    if mechanism is not None and mechanism not in MECHANISMS:
        raise BadInput(f"sasl.mechanism {mechanism!r} is not one of {', '.join(MECHANISMS)}")
    keystore = None
    if "ssl.keystore.location" in sec:  # librdkafka reads PKCS12 keystores only
        keystore = (sec["ssl.keystore.location"], "PKCS12", sec.get("ssl.keystore.password"))
    return (
        ClientSecurity(
            protocol=protocol,
            mechanism=mechanism,
            username=sec.get("sasl.username"),
            password=sec.get("sasl.password"),
            ca_file=sec.get("ssl.ca.location"),
            keystore=keystore,
            certificate_file=sec.get("ssl.certificate.location"),
            key_file=sec.get("ssl.key.location"),
            key_password=sec.get("ssl.key.password"),
            verify_hostname=sec.get("ssl.endpoint.identification.algorithm", "https").lower() == "https",
        ),
        rest,
    )


def librdkafka_security(props: Mapping[str, str]) -> dict[str, str]:
    """The connection's security alone, for kbt's own librdkafka clients of the run (read-back)."""
    return {k: v for k, v in props.items() if k in LIBRDKAFKA_SECURITY_KEYS}


def java_security(sec: ClientSecurity | None, extra: Mapping[str, str], env: SecretEnv) -> dict[str, str]:
    """Java producer properties for `sec` plus `extra` (a profile's resolved overrides, Java
    names): every secret a `${env:NAME}` reference resolved by EnvVarConfigProvider, its value in
    `env`."""

    def ref(what: str, value: str) -> str:
        return "${env:" + env.hold(what, value) + "}"

    props: dict[str, str] = {}
    if sec is not None:
        props["security.protocol"] = sec.protocol
        if sec.sasl:
            mechanism = sec.mechanism or ""
            props["sasl.mechanism"] = mechanism
            # The password's JAAS-escaped text is what the provider substitutes into the quotes.
            password = ref("sasl_password", jaas_quoted(sec.password or ""))
            props["sasl.jaas.config"] = (
                f'{_JAAS_MODULES[mechanism]} required username="{jaas_quoted(sec.username or "")}"'
                f' password="{password}";'
            )
        if sec.tls:
            if sec.certificate_file or sec.key_file:
                raise BadInput(
                    "the Java producer takes a client certificate as a keystore (ssl.keystore.*),"
                    " not ssl.certificate.location / ssl.key.location"
                )
            # the Java client reads a PEM CA file as a truststore of type PEM
            truststore = (sec.ca_file, "PEM", None) if sec.ca_file else sec.truststore
            for store, entry in (("truststore", truststore), ("keystore", sec.keystore)):
                if entry is not None:
                    location, kind, store_password = entry
                    props.update({f"ssl.{store}.type": kind, f"ssl.{store}.location": location})
                    if store_password:
                        props[f"ssl.{store}.password"] = ref(f"ssl_{store}_password", store_password)
            if sec.key_password:
                props["ssl.key.password"] = ref("ssl_key_password", sec.key_password)
            props["ssl.endpoint.identification.algorithm"] = "https" if sec.verify_hostname else ""
    for key, value in extra.items():
        props[key] = ref(key, value) if is_secret_name(key) else value
    if env.values:
        props.update(
            {
                "config.providers": "env",
                "config.providers.env.class": ENV_CONFIG_PROVIDER,
                # The provider reads kbt's own variables and no other.
                "config.providers.env.param.allowlist.pattern": f"^{SECRET_ENV_PREFIX}[A-Z0-9_]+$",
            }
        )
    return props


def java_system_properties(props: Mapping[str, str]) -> list[str]:
    """JVM flags for `props`: with config providers, only EnvVarConfigProvider may be instantiated."""
    if "config.providers" not in props:
        return []
    return [f"-D{AUTOMATIC_PROVIDERS_PROPERTY}={ENV_CONFIG_PROVIDER}"]


def _ucfg_quoted(text: str) -> str:
    """A variable's value that Filebeat's config library reads back as exactly `text`: it parses an
    expanded value (`a,b` becomes a list, `{...}` an object, 123 a number), but a double-quoted one
    is a string, its escapes Go's (which JSON's are, UTF-8 kept as is)."""
    return json.dumps(register_secret(text), ensure_ascii=False)


def filebeat_security(sec: ClientSecurity | None, env: SecretEnv) -> dict[str, Any]:
    """`output.kafka` keys for `sec` (the same on Filebeat 7.17, 8.x and 9.x): the password a
    `${NAME}` reference Filebeat expands from its environment, its value in `env` (quoted, so
    Filebeat reads it as the string it is)."""
    if sec is None or sec.protocol == "PLAINTEXT":
        return {}
    out: dict[str, Any] = {}
    if sec.sasl:
        out.update(
            {
                "username": sec.username or "",
                "password": "${" + env.hold("sasl_password", _ucfg_quoted(sec.password or "")) + "}",
                "sasl.mechanism": sec.mechanism or "",
            }
        )
    if sec.tls:
        if sec.keystore is not None:
            raise BadInput(
                "Filebeat takes a client certificate as PEM files (ssl.certificate.location and"
                " ssl.key.location), not a keystore"
            )
        ca_file = pem_ca_file(sec, "Filebeat")
        pem = {"certificate_authorities": [ca_file] if ca_file else None, "certificate": sec.certificate_file}
        ssl: dict[str, Any] = {"enabled": True} | given(pem | {"key": sec.key_file})
        if sec.key_password:
            ssl["key_passphrase"] = "${" + env.hold("ssl_key_password", _ucfg_quoted(sec.key_password)) + "}"
        # "certificate" checks the chain but not the host name (librdkafka's algorithm none).
        ssl["verification_mode"] = "full" if sec.verify_hostname else "certificate"
        out["ssl"] = ssl
    return out


def otelcol_security(sec: ClientSecurity | None, env: SecretEnv) -> dict[str, Any]:
    """The kafka exporter's `auth` and `tls` for `sec` (pkg/kafka/configkafka of the collector
    release kbt builds): the password an `${env:NAME}` reference the collector's env provider
    resolves, its value in `env`. A string field keeps the variable's text as it is."""
    if sec is None or sec.protocol == "PLAINTEXT":
        return {}
    out: dict[str, Any] = {}
    if sec.sasl:
        mechanism = sec.mechanism or ""
        if mechanism not in MECHANISMS:
            raise BadInput(f"the collector's kafka exporter takes SASL PLAIN or SCRAM, not {mechanism!r}")
        password = "${env:" + env.hold("sasl_password", sec.password or "") + "}"
        out["auth"] = {"sasl": {"username": sec.username or "", "password": password, "mechanism": mechanism}}
    if sec.tls:
        if sec.keystore is not None:
            raise BadInput(
                "the collector reads PEM files only: give its client certificate as ssl.certificate.location"
                " and ssl.key.location, not a keystore"
            )
        if sec.key_password:
            raise BadInput("the collector takes an unencrypted PEM client key (no ssl.key.password)")
        if not sec.verify_hostname:
            raise BadInput(
                "the collector always checks the broker's host name: ssl.endpoint.identification.algorithm"
                " none has no equivalent there"
            )
        files = {"ca_file": pem_ca_file(sec, "the collector"), "cert_file": sec.certificate_file}
        out["tls"] = {"insecure": False} | given(files | {"key_file": sec.key_file})
    return out


@dataclass(frozen=True)
class SecureClient:
    """A run's client security for a shipper kbt starts: the keys of the client's own config
    (secrets as references it resolves), the secret environment its processes alone get, and the
    same security in librdkafka terms for kbt's own clients of the run (topic config, read-back)."""

    config: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    librdkafka: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        profile: str,
        security: Mapping[str, str],
        write: Callable[[ClientSecurity | None, SecretEnv], dict[str, Any]],
    ) -> SecureClient:
        """`security` (the placement's, librdkafka terms) written by `write` (filebeat_security,
        otelcol_security); a shipper profile has no properties overrides."""
        sec, _ = split_security(security)
        secrets = SecretEnv()
        try:
            config = write(sec, secrets)
        except BadInput as exc:
            raise BadInput(f"profile {profile}: {exc}") from None
        return cls(config, secrets.values, librdkafka_security(security))
