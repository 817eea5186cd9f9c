"""Filebeat and the collector run the file a team deploys (issue 39): each run's client is started
from the kind's rendered file (the text a user receives, header aside) against the 3-broker lab,
named by one multi-host variable (KAFKA_HOSTS="h1,h2,h3"), and:

- every written line is read back (0 lost), and every broker's Produce counter rose;
- the run's client names the file by its hash, and the run record copies it;
- the file's settings are the run's: a setting the file makes (Filebeat: bulk_max_size 7; the
  collector: a 2 s exporter batch) shows in what the client did, against what its default would do.

Each test is one short run (~12 s of load) on the session lab.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tuner.driver.engine import Placement
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.driver.filebeat.real import run_real
from tuner.driver.otelcol.build import collector_binary
from tuner.driver.otelcol.engine import run_otelcol
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.spec.clients import kind_of
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan

pytestmark = pytest.mark.integration

BROKER_PRODUCE = 'kafka_network_requests_total{job="kafka-broker",request="Produce"}'
HEADER = ["kbt recommend: the header a user's file carries", "", "measured on the lab"]
TEAM_FILEBEAT = """\
filebeat.inputs:
  - {type: filestream, id: app, paths: ["/var/log/app/*.log"]}
output.kafka:
  hosts: ["${KBT_IT_BROKER_1}", "${KBT_IT_BROKER_2}"]
  topic: '%{[fields.log_topic]}'
  bulk_max_size: ${KBT_IT_UNSET_BULK:7}
  username: "${KAFKA_USER}"
  password: "${KAFKA_PASSWORD}"
  sasl.mechanism: SCRAM-SHA-512
  ssl.certificate_authorities: ["/run/secrets/kafka/ca.pem"]
"""


def _plan(tmp_path: Path, profile: str, duration_s: int = 12) -> RunPlan:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "name: deployed\n"
        "workload: {name: w, topics: [{name: t, partitions: 6, replication_factor: 3}], producers: 3,"
        f" processes: 1, rate_per_producer: 40, message: {{kind: generated, bytes: 1200}},"
        f" duration_s: {duration_s}, warmup_s: 2}}\n"
        f"profiles: [{profile}]\n"
        "name_format: '{profile}'\n"
    )
    [plan] = load_sweep(spec).runs
    return plan


def _per_broker(prometheus: Prometheus, t: float) -> dict[str, float] | None:
    """Each broker's Produce request counter (summed over its versions), as first scraped at or
    after t; None until every series has a sample that late."""
    total: dict[str, float] = defaultdict(float)
    for series in prometheus.samples(BROKER_PRODUCE, t - 900, time.time()):
        after = [v for at, v in sorted(series.points) if at >= t]
        if not after:
            return None
        total[series.labels.get("instance", "")] += after[0]
    return dict(total)


def _wait_per_broker(prometheus: Prometheus, t: float) -> dict[str, float]:
    deadline = time.monotonic() + 120
    while (value := _per_broker(prometheus, t)) is None:
        assert time.monotonic() < deadline, "Prometheus has not scraped every broker for 120 s"
        time.sleep(1)
    return value


def _the_users_file(plan: RunPlan) -> str:
    """The file a user receives (a recommendation's, under its header), the header taken off."""
    text = kind_of(plan.profile).render(plan.profile, HEADER).text
    lines = text.splitlines(keepends=True)
    return "".join(lines[len(HEADER) :])


def _check_common(
    lab: LabState, plan: RunPlan, result: Any, before: dict[str, float], after: dict[str, float]
) -> None:
    hosts = lab.bootstrap_servers.split(",")
    assert len(hosts) == 3  # KAFKA_HOSTS names all three brokers, comma-separated
    delivery = result.delivery
    assert delivery.verified and delivery.lost == 0 and delivery.duplicates == 0, delivery
    assert delivery.consumed == delivery.acked == 3 * 40 * plan.workload.duration_s
    # Every broker led some of the topic's partitions and took produce requests from the pods.
    assert len(after) == 3 and all(after[b] > before.get(b, 0.0) for b in after), (before, after)
    # The record names the file the client started from, and it is the user's file.
    artifact = result.client.artifact
    assert artifact is not None
    text = _the_users_file(plan)
    assert artifact.filename == kind_of(plan.profile).artifact(plan.profile).filename
    assert artifact.sha256 == kind_of(plan.profile).artifact(plan.profile).sha256
    assert artifact.sha256 == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.skipif(
    not filebeat_builds(), reason="no real Filebeat build in the kbt cache: run 'make install'"
)
def test_real_filebeat_runs_the_rendered_file_against_three_brokers(
    lab: LabState, prometheus: Prometheus, make_topic: Any, tmp_path: Path
) -> None:
    # A team's own filebeat.yml is the profile: its brokers one variable each, its topic routed by
    # its events' fields, its credentials and TLS from the pod: all the lab's here. bulk_max_size 7
    # (the variable's default) is set in the file only: Filebeat's default (2048, the queue handing
    # over up to 2048 events a second) would send a few batches per pod; 7 makes ~70 of them per pod.
    (tmp_path / "team-filebeat.yml").write_text(TEAM_FILEBEAT, encoding="utf-8")
    plan = _plan(tmp_path, "team-filebeat.yml")
    assert plan.profile.name == "team-filebeat" and "password" in plan.profile.description
    assert "  bulk_max_size: 7\n" in _the_users_file(plan)
    topic = make_topic(partitions=6, replication=3)
    before = _wait_per_broker(prometheus, time.time())
    run = run_real(plan, Placement("it-deployed-filebeat", (topic,), lab.bootstrap_servers))
    after = _wait_per_broker(prometheus, max(time.time(), run.result.client.finished_at))
    print(f"written {run.written}, stats {run.counters}, per broker {before} -> {after}")
    _check_common(lab, plan, run.result, before, after)
    acked, batches = run.counters["output.events.acked"], run.counters["output.events.batches"]
    assert batches >= acked / 7, run.counters  # the file's bulk_max_size is the run's
    # The file leaves queue.mem unset: each pod's queue is Filebeat 7.17's own (its comment says 4096).
    assert "\nqueue.mem:" not in _the_users_file(plan)
    assert run.counters["pipeline.queue.max_events"] == 3 * 4096, run.counters


@pytest.mark.skipif(collector_binary() is None, reason="no OpenTelemetry Collector build: run 'make install'")
def test_the_collector_runs_the_rendered_fragment_against_three_brokers(
    lab: LabState, prometheus: Prometheus, make_topic: Any, tmp_path: Path
) -> None:
    # The fragment alone sets exporter-side batching: each pod sends once per 2 s (min_size out of
    # reach), where the shipped collector exports each 200 ms read (~5 requests/s per pod).
    plan = _plan(
        tmp_path,
        "{name: batch2s, client: otelcol, otelcol: {kafka.sending_queue.batch:"
        " {flush_timeout: 2s, min_size: 100000}, kafka.producer.compression: zstd}}",
    )
    users = _the_users_file(plan)
    assert "flush_timeout: 2s" in users and "null" not in users
    topic = make_topic(partitions=6, replication=3)
    before = _wait_per_broker(prometheus, time.time())
    run = run_otelcol(plan, Placement("it-deployed-otelcol", (topic,), lab.bootstrap_servers))
    after = _wait_per_broker(prometheus, max(time.time(), run.result.client.finished_at))
    requests = sum(after.values()) - sum(before.values())
    print(f"written {run.written}, counters {run.counters}, requests {requests}, per broker {after}")
    _check_common(lab, plan, run.result, before, after)
    # 3 pods x (12 s / 2 s + the drain's flush) exports, each one request per broker its partition
    # batches reach: far below the ~180 a default collector would send in the same window.
    assert requests <= 3 * 8 * 3, requests
