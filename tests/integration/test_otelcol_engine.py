"""The real OpenTelemetry Collector (the build `make install` puts in the cache) against the real lab:
every line the pods' files received is read back from the topic (0 lost, no duplicates, in order),
the collectors' own counters agree, and the brokers' Produce request counter saw the requests (the
collector's exporter counts none kbt can read per request). The counter is lab-wide: nothing else
produces to the lab meanwhile.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_filebeat_real import _wait_requests
from tests.unit.team_files import COLLECTOR
from tuner.driver.engine import Placement
from tuner.driver.engine_process import stop
from tuner.driver.otelcol.build import collector_binary
from tuner.driver.otelcol.engine import OTELCOL_ENGINE, Pod, run_otelcol
from tuner.driver.tailed.pods import wait_started
from tuner.driver.tailed.session import START_TIMEOUT_S
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.spec.clients.otelcol import OtelcolProfile
from tuner.spec.loader import load_sweep

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        collector_binary() is None,
        reason="no OpenTelemetry Collector build in the kbt cache: run 'make install'",
    ),
]


def test_every_line_is_read_back_and_the_collectors_and_brokers_agree(
    lab: LabState, prometheus: Prometheus, make_topic: Any, tmp_path: Path
) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "name: otelcol-it\n"
        "workload: {name: w, topics: [{name: t, partitions: 6, replication_factor: 3}], producers: 3,"
        " processes: 1, rate_per_producer: 40, message: {kind: generated, bytes: 1200}, duration_s: 8,"
        " warmup_s: 2}\n"
        "profiles: [{name: p, client: otelcol, otelcol: {kafka.producer.compression: lz4}}]\n"
        "name_format: '{profile}'\n"
    )
    [plan] = load_sweep(spec).runs
    topic = make_topic(partitions=6, replication=3)
    before = _wait_requests(prometheus, time.time())
    run = run_otelcol(plan, Placement("it-otelcol", (topic,), lab.bootstrap_servers))
    after = _wait_requests(prometheus, max(time.time(), run.result.client.finished_at))
    client, delivery = run.result.client, run.result.delivery
    requests = after - before
    print(f"written {run.written}, counters {run.counters}, broker requests {requests}")
    assert run.written == 3 * 40 * 8
    assert delivery.verified and delivery.lost == 0 and delivery.duplicates == 0, delivery
    assert delivery.consumed == delivery.acked == run.written and delivery.out_of_order == 0
    # The collectors' own telemetry: every line accepted by the receiver and sent by the exporter.
    assert run.counters["receiver.accepted"] == run.counters["exporter.sent"] == run.written
    assert run.counters["exporter.failed"] == 0
    assert client.records_acked == client.offered_records > 0
    assert client.delivery_latency_ms.p50 is not None and client.delivery_latency_ms.p50 > 0
    # The brokers count the requests (the engine declares it counts none); OTLP exports batch lines.
    assert not OTELCOL_ENGINE.capabilities.counts_requests and client.produce_requests_total == 0
    assert 0 < requests < run.written


def test_a_pod_whose_telemetry_port_was_taken_starts_again_on_another(lab: LabState, tmp_path: Path) -> None:
    """The pod's telemetry port is picked free, then bound by the collector a moment later: another
    process can take it in between. A real socket holds the port here; the pod must come up on a
    fresh one."""
    binary = collector_binary()
    assert binary is not None
    pod = Pod(0, tmp_path)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", pod.port))
        holder.listen()
        taken = pod.port
        pod.start(binary, OtelcolProfile(name="p"), lab.bootstrap_servers, "kbt-otelcol-port-taken")
        try:
            wait_started([pod], "the collector", START_TIMEOUT_S)
            assert pod.port_retries >= 1 and pod.port != taken
            assert pod.counters() is not None
        finally:
            stop([pod.proc] if pod.proc is not None else [], 10.0)
    assert pod.proc is not None and pod.proc.poll() is not None


def test_a_teams_collector_config_runs_as_its_profile(lab: LabState, make_topic: Any, tmp_path: Path) -> None:
    """A team's collector config named where the profile goes: its exporter and receiver settings
    run on real collector pods against the lab (its brokers, SASL and topic left to the lab), every
    line read back; raw encoding makes one record per line."""
    (tmp_path / "collector.yaml").write_text(COLLECTOR)
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "name: otelcol-team\n"
        "workload: {name: w, topics: [{name: t, partitions: 6, replication_factor: 3}], producers: 2,"
        " processes: 1, rate_per_producer: 40, message: {kind: generated, bytes: 600}, duration_s: 6,"
        " warmup_s: 2}\n"
        "profiles: [collector.yaml]\n"
        "name_format: '{profile}'\n"
    )
    [plan] = load_sweep(spec).runs
    assert plan.profile.client == "otelcol" and "brokers" in plan.profile.description
    topic = make_topic(partitions=6, replication=3)
    run = run_otelcol(plan, Placement("it-otelcol-team", (topic,), lab.bootstrap_servers))
    delivery = run.result.delivery
    assert run.written == 2 * 40 * 6
    assert delivery.verified and delivery.lost == 0 and delivery.duplicates == 0, delivery
    assert delivery.consumed == delivery.acked == run.written
    assert run.counters["exporter.sent"] == run.written and run.counters["exporter.failed"] == 0
