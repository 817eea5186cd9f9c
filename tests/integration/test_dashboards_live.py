"""Every panel of every generated dashboard shows data on the real lab.

A Grafana server cannot be installed here, so the dashboards are proven the way that matters: after
real load (the smoke sweep, a short `kbt stress` with real-time and lagging consumer groups on a
tiered topic, and a tiered topic read back from offset 0), every panel target's PromQL, with the
variables filled in as Grafana would, is run as a range query over that window against the lab's
Prometheus and must return at least one series with a value. A panel without data fails by name.
The lab's Prometheus also loads exporters/prometheus/*.rules.yml: every rule must evaluate cleanly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.labhelp import busy_host_only, wait_for, wait_for_leaders
from tests.unit.dashboard_reading import variable_promql
from tuner.core.paths import repo_root
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.render.dashboards import BOARDS
from tuner.render.dashboards.targets import fill, panel_queries, query_variables

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RATE_INTERVAL = "15s"  # what Grafana's $__rate_interval is at a zoom of a few minutes
STEP_S = 5.0
STRESS = """\
name: dash-stress
workload:
  name: dash-stress
  topics: [{{name: dash-stress, partitions: 3, replication_factor: {rf}}}]
  producers: 2
  rate_per_producer: 100
  message: {{kind: generated, bytes: 1000}}
  duration_s: 5
topic_configs: {{remote.storage.enable: true, segment.ms: 4000, local.retention.ms: 4000}}
profiles:
  batched: {{name: batched, linger_ms: 20, compression: lz4}}
shape: {{prefill_s: 20, steps: [1], step_s: 16, drain_s: 5, settle_s: 2}}
consumer_groups: [{{name: rt, mode: realtime}}, {{name: replay, mode: lagging, lag_s: 15}}]
lagging_readers: "on"
gates: {{network_idle_min: 0.01}}
"""
TIERED_RECORDS = 5000  # x 1000 B: about four 1 MiB segments roll and move to the remote tier


@dataclass(frozen=True)
class Window:
    start: float
    end: float


def _topic_sum(prom: Prometheus, name: str, topic: str) -> float:
    return prom.value(f'sum({name}{{job="kafka-broker",topic="{topic}"}})') or 0.0


def _smoke_sweep(lab: LabState, out: Path) -> None:
    from tuner.runner.wiring import sweep_runner
    from tuner.spec.loader import load_sweep

    outcome = sweep_runner(lab_dir=lab.lab_dir, results=out).run(
        load_sweep(repo_root() / "loadtests/smoke.yaml")
    )
    assert len(outcome.records) == 2 and all(busy_host_only(r.status, r.problems) for r in outcome.records), [
        r.problems for r in outcome.records
    ]


def _stress(lab: LabState, tmp: Path) -> None:
    spec = tmp / "stress.yaml"
    spec.write_text(STRESS.format(rf=min(2, len(lab.brokers))))
    proc = subprocess.run(
        [sys.executable, "-m", "tuner", "stress", str(spec), "--lab-dir", str(lab.lab_dir),
         "--results", str(tmp / "stress-results")],
        capture_output=True, text=True, timeout=600, cwd=tmp,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def _tiered_round_trip(lab: LabState, admin: AdminClient, prom: Prometheus) -> None:
    """Segments copied to the remote tier, then read back from offset 0 (remote fetches)."""
    topic = f"it-dash-tiered-{uuid.uuid4().hex[:8]}"
    config = {"remote.storage.enable": "true", "segment.bytes": "1048576", "local.retention.ms": "1000"}
    admin.create_topics([NewTopic(topic, 1, min(2, len(lab.brokers)), config=config)])[topic].result(30)
    try:
        wait_for_leaders(admin, topic, 1)
        producer = Producer({"bootstrap.servers": lab.bootstrap_servers, "acks": "all", "linger.ms": 20})
        for i in range(TIERED_RECORDS):
            producer.produce(topic, f"{i:08d}".encode().ljust(1000, b"x"))
            if i % 500 == 0:
                producer.poll(0)
        assert producer.flush(60) == 0
        wait_for(
            lambda: _topic_sum(prom, "kafka_server_remote_copy_bytes_total", topic), 180, "remote copy", 2
        )
        consumer = Consumer(
            {
                "bootstrap.servers": lab.bootstrap_servers,
                "group.id": f"dash-{topic}",
                "enable.auto.commit": False,
            }
        )
        consumer.assign([TopicPartition(topic, 0, 0)])
        seen = 0
        deadline = time.monotonic() + 120
        while seen < TIERED_RECORDS and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen += 1
        consumer.close()
        assert seen == TIERED_RECORDS
        wait_for(
            lambda: _topic_sum(prom, "kafka_server_remote_fetch_bytes_total", topic), 60, "remote fetch", 1
        )
    finally:
        for fut in admin.delete_topics([topic], operation_timeout=30).values():
            fut.result(30)


@pytest.fixture(scope="module")
def traffic(lab: LabState, admin: AdminClient, prometheus: Prometheus, tmp_path_factory: Any) -> Window:
    tmp = tmp_path_factory.mktemp("dash")
    start = time.time() - 5
    _smoke_sweep(lab, tmp / "results")
    _stress(lab, tmp)
    _tiered_round_trip(lab, admin, prometheus)
    time.sleep(4 * lab.config.scrape_interval_s)  # the last samples are scraped
    window = Window(start, time.time())
    _brokers_were_scraped(prometheus, window)
    return window


def _brokers_were_scraped(prom: Prometheus, window: Window) -> None:
    """A panel without data must mean a wrong query, not a Prometheus that could not reach the
    brokers: on a machine too busy to answer scrapes in time, say that instead."""
    span = f"{max(1, int(window.end - window.start))}s"
    scraped = {
        s.labels.get("broker", "?"): s.value
        for s in prom.instant(f'avg_over_time(up{{job="kafka-broker"}}[{span}])', at=window.end)
    }
    starved = {b: f"{v:.0%}" for b, v in scraped.items() if v < 0.5}
    assert scraped and not starved, (
        f"the lab's Prometheus scraped these brokers under half of the time during the load: {starved} "
        "(scrapes time out on an overloaded machine; a longer --scrape-interval helps)"
    )


def _has_value(prom: Prometheus, expr: str, window: Window) -> bool:
    return any(
        any(v == v for _, v in s.points)  # a non-NaN point (0/0 before traffic is NaN)
        for s in prom.range(expr, window.start, window.end, STEP_S)
    )


def _variable_values(prom: Prometheus, data: dict[str, Any], window: Window) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    all_values = {name: ".*" for name in query_variables(data)}
    for name, definition in query_variables(data).items():
        expr, label = variable_promql(definition, all_values)
        found = {s.labels.get(label, "") for s in prom.range(expr, window.start, window.end, STEP_S)}
        values[name] = sorted(v for v in found if v)
    return values


def test_every_panel_query_returns_data(traffic: Window, prometheus: Prometheus) -> None:
    failures = []
    checked = 0
    for b in BOARDS:
        data = json.loads(b.json())
        values = {name: ".*" for name in query_variables(data)}  # every variable at "All"
        for q in panel_queries(data):
            expr = fill(q.expr, values, RATE_INTERVAL)
            checked += 1
            if not _has_value(prometheus, expr, traffic):
                failures.append(f"{q.where}: no data for {expr}")
    assert not failures, f"{len(failures)} of {checked} panel queries returned no data:\n" + "\n".join(
        failures
    )
    assert checked >= 60  # all four dashboards were read


def test_variables_resolve_and_a_chosen_cluster_and_broker_still_show_data(
    traffic: Window, prometheus: Prometheus, lab: LabState
) -> None:
    from tuner.lab.prometheus_config import CLUSTER

    data = json.loads(next(b for b in BOARDS if b.uid == "kbt-broker-pressure").json())
    values = _variable_values(prometheus, data, traffic)
    if not values["cluster"]:
        pytest.skip("this lab's Prometheus predates the cluster label (restart the lab)")
    assert values["cluster"] == [CLUSTER]
    assert values["broker"] == sorted(str(b.id) for b in lab.brokers)
    assert values["topic"], "no topic seen during the load"
    for b in BOARDS:
        data = json.loads(b.json())
        resolved = _variable_values(prometheus, data, traffic)
        assert all(resolved.values()), f"{b.title}: a variable has no values: {resolved}"
        chosen = {name: ".*" for name in resolved}
        chosen["cluster"] = CLUSTER
        if "broker" in chosen:
            chosen["broker"] = "|".join(resolved["broker"])  # Grafana's multi-value regex
        for q in panel_queries(data):
            if "$broker" in q.expr or "$cluster" in q.expr:
                expr = fill(q.expr, chosen, RATE_INTERVAL)
                assert _has_value(prometheus, expr, traffic), f"{q.where}: no data for {expr}"


def test_lab_prometheus_evaluates_the_rules(lab: LabState, traffic: Window, prometheus: Prometheus) -> None:
    groups = requests.get(f"{lab.prometheus_url}/api/v1/rules", timeout=10).json()["data"]["groups"]
    if not groups:
        pytest.skip("this lab's Prometheus loads no rule files (started before rule loading; restart it)")
    assert {g["name"] for g in groups} == {"kbt-kafka-broker.recording", "kbt-kafka-broker.alerts"}
    for group in groups:
        for rule in group["rules"]:
            assert rule["health"] == "ok", (rule["name"], rule.get("lastError"))
    rows = prometheus.instant("cluster_broker:kafka_network_processor_avg_idle_ratio:avg")
    assert {r.labels["broker"] for r in rows} == {str(b.id) for b in lab.brokers}
    assert _has_value(prometheus, "cluster_broker:kafka_produce_request_bytes:avg1m", traffic)


def test_snapshot_draws_every_main_panel(traffic: Window, prometheus: Prometheus, tmp_path: Path) -> None:
    from tuner.render.dashboards.snapshot import draw

    out = tmp_path / "broker-pressure.png"
    empty = draw(prometheus, traffic.start, traffic.end, out, rate_interval=RATE_INTERVAL)
    assert empty == []
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 50_000
