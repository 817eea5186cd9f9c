"""Real Filebeat (the 7.17 build `make install` puts in the cache) against the real lab: every line
the pods' files received is read back from the topic (0 lost, no duplicates, in order), Filebeat's
own monitoring agrees, and the brokers' Produce request counter saw the requests (real Filebeat
cannot count them itself). The counter is lab-wide: nothing else produces to the lab meanwhile.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tuner.driver.engine import Placement
from tuner.driver.engine_process import stop
from tuner.driver.filebeat.builds import filebeat_binary, filebeat_builds
from tuner.driver.filebeat.engine import FILEBEAT_ENGINE
from tuner.driver.filebeat.real import _Pod, run_real
from tuner.driver.tailed.pods import wait_started
from tuner.driver.tailed.session import START_TIMEOUT_S
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.spec.clients.filebeat import FilebeatProfile
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan

pytestmark = pytest.mark.integration

BROKER_PRODUCE = 'kafka_network_requests_total{job="kafka-broker",request="Produce"}'


@pytest.fixture(scope="module", autouse=True)
def _filebeat_built() -> None:
    if not filebeat_builds():
        pytest.skip("no real Filebeat build in the kbt cache: run 'make install' (scripts/build_filebeat.sh)")


def _plan(tmp_path: Path, input_type: str, version: str = "7.17.29") -> RunPlan:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "name: fbreal\n"
        "workload: {name: w, topics: [{name: t, partitions: 6, replication_factor: 3}], producers: 3,"
        " processes: 2, rate_per_producer: 40, message: {kind: generated, bytes: 1200}, duration_s: 12,"
        " warmup_s: 2}\n"
        "profiles:\n"
        f"  - {{name: p, client: filebeat, filebeat: {{filebeat_version: '{version}', input.engine: real,"
        f" input.type: {input_type}, input.check_interval: 1s, queue.mem.flush.timeout: 200ms}}}}\n"
        "name_format: '{profile}'\n"
    )
    [plan] = load_sweep(spec).runs
    return plan


def _produce_requests(prometheus: Prometheus, t: float) -> float | None:
    """The lab's produce request counter summed over its series, as first scraped at or after t."""
    total = 0.0
    for series in prometheus.samples(BROKER_PRODUCE, t - 900, time.time()):
        after = [v for at, v in sorted(series.points) if at >= t]
        if not after:
            return None
        total += after[0]
    return total


def _wait_requests(prometheus: Prometheus, t: float) -> float:
    deadline = time.monotonic() + 120
    while (value := _produce_requests(prometheus, t)) is None:
        assert time.monotonic() < deadline, "Prometheus has not scraped every broker for 120 s"
        time.sleep(1)
    return value


@pytest.mark.parametrize(
    ("version", "input_type"), [("7.17", "log"), ("7.17", "filestream"), ("9", "filestream")]
)
def test_every_line_is_read_back_and_the_brokers_count_the_requests(
    lab: LabState, prometheus: Prometheus, make_topic: Any, tmp_path: Path, version: str, input_type: str
) -> None:
    built = [v for v in filebeat_builds() if v.startswith(f"{version}.")]
    if not built:
        pytest.skip(
            f"no Filebeat {version}.x build in the kbt cache: scripts/filebeat/pins has no {version}.x line"
            " (docs/benchmarks.md, 'Real Filebeat': the module proxy served no 9.x release commit)"
        )
    plan = _plan(tmp_path, input_type, built[-1])
    topic = make_topic(partitions=6, replication=3)
    before = _wait_requests(prometheus, time.time())
    run = run_real(plan, Placement(f"it-real-{version}-{input_type}", (topic,), lab.bootstrap_servers))
    after = _wait_requests(prometheus, max(time.time(), run.result.client.finished_at))
    client, delivery = run.result.client, run.result.delivery
    print(
        f"{version} {input_type}: written {run.written}, stats {run.counters},"
        f" broker requests {after - before}"
    )
    assert run.written == 3 * 40 * 12
    assert delivery.verified and delivery.lost == 0 and delivery.duplicates == 0, delivery
    assert delivery.consumed == delivery.acked == run.written
    assert delivery.out_of_order == 0
    # Filebeat also shipped each pod's primer line (PRIMER_LINE: no record id, not read back).
    assert run.counters["output.events.acked"] == run.written + plan.workload.producers
    assert run.foreign == plan.workload.producers
    assert client.records_acked == client.offered_records > 0  # the measured window, all delivered
    assert client.delivery_latency_ms.p50 is not None and client.delivery_latency_ms.p50 > 0
    requests = after - before
    # Filebeat counts no produce requests, as its engine declares: the brokers' counter is the count.
    assert not FILEBEAT_ENGINE.capabilities.counts_requests and client.produce_requests_total == 0
    # Filebeat batches: fewer requests than events, and at least one per output batch it reported.
    assert 0 < requests < run.written
    assert requests >= run.counters["output.events.batches"]


def test_a_pod_whose_stats_port_was_taken_starts_again_on_another(lab: Any, tmp_path: Path) -> None:
    """The pod's monitoring port is picked free, then bound by Filebeat a moment later: another
    process can take it in between (it happened beside a concurrent Filebeat run). A real socket
    holds the port here; the pod must come up on a fresh one, and the holder's port stays its own."""
    plan = _plan(tmp_path, "log")
    (tmp_path / "work").mkdir()
    pod = _Pod(0, tmp_path / "work")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", pod.port))
        holder.listen()
        taken = pod.port
        profile = plan.profile
        assert isinstance(profile, FilebeatProfile)
        pod.start(filebeat_binary(None), profile, lab.bootstrap_servers, "kbt-port-taken")
        try:
            wait_started([pod], "real Filebeat", START_TIMEOUT_S)
            assert pod.port_retries >= 1 and pod.port != taken
            assert pod.stats() is not None
        finally:
            stop([pod.proc] if pod.proc is not None else [], 10.0)
    assert pod.proc is not None and pod.proc.poll() is not None
