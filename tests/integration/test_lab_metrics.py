"""Golden test: every series of the metrics catalog is in the lab's Prometheus with a sane value.

Produces to (and consumes from) a fresh topic, then checks each catalog series exists for every
broker, ratios lie in [0, 1], percentiles and queue sizes are >= 0, and the counters that move with
produce/fetch traffic increased. Series that need special traffic to *move* are only checked for
presence here: the remote copy/fetch counters (tests/integration/test_tiered_storage.py drives
them), the remote error counters (they only grow on failures) and kafka_log_flush_total (grows on
segment roll or a flush policy, not per produce).
"""

from __future__ import annotations

import math
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.labhelp import wait_for
from tuner.lab import LabState
from tuner.measure.catalog import PHASES, QUANTILES, SERIES, TIMED_REQUESTS, Needs, Series
from tuner.measure.prometheus import Prometheus
from tuner.measure.promql import promql

pytestmark = pytest.mark.integration

JOB = 'job="kafka-broker"'
RECORDS = 2000
TIERED_PREFIXES = ("kafka_server_remote_", "kafka_log_remote_", "kafka_storage_remote_")
STRICT_RATIOS = (
    "kafka_network_processor_avg_idle_ratio",
    "kafka_network_processor_idle_ratio",
    "kafka_log_remote_manager_tasks_avg_idle_ratio",
    "kafka_storage_remote_thread_pool_reader_avg_idle_ratio",
)
# Counter -> extra selector; each must grow when a topic is produced to and consumed from.
GROWS_WITH_TRAFFIC = {
    "kafka_server_produce_requests_total": 'topic=""',
    "kafka_server_messages_in_total": 'topic=""',
    "kafka_server_bytes_in_total": 'topic=""',
    "kafka_server_fetch_requests_total": 'topic=""',
    "kafka_server_bytes_out_total": 'topic=""',
    "kafka_network_requests_total": 'request="Produce"',
    "process_cpu_seconds_total": "",
    "kafka_server_request_handler_idle_ns_total": "",
}


def _sel(name: str, extra: str = "") -> str:
    return f"{name}{{{JOB}{',' + extra if extra else ''}}}"


def _total(prom: Prometheus, name: str, extra: str = "") -> float:
    return prom.value(f"sum({_sel(name, extra)})") or 0.0


def _values(prom: Prometheus, name: str) -> list[float]:
    return [s.value for s in prom.instant(_sel(name))]


def _traffic(lab: LabState, topic: str, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": lab.bootstrap_servers, "acks": "all", "linger.ms": 10})
    for i in range(RECORDS):  # in rounds, so every broker sees several produce requests
        producer.produce(topic, f"golden-{i:06d}".encode() * 20)
        if i % 250 == 249:
            assert producer.flush(30) == 0, "records still undelivered after 30 s"
    consumer = Consumer(
        {"bootstrap.servers": lab.bootstrap_servers, "group.id": f"golden-{uuid.uuid4().hex[:6]}",
         "enable.auto.commit": False}
    )  # fmt: skip
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got, deadline = 0, time.monotonic() + 60
    while got < RECORDS and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got += 1
    consumer.close()
    assert got == RECORDS


def _expected(lab: LabState) -> list[Series]:
    """The catalog series this lab exports; the per-client quota sensors only while a client quota
    is set (checked in tests/integration/test_which_clients.py)."""
    return [
        s
        for s in SERIES
        if (lab.tiered or not s.name.startswith(TIERED_PREFIXES)) and s.needs is not Needs.QUOTA
    ]


def test_every_catalog_series_present_and_sane(lab: LabState, prometheus: Prometheus, make_topic) -> None:
    partitions = 3
    topic = make_topic(partitions=partitions, replication=min(3, len(lab.brokers)))
    before = {name: _total(prometheus, name, extra) for name, extra in GROWS_WITH_TRAFFIC.items()}
    _traffic(lab, topic, partitions)

    def grown() -> bool:
        return all(_total(prometheus, n, e) > before[n] for n, e in GROWS_WITH_TRAFFIC.items())

    wait_for(grown, 60, "every traffic counter to increase in Prometheus")
    for name in ("kafka_server_produce_requests_total", "kafka_server_messages_in_total",
                 "kafka_server_bytes_in_total", "kafka_server_bytes_out_total"):  # fmt: skip
        assert wait_for(lambda n=name: _total(prometheus, n, f'topic="{topic}"') > 0, 30, f"{name}{{topic}}")
    wait_for(
        lambda: _total(prometheus, "kafka_server_messages_in_total", f'topic="{topic}"') == RECORDS,
        30,
        f"MessagesIn{{topic}} to reach {RECORDS}",
    )

    brokers = {str(b.id) for b in lab.brokers}
    for s in _expected(lab):
        per_broker = {
            r.labels.get("broker") for r in prometheus.instant(f"count by (broker)({_sel(s.name)})")
        }
        assert per_broker == brokers, f"{s.name}: present for brokers {per_broker}, expected {brokers}"
        values = _values(prometheus, s.name)
        assert all(math.isfinite(v) and v >= 0 for v in values), f"{s.name}: {values}"
        if "quantile" in s.labels:
            got = {r.labels["quantile"] for r in prometheus.instant(f"count by (quantile)({_sel(s.name)})")}
            assert got == set(QUANTILES), s.name

    for name in STRICT_RATIOS:
        if lab.tiered or not name.startswith(TIERED_PREFIXES):
            values = _values(prometheus, name)
            assert values and all(0.0 <= v <= 1.0 for v in values), f"{name}: {values}"
    # Kafka marks handler idle time per 300 ms poll, so an idle broker reads a hair above 1: the
    # OneMinuteRate gauge up to ~1.001, a short rate() a few percent. The named query caps at 1.
    handler = _values(prometheus, "kafka_server_request_handler_avg_idle_ratio")
    assert handler and all(0.0 <= v <= 1.01 for v in handler), handler
    capped = [s.value for s in prometheus.instant(promql("REQUEST_HANDLER_IDLE", "30s"))]
    assert len(capped) == len(lab.brokers) and all(0.0 <= v <= 1.0 for v in capped), capped


def test_request_times_cover_every_phase(lab: LabState, prometheus: Prometheus) -> None:
    rows = prometheus.instant(f"count by (request, phase)({_sel('kafka_network_request_time_ms')})")
    got = {(r.labels["request"], r.labels["phase"]) for r in rows}
    assert got == {(req, phase) for req in TIMED_REQUESTS for phase in PHASES}
    sizes = {
        r.labels["request"]
        for r in prometheus.instant(f"count by (request)({_sel('kafka_network_request_bytes')})")
    }
    assert sizes == set(TIMED_REQUESTS)


def test_broker_exports_only_catalog_series(lab: LabState, prometheus: Prometheus) -> None:
    names = {
        r.labels["__name__"]
        for r in prometheus.instant(f'group by (__name__)({{{JOB},__name__=~"kafka_.*"}})')
    }
    catalog = {s.name for s in SERIES}
    assert names and names <= catalog, f"not in the catalog: {sorted(names - catalog)}"
    # Two beans mapping to one series would make the agent add an _objectname label.
    assert prometheus.instant(f'count({{{JOB},_objectname!=""}})') == []


def test_named_queries_evaluate(lab: LabState, prometheus: Prometheus) -> None:
    from tuner.measure.promql import QUERIES

    for q in QUERIES:
        if q.name.startswith("REMOTE_") and not lab.tiered:
            continue
        if q.name.startswith("CLIENT_"):  # the quota sensors: tests/integration/test_which_clients.py
            continue
        # rate() needs two samples of a series: a fresh lab's first request series may be one scrape old.
        rows = wait_for(
            lambda q=q: prometheus.instant(promql(q.name, "30s")), 30, f"{q.name} to return series"
        )
        assert {r.labels.get("broker") for r in rows} <= {str(b.id) for b in lab.brokers}, q.name
