"""The lab's Prometheus: its prometheus.yml and command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.core.paths import repo_root
from tuner.core.yaml_block import yaml_document
from tuner.lab.config import LOOPBACK, LabConfig
from tuner.lab.layout import LabLayout

BROKER_JOB = "kafka-broker"
CLIENT_JOB = "kbt-client"
# Every lab series carries cluster="kbt-lab", as a production scrape config would label its clusters
# (the dashboards' cluster variable reads it).
CLUSTER = "kbt-lab"
# Recording and alert rules (generated; see exporters/prometheus/README.md).
RULE_FILES = Path("exporters") / "prometheus" / "*.rules.yml"


def _seconds(value: float) -> str:
    return f"{int(value * 1000)}ms"


def _target(port: int, labels: dict[str, str]) -> dict[str, Any]:
    return {"targets": [f"{LOOPBACK}:{port}"], "labels": labels}


def _job(name: str, targets: list[dict[str, Any]], relabel: list[dict[str, Any]]) -> dict[str, Any]:
    return {"job_name": name, "static_configs": targets, "relabel_configs": relabel}


def prometheus_config(cfg: LabConfig) -> dict[str, Any]:
    """Scrape every broker's jmx agent (label broker="<node id>") and the client exporter range."""
    interval = _seconds(cfg.scrape_interval_s)
    timeout = _seconds(cfg.scrape_timeout_s or cfg.scrape_interval_s)
    brokers = [_target(cfg.jmx_port(n), {"broker": str(n)}) for n in cfg.node_ids]
    cluster = [{"target_label": "cluster", "replacement": CLUSTER}]
    config: dict[str, Any] = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval, "scrape_timeout": timeout},
        "rule_files": [str(repo_root() / RULE_FILES)],
        "scrape_configs": [_job(BROKER_JOB, brokers, cluster)],
    }
    for dialect in cfg.extra_dialects:  # the same brokers in another naming, read over JMX
        by_instance = dialect in BROKERS_BY_INSTANCE
        ports = {n: cfg.dialect_exporter_port(dialect, n) for n in cfg.node_ids}
        targets = [_target(port, {} if by_instance else {"broker": str(n)}) for n, port in ports.items()]
        config["scrape_configs"].append(_job(dialect_job(dialect), targets, cluster))
    config["scrape_configs"] += kubernetes_scrape_config(cfg, cluster)
    if cfg.client_exporter_ports:
        clients = [{"targets": [f"{LOOPBACK}:{port}" for port in cfg.client_exporter_ports]}]
        config["scrape_configs"].append(_job(CLIENT_JOB, clients, cluster))
    return config


# Extra dialects scraped as MSK's open monitoring is: each broker a target (`instance`), no label
# naming it.
BROKERS_BY_INSTANCE = frozenset({"exporter-default"})


# LabConfig.kubernetes_job: the brokers' exporters scraped a second time the way a Kubernetes
# Prometheus (pod service discovery) labels a Strimzi cluster's brokers.
KUBERNETES_JOB = "kafka"
KUBERNETES_POD = "my-cluster-kafka-{node}"
KUBERNETES_NAMESPACE = "kafka"
KUBERNETES_CLUSTER = "my-cluster"


def dialect_job(dialect: str) -> str:
    """The scrape job of a lab's extra dialect (LabConfig.extra_dialects)."""
    return f"{BROKER_JOB}-{dialect}"


# The labels Strimzi's example PodMonitor gives a broker, made by relabelling as it makes them from
# the pod's metadata: its name as `kubernetes_pod_name` (and `pod`, as the Prometheus Operator adds),
# its strimzi.io/* labels as strimzi_io_*, the Kubernetes node as `node_name` (one per broker here).
_STRIMZI_RELABEL: list[dict[str, Any]] = [
    {"source_labels": ["pod"], "target_label": "kubernetes_pod_name"},
    {"source_labels": ["pod"], "target_label": "strimzi_io_pod_name"},
    {"target_label": "strimzi_io_cluster", "replacement": KUBERNETES_CLUSTER},
    {"target_label": "strimzi_io_kind", "replacement": "Kafka"},
    {"target_label": "strimzi_io_name", "replacement": f"{KUBERNETES_CLUSTER}-kafka"},
    {"source_labels": ["pod"], "regex": ".*-(\\d+)", "target_label": "node_name", "replacement": "node-$1"},
]


def kubernetes_scrape_config(cfg: LabConfig, cluster: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The brokers' own exporter only: an extra dialect's exporter reads the broker over JMX, which
    costs the broker more per scrape than its in-process agent (the pod labels are the same)."""
    if not cfg.kubernetes_job:
        return []
    targets = [
        _target(cfg.jmx_port(n), {"pod": KUBERNETES_POD.format(node=n), "namespace": KUBERNETES_NAMESPACE})
        for n in cfg.node_ids
    ]
    return [_job(KUBERNETES_JOB, targets, cluster + _STRIMZI_RELABEL)]


def render_prometheus_config(cfg: LabConfig) -> str:
    return yaml_document(prometheus_config(cfg), ["Written by kbt lab up on every fresh start."])


def prometheus_command(cfg: LabConfig, layout: LabLayout, binary: str = "prometheus") -> list[str]:
    return [
        binary,
        f"--config.file={layout.prometheus_config}",
        f"--storage.tsdb.path={layout.prometheus_data_dir}",
        "--storage.tsdb.retention.time=7d",
        f"--web.listen-address={LOOPBACK}:{cfg.prometheus_port}",
        "--web.enable-lifecycle",
        "--log.level=warn",
    ]
