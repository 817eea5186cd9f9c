"""The Java engine's client exporter against the real lab: during a `client: java` sweep run the lab's
Prometheus scrapes every engine process (job kbt-client) and the series carry the metric contract
(client="java"); the produce requests Prometheus saw agree with the run record's count. A taken port
leaves the run going, unexported, with a note in the engine's result.

Uses the session `lab` fixture (2 s scrapes). Each engine's counters start at 0 in a fresh JVM and
the engine waits after its drain for one more scrape, so the last scraped value of a series is its
increase over the run. No timing is asserted.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labhelp import busy_host_only
from tuner.core.client_figures import DELIVERY_BUCKETS_S
from tuner.driver.corpus import write_corpus
from tuner.driver.engine import Placement
from tuner.driver.engine_process import ProcessSite
from tuner.driver.java_plan import engine_command, engine_dir, process_plans
from tuner.lab import LabState
from tuner.measure.catalog import CLIENT_SERIES, ClientKind
from tuner.measure.prometheus import Prometheus, Sample
from tuner.runner.verdict import request_count_mismatch
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep

pytestmark = pytest.mark.integration

SPEC = """\
name: javaexp
workload:
  name: javaexp
  topics: [{name: javaexp, partitions: 6}]
  producers: 4
  processes: 2
  rate_per_producer: 150
  message: {kind: generated, bytes: 400}
  duration_s: 12
  warmup_s: 2
profiles:
  - {name: java-exported, client: java, linger_ms: 5, compression: lz4}
name_format: "{profile}"
"""

# The contract's series a Java run fills (docs/dashboards.md), and the Java producer's own beside them.
# Taken from the contract's one definition (tuner.measure.catalog CLIENT_SERIES): a histogram as its
# _count series.
PRODUCER_SERIES = tuple(
    s.name + ("_count" if s.kind is ClientKind.HISTOGRAM else "")
    for s in CLIENT_SERIES
    if s.name.startswith("kbt_client_") and "java" in s.engines
)


@pytest.fixture(scope="module", autouse=True)
def _engine_built() -> None:
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")


def _series(prom: Prometheus, name: str, matchers: str) -> list[Sample]:
    return prom.instant(f"last_over_time({name}{{{matchers}}}[10m])")


def _last(prom: Prometheus, selector: str) -> float:
    """Sum over series of the last scraped value in the past 10 minutes."""
    return sum(float(s.value) for s in prom.instant(f"sum(last_over_time({selector}[10m]))"))


def test_prometheus_scrapes_the_java_run(lab: LabState, prometheus: Prometheus, tmp_path: Path) -> None:
    spec = tmp_path / "javaexp.yaml"
    spec.write_text(SPEC)
    runner = sweep_runner(lab_dir=lab.lab_dir, results=tmp_path / "results")
    [record] = runner.run(load_sweep(spec)).records
    assert busy_host_only(record.status, record.problems), record.problems
    client = record.client
    run = f'run="{record.run_id}",client="java"'

    # Scraped live: several samples per producer while the run went on, from both engine processes.
    counts = prometheus.instant(f"count_over_time(kbt_client_records_acked_total{{{run}}}[10m])")
    assert sorted(s.labels["producer"] for s in counts) == ["p0", "p1", "p2", "p3"]
    assert all(float(s.value) >= 5 for s in counts), [(s.labels, s.value) for s in counts]
    assert {s.labels["instance"] for s in counts} == {f"127.0.0.1:{p}" for p in lab.client_exporter_ports[:2]}

    # Every contract series and the Java producer's own metrics, with their labels.
    for name in PRODUCER_SERIES:
        assert _series(prometheus, name, run), name
    brokers = {s.labels["broker"] for s in _series(prometheus, "kbt_client_produce_requests_total", run)}
    assert brokers == {str(b.id) for b in lab.brokers}
    rtt = _series(prometheus, "kbt_client_rtt_seconds", run + ',quantile="0.99"')
    assert {s.labels["broker"] for s in rtt} == brokers
    assert all(0 < s.value < 10 for s in rtt), rtt  # seconds, not milliseconds
    latency = _series(prometheus, "kbt_client_delivery_latency_seconds_bucket", run)
    assert {s.labels["producer"] for s in latency} == {"process-0", "process-1"}
    bounds = sorted({float(s.labels["le"]) for s in latency})
    assert bounds == [*DELIVERY_BUCKETS_S, float("inf")]  # the contract's buckets
    # The histogram counts the records delivered inside the measured window, as the record does.
    delivered = _last(prometheus, f"kbt_client_delivery_latency_seconds_count{{{run}}}")
    assert delivered == client.delivery_latency_ms.count, (delivered, client.delivery_latency_ms.count)
    buckets = f"last_over_time(kbt_client_delivery_latency_seconds_bucket{{{run}}}[10m])"
    p99_s = prometheus.instant(f"histogram_quantile(0.99, sum by (le)({buckets}))")
    assert p99_s and 0 < p99_s[0].value < 60

    # The increase over the run agrees with the record: produce requests within 3%, acked records exact.
    scraped = _last(prometheus, f"kbt_client_produce_requests_total{{{run}}}")
    mismatch = request_count_mismatch(client.produce_requests_total, scraped)
    print(
        f"java exporter: prometheus {scraped:.0f} vs record {client.produce_requests_total} produce requests"
    )
    assert mismatch is not None and mismatch <= 0.03, (scraped, client.produce_requests_total)
    assert _last(prometheus, f"kbt_client_records_acked_total{{{run}}}") == client.records_acked_total
    ratios = _series(prometheus, "kbt_client_compression_ratio", run)
    assert ratios and all(s.value > 1.0 for s in ratios)  # lz4 on generated text


def test_a_taken_port_leaves_the_run_unexported(lab: LabState, make_topic: Any, tmp_path: Path) -> None:
    """The engine runs on and says why in its result; the driver turns that into one note."""
    [plan] = load_sweep(_short(tmp_path)).runs
    topic = make_topic(partitions=1, replication=1)
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(plan.workload, corpus)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        placement = Placement("it-taken", (topic,), lab.bootstrap_servers, exporter_ports=(port,))
        site = ProcessSite(placement, topic, tmp_path, corpus, time.time() + 3)
        [pp] = process_plans(plan.workload, "", site)
        pp.path.write_text(json.dumps(pp.plan))
        out = subprocess.run(
            [*engine_command(), "-plan", str(pp.path)], capture_output=True, text=True, timeout=120
        )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["exporter"]["serving"] is False and result["exporter"]["port"] == port
    assert "in use" in result["exporter"]["problem"].lower(), result["exporter"]
    assert result["acked_total"] > 0 and result["failed"] == 0


def _short(tmp_path: Path) -> Path:
    spec = tmp_path / "short.yaml"
    spec.write_text(
        "name: taken\nworkload: {name: taken, topics: [{name: t, partitions: 1}], producers: 1,"
        " rate_per_producer: 50, message: {kind: generated, bytes: 200}, duration_s: 2, warmup_s: 0}\n"
        "profiles:\n  - {name: j, client: java}\n"
    )
    return spec
