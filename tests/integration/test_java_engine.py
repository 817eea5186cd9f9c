"""The Java engine (Kafka's Java producer) against the real lab: a `client: java` sweep run with every
acked record read back and the client's exact produce request count agreeing with the brokers';
SIGTERM ends the schedule, drains and still reports.

The broker side is RequestMetrics RequestsPerSec{request=Produce} (`kafka_network_requests_total`),
counted once per request: the Java producer puts every ready partition batch of a broker into one
request. The counter is lab-wide: these tests assume nothing else produces to the lab meanwhile.

Uses the session `lab` fixture (tests/integration/conftest.py). No timing is asserted.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labhelp import busy_host_only
from tuner.driver.corpus import write_corpus
from tuner.driver.delivery.check import verify
from tuner.driver.delivery.ledger import Ledger, tail_key
from tuner.driver.engine import Placement
from tuner.driver.engine_process import ProcessSite
from tuner.driver.java_plan import engine_command, engine_dir, process_plans
from tuner.lab import LabState
from tuner.runner.verdict import request_count_mismatch
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _engine_built() -> None:
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")


SPEC = """\
name: {name}
workload:
  name: {name}
  topics: [{{name: {name}, partitions: 6}}]
  producers: 4
  processes: 2
  rate_per_producer: 150
  message: {{kind: generated, bytes: 600}}
  duration_s: 15
  warmup_s: 3
profiles:
  - {{name: java-default, client: java}}
  - {{name: java-batched, client: java, linger_ms: 100, batch_bytes: 131072, compression: zstd,
      compression_level: 3, overrides: {{partitioner.adaptive.partitioning.enable: "false"}}}}
name_format: "{{profile}}"
"""


def test_java_sweep_counts_match_the_brokers(lab: LabState, tmp_path: Path) -> None:
    """Two `client: java` runs through the sweep runner: every acked record read back, the client's
    produce requests within 3% of the brokers' (whole run and window), per broker from the client's
    responses, and batching visible in the client's own metrics."""
    spec = tmp_path / "java.yaml"
    spec.write_text(SPEC.format(name="javatruth"))
    runner = sweep_runner(lab_dir=lab.lab_dir, results=tmp_path / "results")
    outcome = runner.run(load_sweep(spec))
    by_name = {r.name: r for r in outcome.records}
    for record in outcome.records:
        client, broker, delivery = record.client, record.broker, record.delivery
        print(record.name, client.produce_requests_total, broker and broker.produce_requests_total)
        assert busy_host_only(record.status, record.problems), record.problems
        assert delivery.verified and delivery.lost == 0 and delivery.failed == 0, delivery
        assert delivery.acked == client.records_acked_total > 0
        assert client.engine == "java"
        assert broker is not None
        whole_run = request_count_mismatch(client.produce_requests_total, broker.produce_requests_total)
        assert whole_run is not None and whole_run <= 0.03, (client.produce_requests_total, broker)
        window = request_count_mismatch(client.produce_requests, broker.produce_requests)
        assert window is not None and window <= 0.03, (client.produce_requests, broker.produce_requests)
        # Per broker: the produce responses add up to the requests, but for those in flight at the
        # window start (at most producers x brokers x 5 in flight).
        assert set(client.produce_requests_by_broker) == {str(b.id) for b in lab.brokers}
        in_flight = sum(client.produce_requests_by_broker.values()) - client.produce_requests
        assert 0 <= in_flight <= 4 * len(lab.brokers) * 5, client.produce_requests_by_broker
        metrics = client.client_metrics or {}
        for name in (
            "request-rate",
            "records-per-request-avg",
            "batch-size-avg",
            "compression-rate-avg",
            "record-queue-time-avg",
            "produce-throttle-time-avg",
            "produce-throttle-time-max",
        ):
            assert name in metrics, (name, metrics)
        assert client.records_per_request is not None
        # Open loop: the send lag of every in-window record, as the librdkafka engine measures it
        # (a run that fell behind would be unclean: the verdict reads it).
        assert client.send_lag_ms is not None and client.send_lag_ms.count == client.offered_records > 0
    default, batched = by_name["java-default"].client, by_name["java-batched"].client
    assert default.produce_requests_total > 500  # enough requests for 3% to mean something
    # linger 100 ms and 128 KB batches: several times fewer, larger requests for the same load.
    assert batched.produce_requests_total * 4 < default.produce_requests_total
    assert batched.compression_ratio is not None and batched.compression_ratio > 1.5
    assert default.compression_ratio == pytest.approx(1.0)


def test_sigterm_drains_and_reports(lab: LabState, make_topic: Any, tmp_path: Path) -> None:
    """SIGTERM in the middle of the schedule: the engine stops offering, drains, prints its result
    (interrupted), and every record it reports acked is in the topic."""
    [plan] = load_sweep(_one_run(tmp_path)).runs
    topic = make_topic(partitions=3, replication=3)
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(plan.workload, corpus)
    placement = Placement("it-sigterm", (topic,), lab.bootstrap_servers)
    site = ProcessSite(placement, topic, tmp_path, corpus, time.time() + 4)
    [pp] = process_plans(plan.workload, "linger.ms=50\nacks=all\n", site)
    pp.path.write_text(json.dumps(pp.plan))
    proc = subprocess.Popen([*engine_command(), "-plan", str(pp.path)], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(10)  # JVM start, then some seconds of the 60 s schedule
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    result = json.loads(out.strip().splitlines()[-1])
    assert result["interrupted"] is True
    assert result["finished_at"] - result["started_at"] < 30  # well short of the 60 s schedule
    assert 0 < result["acked_total"] == result["acked_lines"]
    assert result["acked_total"] + result["failed"] + result["indeterminate"] == result["offered_total"]
    ledger = Ledger(topics=[topic]).read_acked_files(topic, [pp.acked_file])
    delivery = verify(lab.bootstrap_servers, ledger, tail_key).result()
    assert delivery.verified and delivery.lost == 0 and delivery.acked == result["acked_total"], delivery


def _one_run(tmp_path: Path) -> Path:
    spec = tmp_path / "one.yaml"
    spec.write_text(
        "name: sig\nworkload: {name: sig, topics: [{name: t, partitions: 3}], producers: 2,"
        " rate_per_producer: 200, message: {kind: generated, bytes: 300}, duration_s: 60, warmup_s: 2}\n"
        "profiles:\n  - {name: j, client: java}\n"
    )
    return spec
