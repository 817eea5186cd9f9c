"""Target kind `file`: any Kafka cluster named by a target file (reference: docs/targets.md).

    name: staging
    bootstrap_servers: [kafka-0.staging:9093, kafka-1.staging:9093]
    client:
      properties_file: client.properties     # Kafka's format; or `properties:` inline
    prometheus:
      url: https://prom.staging/api/v1/..?tenant=a   # the query string is kept on every request
      bearer_token_file: prom-token
      ca_file: ca.pem
    brokers: {job: kafka, matchers: {cluster: staging}, broker_label: pod}
    dialect: auto                            # kbt | strimzi | upstream | confluent | strimzi-reporter |
                                             # exporter-default | msk | auto
    limits: {max_msgs_per_s: 20000, max_bytes_per_s: 20000000}
    topic_prefix: kbt-

Relative paths are relative to the target file. Credentials appear only as `${VAR}` references or
files; the file itself never holds one.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator, model_validator

from tuner.core.envref import is_reference
from tuner.core.errors import BadInput, field_message
from tuner.core.inputs import is_file, not_a_file, plain_data, read_yaml
from tuner.core.numbers import parse_int
from tuner.core.paths import expand_user
from tuner.core.properties import parse_properties, read_properties
from tuner.core.redact import is_secret_name
from tuner.core.text import cut
from tuner.spec.base import StrictModel
from tuner.spec.limits import MAX_BYTES_PER_S, MAX_ITEMS, MAX_RATE_PER_S
from tuner.target.base import BrokerSelectors, ClusterFlags, PrometheusAccess, Target, TargetLimits
from tuner.target.security import check_properties, hold_literal_secrets

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HOST_PORT = re.compile(r"(\[[0-9a-fA-F:.]{2,45}\]|[A-Za-z0-9_.-]{1,253}):([0-9]{1,5})")
_HOST_LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_PREFIX = re.compile(r"^[A-Za-z0-9._-]{1,40}$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class ClientFile(StrictModel):
    properties_file: str | None = None
    properties: dict[str, str] = Field(default_factory=dict, max_length=MAX_ITEMS)

    @model_validator(mode="after")
    def _one_source(self) -> ClientFile:
        if self.properties_file and self.properties:
            raise ValueError("give properties_file or properties, not both")
        return self


class BasicAuthFile(StrictModel):
    username_env: str
    password_env: str

    @field_validator("username_env", "password_env")
    @classmethod
    def _env(cls, value: str) -> str:
        if not _ENV_NAME.match(value):
            raise ValueError(f"{value!r} is not an environment variable name")
        return value


class PrometheusFile(StrictModel):
    url: str
    bearer_token_file: str | None = None
    basic_auth: BasicAuthFile | None = None
    ca_file: str | None = None
    headers: dict[str, str] = Field(default_factory=dict, max_length=MAX_ITEMS)
    scrape_interval_s: float = Field(15.0, gt=0, le=600)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        try:
            parts = urlsplit(value)
        except ValueError:  # "Invalid IPv6 URL": a [host] not closed or not an address
            raise ValueError(
                f"{value!r} is not a URL (its [IPv6] host is not closed or not an address)"
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL with a host")
        try:
            port = parts.port
        except ValueError:  # urllib raised it later, outside any check, as a traceback
            port = -1
        if port is not None and not 0 < port < 65536:
            raise ValueError("the URL's port is not 1-65535")
        if value != value.strip() or any(c in value for c in "\r\n\t"):
            raise ValueError("the URL holds a line break or blanks")
        if parts.password:
            raise ValueError("the URL holds a password: use basic_auth with environment variables")
        return value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            sensitive = name.lower() in ("authorization", "cookie") or is_secret_name(name)
            if sensitive and not is_reference(text):
                raise ValueError(f'header "{name}" must be a ${{VAR}} reference')
        return value


class BrokersFile(StrictModel):
    job: str = "kafka-broker"
    matchers: dict[str, str] = Field(default_factory=dict, max_length=MAX_ITEMS)
    broker_label: str = "broker"

    @field_validator("broker_label", "matchers")
    @classmethod
    def _labels(cls, value: str | dict[str, str]) -> str | dict[str, str]:
        for name in [value] if isinstance(value, str) else value:  # a matcher's label is its key
            if not _LABEL.match(name):
                raise ValueError(f"{name!r} is not a Prometheus label name")
        return value


class LimitsFile(StrictModel):
    max_msgs_per_s: float | None = Field(None, gt=0, le=MAX_RATE_PER_S)
    max_bytes_per_s: float | None = Field(None, gt=0, le=MAX_BYTES_PER_S)


class TargetFile(StrictModel):
    name: str = Field(min_length=1, max_length=80)
    bootstrap_servers: list[str] = Field(min_length=1, max_length=MAX_ITEMS)
    client: ClientFile = Field(default_factory=ClientFile)
    prometheus: PrometheusFile | None = None
    brokers: BrokersFile = Field(default_factory=BrokersFile)
    dialect: Literal[
        "kbt", "strimzi", "upstream", "confluent", "strimzi-reporter", "exporter-default", "msk", "auto"
    ] = "auto"
    limits: LimitsFile = Field(default_factory=LimitsFile)
    topic_prefix: str = "kbt-"

    @field_validator("bootstrap_servers", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        # blanks around a comma are dropped, a line break is not (it would end up in a client's config)
        return [s.strip(" \t") for s in value.split(",") if s.strip()] if isinstance(value, str) else value

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers(cls, value: list[str]) -> list[str]:
        if len(value) > MAX_BOOTSTRAP_SERVERS:
            raise ValueError(f"{len(value):,} servers: at most {MAX_BOOTSTRAP_SERVERS} are taken")
        for server in value:
            if host_port(server) is None:
                raise ValueError(
                    f"{server[:120]!r} is not host:port (a DNS name of at most 253 characters, an"
                    " IPv4 address or a [bracketed] IPv6 address, and a port 1-65535)"
                )
        return value

    @field_validator("topic_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not _PREFIX.match(value):
            raise ValueError(f"{value!r}: 1-40 characters of letters, digits, '.', '_' or '-'")
        return value


MAX_BOOTSTRAP_SERVERS = 100


def host_port(server: str) -> tuple[str, int] | None:
    """`host:port` as the Kafka clients take it -> (host, an IPv6 host without its brackets; port);
    None when it is not one (a host with blanks, an IPv6 address not closed, a port outside 1-65535)."""
    # fullmatch: `$` would let a value ending in a line break through
    match = _HOST_PORT.fullmatch(server)
    if match is None or not _host(match.group(1)):
        return None
    host, port = match.group(1), parse_int(match.group(2), "port")
    return (host.removeprefix("[").removesuffix("]"), port) if 0 < port < 65536 else None


def _host(host: str) -> bool:
    """A host as DNS and the clients take it: a [bracketed] IPv6 address that is one, or a name of
    at most 253 characters in labels of 1-63."""
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    return len(host) <= 253 and all(
        _HOST_LABEL.fullmatch(label) for label in host.removesuffix(".").split(".")
    )


def is_loopback(server: str) -> bool:
    host = server.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _error(path: Path, exc: ValidationError) -> BadInput:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top)"
    return BadInput(f"target file {path.name}: {loc}: {field_message(err)}")


def load_target_file(path: Path) -> TargetFile:
    # The input boundary: a regular file within the cap, depth and alias limits, finite numbers.
    raw = plain_data(read_yaml(path, "target file"))
    if not isinstance(raw, dict):
        raise BadInput(f"target file {path.name}: expected a mapping with name and bootstrap_servers")
    try:
        return TargetFile.model_validate(raw)
    except ValidationError as exc:
        raise _error(path, exc) from None


def _path(base: Path, value: str | None) -> Path | None:
    if value is None:
        return None
    p = expand_user(value)
    return p if p.is_absolute() else (base / p)


def _local_file(base: Path, value: str | None, field: str, source: str) -> Path | None:
    """A file the target names for kbt to read: said missing when the target is read, before any
    command waits on the cluster (a missing token file was said after 11 s of metadata retries)."""
    path = _path(base, value)
    if path is not None and value is not None and not is_file(path):
        kind = not_a_file(path)  # named as written, not as the name "." or /dev/zero resolve to
        what = f"is {kind}, not a file" if kind else "no such file"
        raise BadInput(f"{source}: {field} {cut(value, 200)}: {what}")
    return path


def _client_properties(
    base: Path, client: ClientFile, where: str, literal_secrets: bool = False
) -> dict[str, str]:
    props = dict(client.properties)
    source = _path(base, client.properties_file)
    if source is not None:
        # The bounded reader: a FIFO, a directory or /dev/zero is named as such, never read.
        text = read_properties(source, "client properties file")
        # --command-config FILE names the file already; a target file's client.properties_file does not
        props = parse_properties(text, where if where.endswith(source.name) else f"{where} ({source.name})")
    if literal_secrets:
        props = hold_literal_secrets(props)
    check_properties(props, where)
    for key in ("ssl.truststore.location", "ssl.ca.location", "ssl.keystore.location",
                "ssl.certificate.location", "ssl.key.location"):  # fmt: skip
        if key in props and not is_reference(props[key]):
            props[key] = str(_path(source.parent if source else base, props[key]))
    return props


def file_target(path: Path) -> Target:
    """The cluster a target file names (BadInput, one line, for anything wrong in it)."""
    source = f"target file {path.name}"
    return _target(load_target_file(path), path.resolve().parent, f"{source}: client", source=source)


def flags_target(flags: ClusterFlags) -> Target:
    """The target a target file holding the same three things would give: `--bootstrap-server`,
    `--command-config` (Kafka's client properties; a secret written in it, as Kafka's tools allow,
    is registered with the redaction layer and never shown) and `--prometheus`."""
    raw: dict[str, Any] = {
        "name": (flags.bootstrap_server.split(",")[0].strip() or flags.bootstrap_server)[:80],
        "bootstrap_servers": flags.bootstrap_server,
    }
    if flags.command_config is not None:
        raw["client"] = {"properties_file": str(flags.command_config)}
    if flags.prometheus is not None:
        raw["prometheus"] = {"url": flags.prometheus}
    try:
        spec = TargetFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        flag = {"bootstrap_servers": "--bootstrap-server", "prometheus": "--prometheus"}.get(
            str(err["loc"][0]), "--bootstrap-server"
        )
        if err["type"] in ("too_short", "string_too_short") and flag == "--bootstrap-server":
            raise BadInput(
                "--bootstrap-server: give at least one host:port (a comma-separated list)"
            ) from None
        raise BadInput(f"{flag}: {field_message(err)}") from None
    where = f"--command-config {flags.command_config.name}" if flags.command_config else "--command-config"
    return _target(spec, Path.cwd(), where, literal_secrets=True)


def _target(
    spec: TargetFile, base: Path, where: str, literal_secrets: bool = False, source: str = "the target"
) -> Target:
    prometheus = None
    if spec.prometheus is not None:
        p = spec.prometheus
        prometheus = PrometheusAccess(
            url=p.url,
            bearer_token_file=_local_file(base, p.bearer_token_file, "prometheus.bearer_token_file", source),
            basic_auth_user_env=p.basic_auth.username_env if p.basic_auth else None,
            basic_auth_password_env=p.basic_auth.password_env if p.basic_auth else None,
            ca_file=_local_file(base, p.ca_file, "prometheus.ca_file", source),
            headers=dict(p.headers),
        )
    return Target(
        name=spec.name,
        kind="file",
        bootstrap_servers=",".join(spec.bootstrap_servers),
        client_properties=_client_properties(base, spec.client, where, literal_secrets),
        prometheus=prometheus,
        selectors=BrokerSelectors(
            job=spec.brokers.job, matchers=dict(spec.brokers.matchers), broker_label=spec.brokers.broker_label
        ),
        dialect=spec.dialect,
        scrape_interval_s=spec.prometheus.scrape_interval_s if spec.prometheus else 15.0,
        loopback=all(is_loopback(s) for s in spec.bootstrap_servers),
        topic_prefix=spec.topic_prefix,
        limits=TargetLimits(spec.limits.max_msgs_per_s, spec.limits.max_bytes_per_s),
    )
