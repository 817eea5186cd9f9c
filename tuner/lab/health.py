"""Is each lab component healthy? Small probes used by `up` (waiting) and `status` (reporting)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import requests

from tuner.core.numbers import sample_value
from tuner.lab.config import LOOPBACK
from tuner.lab.prometheus_config import BROKER_JOB

PROBE_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Health:
    component: str
    healthy: bool
    detail: str


def brokers_in_metadata(bootstrap_servers: str, timeout_s: float = 5.0) -> set[int]:
    """Node ids of the brokers the cluster metadata lists (empty when unreachable: at once when
    every broker refuses, as a stopped lab's do; a waiting caller asks again)."""
    from tuner.core.kafka_clients import Connection, Reach, admin_client, answer

    conn = Connection(bootstrap_servers)
    reach = Reach(conn)  # its logger keeps librdkafka's lines off the terminal
    settings: dict[str, Any] = {
        "socket.timeout.ms": int(timeout_s * 1000),
        "log_level": 0,
        **reach.settings(),
    }
    admin = admin_client(conn, settings)
    try:
        cluster = answer(admin, reach, admin.describe_cluster(request_timeout=timeout_s), timeout_s + 1)
    except Exception:
        return set()
    return {node.id for node in cluster.nodes}


def silent_logger(name: str = "kbt.lab.admin") -> logging.Logger:
    """A librdkafka client's logger that says nothing (its errors are read from its answers). Asked
    for every client (a chaos run's watermark check builds one each half second): its one handler is
    added once, not once per call."""
    logger = logging.getLogger(name)
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def jmx_exporter_ok(port: int) -> tuple[bool, str]:
    """The broker's jmx agent answers and exports the broker series."""
    try:
        resp = requests.get(f"http://{LOOPBACK}:{port}/metrics", timeout=PROBE_TIMEOUT_S)
    except requests.RequestException as exc:
        return False, f"jmx exporter on port {port} not answering ({type(exc).__name__})"
    if resp.status_code != 200:
        return False, f"jmx exporter on port {port} answered HTTP {resp.status_code}"
    if "jmx_scrape_error 0" not in resp.text:
        return False, f"jmx exporter on port {port} reports a scrape error"
    return True, "ok"


def prometheus_ready(port: int) -> tuple[bool, str]:
    try:
        resp = requests.get(f"http://{LOOPBACK}:{port}/-/ready", timeout=PROBE_TIMEOUT_S)
    except requests.RequestException as exc:
        return False, f"not answering on port {port} ({type(exc).__name__})"
    return (resp.status_code == 200), ("ready" if resp.status_code == 200 else f"HTTP {resp.status_code}")


def broker_targets_up(port: int) -> dict[str, float]:
    """{broker label: value of up} for the kafka-broker job, as Prometheus last scraped it."""
    try:
        resp = requests.get(
            f"http://{LOOPBACK}:{port}/api/v1/query",
            params={"query": f'up{{job="{BROKER_JOB}"}}'},
            timeout=PROBE_TIMEOUT_S,
        )
        return {
            r["metric"].get("broker", "?"): sample_value(r["value"][1], "broker idle ratio")
            for r in resp.json()["data"]["result"]
        }
    except (requests.RequestException, ValueError, KeyError, TypeError):
        return {}
