"""The Filebeat engine (Sarama) against the real lab: request counts agree with the brokers', every
acked event is read back, and libbeat's memory queue shapes the requests.

The broker side is RequestMetrics RequestsPerSec{request=Produce} (`kafka_network_requests_total`),
counted once per request. The per-topic TotalProduceRequests counter is marked once per partition a
request carries, so it overcounts Sarama's multi-partition requests and is not used here. The
counter is lab-wide: these tests assume nothing else produces to the lab while they run.

Uses the session `lab` fixture (tests/integration/conftest.py). No timing is asserted.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tuner.core.paths import cache_dir
from tuner.driver.engine import Placement
from tuner.driver.filebeat.sarama import run_filebeat_load
from tuner.driver.result import DriverResult
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan

pytestmark = pytest.mark.integration

BROKER_PRODUCE = 'kafka_network_requests_total{job="kafka-broker",request="Produce"}'
# How far back to look for the counters' series (one per broker and request version; a series exists
# from the first request it counted).
LOOKBACK_S = 900.0


@pytest.fixture(scope="module", autouse=True)
def _engine_built() -> None:
    if not (cache_dir() / "bin" / "sarama-engine").is_file():
        if shutil.which("go") is None:
            pytest.skip("the Sarama engine is not built and Go is missing: run 'make install'")
        pytest.fail("the Sarama engine is not built: run 'make install'")


def _runs(tmp_path: Path, workload: str, profiles: str) -> list[RunPlan]:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(f"name: fb\nworkload: {workload}\nprofiles:\n{profiles}name_format: '{{profile}}'\n")
    return load_sweep(spec).runs


def _profile(name: str, settings: dict[str, Any]) -> str:
    pairs = ", ".join(f"{k}: {v}" for k, v in settings.items())
    return f"  - {{name: {name}, client: filebeat, filebeat: {{{pairs}}}}}\n"


Counters = dict[tuple[tuple[str, str], ...], float]


def _counters_after(prometheus: Prometheus, t: float) -> Counters | None:
    """Every produce request counter series as first scraped at or after `t` (None until every
    series has been scraped since; a busy machine makes scrapes late or makes them fail)."""
    counters: Counters = {}
    for series in prometheus.samples(BROKER_PRODUCE, t - LOOKBACK_S, time.time()):
        after = [v for at, v in sorted(series.points) if at >= t]
        if not after:
            return None
        counters[tuple(sorted(series.labels.items()))] = after[0]
    return counters


def _wait_counters(prometheus: Prometheus, t: float) -> Counters:
    deadline = time.monotonic() + 120
    while (counters := _counters_after(prometheus, t)) is None:
        assert time.monotonic() < deadline, "Prometheus has not scraped every broker for 120 s"
        time.sleep(1)
    return counters


def _measured(
    lab: LabState, prometheus: Prometheus, plan: RunPlan, topic: str
) -> tuple[DriverResult, dict[str, float]]:
    """Run the engine between two scrapes of every broker; returns the result and the produce
    requests each broker served in between (nothing else produces to the lab meanwhile)."""
    before = _wait_counters(prometheus, time.time())
    result = run_filebeat_load(plan, Placement(f"it-{plan.name}", (topic,), lab.bootstrap_servers))
    after = _wait_counters(prometheus, max(time.time(), result.client.finished_at))
    served: dict[str, float] = {}
    for key, value in after.items():
        broker = dict(key)["broker"]
        served[broker] = served.get(broker, 0.0) + value - before.get(key, 0.0)
    return result, {broker: n for broker, n in served.items() if n > 0}


def test_client_request_counts_match_the_brokers(
    lab: LabState, prometheus: Prometheus, make_topic: Any, tmp_path: Path
) -> None:
    """Sarama's exact ProduceRequest count vs the brokers' Produce request counter, whole run, in
    total and per broker."""
    [plan] = _runs(
        tmp_path,
        "{name: w, topics: [{name: t, partitions: 6}], producers: 6, processes: 2, rate_per_producer: 40,"
        " message: {kind: generated, bytes: 1200}, duration_s: 15, warmup_s: 3}",
        # Filebeat's output defaults (random partition per event: requests carry several partitions)
        # with a queue that hands events over at once: steady, many requests.
        _profile("low-latency", {"queue.mem.flush.timeout": "0s"}),
    )
    topic = make_topic(partitions=6, replication=3)
    result, broker = _measured(lab, prometheus, plan, topic)
    client, delivery = result.client, result.delivery
    by_broker = client.produce_requests_by_broker
    print(f"produce requests: client {client.produce_requests_total} {by_broker}, brokers {broker}")
    assert delivery.verified and delivery.lost == 0 and delivery.failed == 0, delivery
    assert delivery.acked == client.records_acked_total > 0
    assert client.produce_requests_total > 500  # enough requests for 3% to mean something
    total = sum(broker.values())
    assert abs(client.produce_requests_total - total) / total <= 0.03, (client.produce_requests_total, total)
    # Every broker leads partitions of the topic; the window counts are a part of the whole run's.
    assert set(broker) == {str(b.id) for b in lab.brokers} == set(by_broker)
    assert sum(by_broker.values()) <= client.produce_requests_total
    # Per broker, the whole run: the engine's result carries it only summed, so compare shares.
    for node, n in broker.items():
        share_client = by_broker[node] / sum(by_broker.values())
        assert abs(share_client - n / total) <= 0.03, (node, by_broker, broker)
    # Requests carried several events on average only through Sarama's own batching.
    assert client.records_per_request is not None and client.records_per_request >= 1


def test_queue_caps_the_request_size(
    lab: LabState, prometheus: Prometheus, make_topic: Any, tmp_path: Path
) -> None:
    """With flush.min_events 1600 (the default), bulk_max_size 2048 -> 8192 leaves requests as they
    were; raising the queue with it makes them larger (docs/architecture.md). Request size is measured
    on both sides: Sarama's records per request, and acked events over the brokers' request count."""
    common = {
        "output.kafka.compression": "none",
        # Long enough for Sarama to take in a whole queue batch before it flushes; batches arrive
        # every 0.8 s (1600 events) or 4 s (8192), so one flush never spans two of them.
        "output.kafka.bulk_flush_frequency": "500ms",
        "queue.mem.flush.timeout": "6s",
    }
    bigger_queue = {"queue.mem.flush.min_events": 8192, "queue.mem.events": 16384}
    runs = _runs(
        tmp_path,
        "{name: w, topics: [{name: t, partitions: 6}], producers: 1, rate_per_producer: 2000,"
        " message: {kind: generated, bytes: 500}, duration_s: 20, warmup_s: 4}",
        _profile("bulk2048", {"output.kafka.bulk_max_size": 2048, **common})
        + _profile("bulk8192", {"output.kafka.bulk_max_size": 8192, **common})
        + _profile("both8192", {"output.kafka.bulk_max_size": 8192, **bigger_queue, **common}),
    )
    client_size: dict[str, float] = {}
    broker_size: dict[str, float] = {}
    for plan in runs:
        topic = make_topic(partitions=6, replication=1)
        result, broker = _measured(lab, prometheus, plan, topic)
        client, delivery = result.client, result.delivery
        assert delivery.verified and delivery.lost == 0 and delivery.failed == 0, (plan.name, delivery)
        assert client.records_per_request is not None
        client_size[plan.name] = client.records_per_request
        broker_size[plan.name] = client.records_acked_total / sum(broker.values())
    print(f"records per request: client {client_size}, broker {broker_size}")
    for size in (client_size, broker_size):
        base, bulk_only, both = size["bulk2048"], size["bulk8192"], size["both8192"]
        assert abs(bulk_only - base) / base <= 0.15, size
        assert both >= 2.5 * base, size
