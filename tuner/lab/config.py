"""What a lab looks like: broker count, ports, directories, tiered storage, scrape interval, heap.

A lab is one KRaft controller (node 0) plus N brokers (nodes 1..N). The controller runs on its own
so each broker's request-handler and network-thread metrics describe the broker alone: in combined
mode the controller's handler pool marks the same RequestHandlerAvgIdlePercent meter (up to 2.0).

Port layout from one base port B (loopback only):
  B           Prometheus
  B+N         broker N listener (PLAINTEXT), N = 1..5
  B+10        controller listener
  B+20+N      broker N jmx_exporter agent
  B+30+N      broker N SASL_SSL listener (only with security sasl_ssl)
  B+40        Toxiproxy API; B+40+N its proxy in front of broker N (only with via_toxiproxy)
  B+50+N      broker N internal listener: replication, bypassing the proxy (only with via_toxiproxy)
  B+60+N      broker N PLAINTEXT listener on ``listen_address`` (only with a listen address)
  B+100 ...   client exporters scraped by job kbt-client (``client_exporter_count`` ports)
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from tuner.core.errors import BadInput, did_you_mean, field_message
from tuner.core.frozen import Frozen
from tuner.core.numbers import cut_value
from tuner.core.paths import expand_user
from tuner.core.units import Count, Entries, Text
from tuner.lab.profiles import PROFILES
from tuner.spec.thresholds import THRESHOLDS

DEFAULT_BASE_PORT = 19090
MAX_BROKERS = 5
CLIENT_EXPORTER_OFFSET = 100
# The metric namings a lab's brokers can export (exporters/jmx/, tuner.lab.node_config).
JmxDialect = Literal["kbt", "strimzi", "upstream", "confluent", "strimzi-reporter", "exporter-default"]
JMX_REMOTE_OFFSET = 70  # base+70+N: broker N's JMX (RMI) port, when extra_dialects read it
DIALECT_EXPORTER_OFFSET = 80  # base+80..99: the extra dialects' standalone exporters
DIALECT_EXPORTER_PORTS = 20
LOOPBACK = "127.0.0.1"
CONTROLLER_NODE_ID = 0


def _jvm_size(value: str) -> str:
    """-Xmx's form in megabytes or gigabytes, matched whole (a trailing line break is refused)."""
    if re.fullmatch(r"[1-9][0-9]*[mMgG]", value) is None:
        raise ValueError(f"must be a JVM heap size such as 512m or 2g (got {cut_value(value)})")
    return value


JvmSize = Annotated[Text, AfterValidator(_jvm_size)]


def default_lab_dir() -> Path:
    """KBT_LAB_DIR, else ~/.local/state/kbt/lab (outside the repository)."""
    env = os.environ.get("KBT_LAB_DIR")
    if env:
        return expand_user(env)
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state) / "kbt" / "lab"


def default_base_port() -> int:
    env = os.environ.get("KBT_LAB_BASE_PORT")
    if not env:
        return DEFAULT_BASE_PORT
    try:
        return int(env)
    except ValueError:
        raise BadInput(f"KBT_LAB_BASE_PORT must be a port number, not {env!r}") from None


class LabConfig(Frozen):
    """Everything `kbt lab up` needs to start a cluster. Unknown keys are errors."""

    brokers: int = Field(3, ge=1, le=MAX_BROKERS, description="broker nodes (plus one KRaft controller)")
    base_port: int = Field(default_factory=default_base_port, ge=1024, le=65535 - 200)
    lab_dir: Path = Field(default_factory=default_lab_dir)
    tiered: bool = Field(True, description="KIP-405 tiered storage with LocalTieredStorage")
    scrape_interval_s: float = Field(5.0, ge=0.5, le=60.0, description="Prometheus scrape interval")
    scrape_timeout_s: float | None = Field(
        None, ge=0.5, le=60.0, description="Prometheus scrape timeout, at most the interval (None: equal)"
    )
    heap: JvmSize = Field("512m", description="-Xms/-Xmx per broker")
    controller_heap: JvmSize = Field("256m", description="controller heap")
    network_threads: int = Field(3, ge=1, le=16, description="num.network.threads")
    io_threads: int = Field(4, ge=1, le=32, description="num.io.threads")
    queued_max_requests: int = Field(
        THRESHOLDS.queued_max_requests,
        ge=1,
        le=100_000,
        description="queued.max.requests: the request queue's cap (Kafka's default 500)",
    )
    flush_interval_messages: Count | None = Field(
        None, ge=1, description="log.flush.interval.messages (None: Kafka's default, the OS flushes)"
    )
    metrics_sample_window_ms: int | None = Field(
        None,
        ge=1000,
        le=60_000,
        description="metrics.sample.window.ms: Kafka's network idle meter averages two such windows"
        " (None: Kafka's 30 s)",
    )
    produce_service_time_us: int = Field(
        0,
        ge=0,
        le=1_000_000,
        description="a fixed time (microseconds, not CPU) each produce request holds a request handler"
        " (the lab's broker plugin); 0: none",
    )
    profile: Text | None = Field(
        None, description="the lab profile these settings came from (tuner/lab/profiles.py), if any"
    )
    client_exporter_count: int = Field(64, ge=0, le=100, description="ports from base+100 for clients")
    security: Literal["plaintext", "sasl_ssl"] = Field(
        "plaintext", description="add a SASL_SSL (SCRAM-SHA-512 over TLS) listener per broker"
    )
    via_toxiproxy: bool = Field(False, description="clients reach each broker through a Toxiproxy proxy")
    jmx_rules: JmxDialect = Field(
        "kbt", description="the brokers' jmx_exporter rules: kbt's, or another metric dialect's naming"
    )
    extra_dialects: Annotated[list[JmxDialect], Entries] = Field(
        default_factory=list,
        description="also export every broker in these dialects' naming, each by a standalone jmx_exporter"
        " reading the broker's JMX port, scraped as job kafka-broker-<dialect> (one load read in several"
        " namings at once)",
    )
    kubernetes_job: bool = Field(
        False,
        description="also scrape every broker's exporter the way a Kubernetes Prometheus labels a Strimzi"
        " cluster (job kafka, pod my-cluster-kafka-<N>, namespace kafka, no broker label)",
    )
    listen_address: Text | None = Field(
        None,
        description="an IPv4 address of this machine the brokers also listen on and advertise"
        " (PLAINTEXT, ports base+61..; for load from other hosts or network namespaces)",
    )

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, data: Any) -> Any:
        """A named profile fills every field it sets that the caller did not give."""
        if isinstance(data, dict) and data.get("profile") is not None:
            name = data["profile"]
            if not isinstance(name, str) or name not in PROFILES:  # a mapping or list: never a TypeError
                raise ValueError(f"unknown lab profile {name!r}{did_you_mean(str(name), PROFILES)}")
            data = {**PROFILES[name].settings(), **data}
        return data

    @model_validator(mode="after")
    def _fields_agree(self) -> LabConfig:
        if len(set(self.extra_dialects)) != len(self.extra_dialects) or self.jmx_rules in self.extra_dialects:
            raise ValueError("extra_dialects must name each dialect once, and not the jmx_rules one")
        if len(self.extra_dialects) * self.brokers > DIALECT_EXPORTER_PORTS:
            raise ValueError(
                f"extra_dialects x brokers must be at most {DIALECT_EXPORTER_PORTS} (the ports base+80..99)"
            )
        if self.scrape_timeout_s is not None and self.scrape_timeout_s > self.scrape_interval_s:
            raise ValueError(
                f"scrape_timeout_s ({self.scrape_timeout_s:g}) must not exceed scrape_interval_s"
                f" ({self.scrape_interval_s:g})"
            )
        return self

    @field_validator("listen_address")
    @classmethod
    def _ipv4(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            address = ipaddress.IPv4Address(value)
        except ValueError:
            raise ValueError("must be an IPv4 address of this machine") from None
        if address.is_unspecified:
            raise ValueError("0.0.0.0 cannot be advertised: name one address of this machine")
        return str(address)

    @field_validator("lab_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return Path(os.path.abspath(expand_user(value)))

    @classmethod
    def parse(cls, data: dict[str, Any]) -> LabConfig:
        """Build from a mapping; any problem becomes one BadInput line (with a did-you-mean hint)."""
        for key in data:
            if key not in cls.model_fields:
                raise BadInput(f"unknown lab setting {key!r}{did_you_mean(key, cls.model_fields)}")
        profile = data.get("profile")
        if profile is not None and (not isinstance(profile, str) or profile not in PROFILES):
            raise BadInput(f"unknown lab profile {profile!r}{did_you_mean(str(profile), PROFILES)}")
        try:
            return cls(**data)
        except ValidationError as exc:  # the first problem, worded as kbt words every other setting's
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err.get("loc", ()))  # none: a whole-model check names its own
            raise BadInput(
                f"invalid lab setting{' ' + field if field else ''}: {field_message(err, noun='setting')}"
            ) from None

    # ---- port layout -------------------------------------------------------------------
    @property
    def node_ids(self) -> list[int]:
        return list(range(1, self.brokers + 1))

    @property
    def prometheus_port(self) -> int:
        return self.base_port

    def broker_port(self, node_id: int) -> int:
        return self.base_port + node_id

    def secure_port(self, node_id: int) -> int:
        return self.base_port + 30 + node_id

    @property
    def toxiproxy_api_port(self) -> int:
        return self.base_port + 40

    def proxy_port(self, node_id: int) -> int:
        return self.base_port + 40 + node_id

    def internal_port(self, node_id: int) -> int:
        return self.base_port + 50 + node_id

    def external_port(self, node_id: int) -> int:
        return self.base_port + 60 + node_id

    @property
    def controller_port(self) -> int:
        return self.base_port + 10

    def jmx_port(self, node_id: int) -> int:
        return self.base_port + 20 + node_id

    def jmx_remote_port(self, node_id: int) -> int:
        return self.base_port + JMX_REMOTE_OFFSET + node_id

    def dialect_exporter_port(self, dialect: str, node_id: int) -> int:
        index = self.extra_dialects.index(dialect)  # type: ignore[arg-type]
        return self.base_port + DIALECT_EXPORTER_OFFSET + index * self.brokers + node_id - 1

    @property
    def client_exporter_ports(self) -> list[int]:
        first = self.base_port + CLIENT_EXPORTER_OFFSET
        return list(range(first, first + self.client_exporter_count))

    def named_ports(self) -> list[tuple[str, int]]:
        """Every port the lab will listen on or scrape, with what it is for."""
        ports = [("Prometheus", self.prometheus_port), ("controller", self.controller_port)]
        for node in self.node_ids:
            ports += [
                (f"broker {node} listener", self.broker_port(node)),
                (f"broker {node} jmx exporter", self.jmx_port(node)),
            ]
            if self.security == "sasl_ssl":
                ports.append((f"broker {node} SASL_SSL listener", self.secure_port(node)))
            if self.listen_address is not None:
                ports.append((f"broker {node} listener on {self.listen_address}", self.external_port(node)))
            if self.extra_dialects:
                ports.append((f"broker {node} JMX", self.jmx_remote_port(node)))
            for dialect in self.extra_dialects:
                ports.append((f"broker {node} {dialect} exporter", self.dialect_exporter_port(dialect, node)))
            if self.via_toxiproxy:
                ports.append((f"broker {node} proxy", self.proxy_port(node)))
                ports.append((f"broker {node} internal listener", self.internal_port(node)))
        if self.via_toxiproxy:
            ports.append(("Toxiproxy API", self.toxiproxy_api_port))
        ports += [("client exporter", p) for p in self.client_exporter_ports]
        return ports

    def host_of(self, port: int) -> str:
        """The address a lab port is bound on: the listen address for its listeners there."""
        if self.listen_address is not None and port in {self.external_port(n) for n in self.node_ids}:
            return self.listen_address
        return LOOPBACK

    @property
    def replication_factor(self) -> int:
        """Replication of internal topics: 3, or fewer when the lab has fewer nodes."""
        return min(3, self.brokers)
