"""The librdkafka engine against the real lab: delivery verification sees loss; closed loop runs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import TopicPartition

from tuner.driver.librdkafka_engine import run_load, verify_delivery
from tuner.driver.rdkafka_worker import Worker, WorkerTask
from tuner.spec import RunPlan, load_sweep

pytestmark = pytest.mark.integration

SPEC = """\
name: engine
workload:
  name: engine
  topics: [{{name: engine, partitions: 3, replication_factor: 1}}]
  producers: 2
  processes: {processes}
  rate_per_producer: {rate}
  message: {{kind: generated, bytes: 300}}
  duration_s: 4
  warmup_s: 1
profiles:
  - {{name: p, linger_ms: 5, acks: all, idempotence: true}}
"""


def _plan(tmp_path: Path, rate: str = "50", processes: int = 1) -> RunPlan:
    path = tmp_path / "engine.yaml"
    path.write_text(SPEC.format(rate=rate, processes=processes))
    return load_sweep(path).runs[0]


def test_verification_reports_records_deleted_behind_the_drivers_back(
    lab: Any, admin: Any, make_topic: Any, tmp_path: Path
) -> None:
    topic = make_topic(partitions=3, replication=1)
    task = WorkerTask(0, _plan(tmp_path), [topic], lab.bootstrap_servers, "loss", [0, 1], None, str(tmp_path))
    result = Worker(task).run(time.time() + 0.5)
    clean = verify_delivery(lab.bootstrap_servers, [topic], [result])
    assert clean.verified and clean.lost == 0 and clean.acked == result.acked_total > 0

    rows = [line.split() for line in Path(result.acked_files[topic]).read_text().splitlines()]
    doomed = sum(1 for p, o, _id in rows if p == "0" and int(o) < 10)
    assert doomed == 10, "partition 0 should have received at least 10 records"
    for future in admin.delete_records([TopicPartition(topic, 0, 10)], operation_timeout=30).values():
        future.result(timeout=30)

    after = verify_delivery(lab.bootstrap_servers, [topic], [result])
    assert after.lost == doomed
    assert after.consumed == clean.acked - doomed


def test_closed_loop_across_processes(lab: Any, make_topic: Any, tmp_path: Path) -> None:
    topic = make_topic(partitions=3, replication=1)
    result = run_load(_plan(tmp_path, rate="max", processes=2), [topic], lab.bootstrap_servers, "max")
    client = result.client
    assert client.records_acked > 1000  # far above the 50 msgs/s the open-loop test offers
    assert client.offered_records == client.records_sent
    assert client.produce_requests_total > 0 and client.records_per_request is not None
    assert client.delivery_latency_ms.count == client.records_acked
    assert result.delivery.verified and result.delivery.lost == 0
    assert result.delivery.acked == client.records_acked_total
