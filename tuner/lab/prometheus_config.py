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


def prometheus_config(cfg: LabConfig) -> dict[str, Any]:
    """Scrape every broker's jmx agent (label broker="<node id>") and the client exporter range."""
    interval = _seconds(cfg.scrape_interval_s)
    timeout = _seconds(cfg.scrape_timeout_s or cfg.scrape_interval_s)
    brokers = [
        {"targets": [f"{LOOPBACK}:{cfg.jmx_port(node)}"], "labels": {"broker": str(node)}}
        for node in cfg.node_ids
    ]
    cluster = [{"target_label": "cluster", "replacement": CLUSTER}]
    config: dict[str, Any] = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval, "scrape_timeout": timeout},
        "rule_files": [str(repo_root() / RULE_FILES)],
        "scrape_configs": [{"job_name": BROKER_JOB, "static_configs": brokers, "relabel_configs": cluster}],
    }
    config["scrape_configs"] += kubernetes_scrape_config(cfg, cluster)
    if cfg.client_exporter_ports:
        clients = [{"targets": [f"{LOOPBACK}:{port}" for port in cfg.client_exporter_ports]}]
        config["scrape_configs"].append(
            {"job_name": CLIENT_JOB, "static_configs": clients, "relabel_configs": cluster}
        )
    return config


# LabConfig.kubernetes_job: the brokers' exporters scraped a second time the way a Kubernetes
# Prometheus (pod service discovery) labels a Strimzi cluster's brokers.
KUBERNETES_JOB = "kafka"
KUBERNETES_POD = "my-cluster-kafka-{node}"
KUBERNETES_NAMESPACE = "kafka"


def kubernetes_scrape_config(cfg: LabConfig, cluster: list[dict[str, str]]) -> list[dict[str, Any]]:
    if not cfg.kubernetes_job:
        return []
    targets = [
        {
            "targets": [f"{LOOPBACK}:{cfg.jmx_port(n)}"],
            "labels": {"pod": KUBERNETES_POD.format(node=n), "namespace": KUBERNETES_NAMESPACE},
        }
        for n in cfg.node_ids
    ]
    return [{"job_name": KUBERNETES_JOB, "static_configs": targets, "relabel_configs": cluster}]


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
