"""The Target interface: a cluster's bootstrap servers, client security, admin limits, Prometheus
access, broker label selectors and metric dialect, and what the target can do or needs (a topic
ledger, queries translated to its dialect). Plain frozen data: every kind builds one, and nothing
outside tuner/target/ asks which kind it is."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.paths import cache_dir


@dataclass(frozen=True)
class PrometheusAccess:
    """How to query the Prometheus that scrapes the target's brokers. Secrets are never held
    here as text: a bearer token file, and basic auth as the names of environment variables."""

    url: str
    bearer_token_file: Path | None = None
    basic_auth_user_env: str | None = None
    basic_auth_password_env: str | None = None
    ca_file: Path | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BrokerSelectors:
    """Which series are the target's brokers: the scrape job, extra label matchers (a cluster
    label) and the label that names a broker."""

    job: str = "kafka-broker"
    matchers: Mapping[str, str] = field(default_factory=dict)
    broker_label: str = "broker"


@dataclass(frozen=True)
class TargetLimits:
    """Caps kbt holds itself to on a shared cluster (None: no cap)."""

    max_msgs_per_s: float | None = None
    max_bytes_per_s: float | None = None


@dataclass(frozen=True)
class LabSide:
    """What a target has when it is kbt's own lab, and no other cluster does."""

    lab_dir: Path  # faults and lab-only stages need it
    # Ports of kbt's client exporters that the lab's Prometheus scrapes.
    client_exporter_ports: tuple[int, ...] = ()
    # A second listener of the same cluster with SASL_SSL (`kbt lab up --security sasl_ssl`), and
    # the client properties for it; profiles with `security: sasl_ssl` use it.
    secure_bootstrap_servers: str = ""
    secure_client_properties: Mapping[str, str] = field(default_factory=dict)
    # The first of a block of local ports kbt's own listeners may use (locust master and web UI).
    local_port_base: int | None = None
    # queued.max.requests: records then carry the request queue's time at it.
    request_queue_cap: int | None = None
    # Process ids of the brokers, running on this machine: their threads can be sampled.
    local_broker_pids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Target:
    """Where a run's load goes and where its broker figures come from."""

    name: str
    kind: str  # the registry key: lab | file
    bootstrap_servers: str
    # Client security in Kafka's own properties format (security.protocol, sasl.*, ssl.*), values
    # possibly `${VAR}` references resolved only when a client is built.
    client_properties: Mapping[str, str] = field(default_factory=dict)
    prometheus: PrometheusAccess | None = None
    selectors: BrokerSelectors = field(default_factory=BrokerSelectors)
    dialect: str = "kbt"  # the metric naming its brokers export (or "auto": detect)
    kafka_version: str | None = None
    scrape_interval_s: float = 5.0
    # Every bootstrap address is on loopback (no confirmation needed before sending load).
    loopback: bool = True
    # kbt creates, writes and deletes only topics under this prefix.
    topic_prefix: str = "kbt-"
    limits: TargetLimits = field(default_factory=TargetLimits)
    # What only kbt's own lab has (None: any other cluster).
    lab: LabSide | None = None

    @property
    def keeps_topic_ledger(self) -> bool:
        """kbt lists the topics it creates on a cluster in a ledger, so the next run deletes a crashed
        run's topics (target/ledger.py); its own lab needs none (its topics go with it)."""
        return self.lab is None

    @property
    def translated_prometheus(self) -> bool:
        """Queries to a cluster's Prometheus go through its metric dialect and broker selectors, with
        the auth of `prometheus` (measure/dialects.py); the lab's own Prometheus is queried as is."""
        return self.lab is None

    @property
    def prometheus_url(self) -> str | None:
        return self.prometheus.url if self.prometheus is not None else None

    @property
    def topic_ledger(self) -> Path | None:
        """The ledger file of the topics kbt created on this target (None: it keeps none)."""
        if not self.keeps_topic_ledger:
            return None
        key = hashlib.sha256(f"{self.name}|{self.bootstrap_servers}".encode()).hexdigest()[:16]
        return cache_dir() / "topic-ledgers" / f"{key}.json"


@dataclass(frozen=True)
class ClusterFlags:
    """A cluster named the way Kafka's own tools name one, no target file needed:
    `--bootstrap-server`, `--command-config FILE` (client properties) and `--prometheus URL`."""

    bootstrap_server: str
    command_config: Path | None = None
    prometheus: str | None = None


# What names a cluster other than the lab: a target file or Kafka-tool flags.
TargetSource = Path | ClusterFlags
