"""Which clients send the small requests, on the shared lab: three librdkafka producers (the real
client) with linger 0, 20 and 500 ms offer the same records (150/s each); Kafka's per-client quota
sensors are turned on for the test (`kbt lab client-sensors on`; the quotas are deleted after, the
sensors stay until the brokers restart) and `kbt diagnose` must rank the clients by their request
rates and estimate each rate from the sensors.

Kafka counts no requests per client: diagnose splits each broker's measured produce requests by the
clients' shares of request-time (tuner.model.clients). A request's thread time grows with its size,
so the estimate is not exact, but its side is known: at most for the client of the largest
requests, at least for the one of the smallest. The figures of this test (docs/benchmarks.md) are
printed with -s. The test asserts the ranking, and each client's estimated part of the brokers'
produce requests against its part of the requests the clients counted (librdkafka's statistics:
Produce responses received, over the same window): the smallest requests' client within 35% below
and 5% above, the largest requests' client at most 5% below (or 4 requests in the window).

Then, the same clients going on, the brokers' request logs are turned on (`kbt lab request-log on`)
for a second window of their own (logging every request adds broker work per request, which is not
what the sensors' window should measure): diagnose given them (`--request-log`, one file per
broker) counts each client's produce requests, and must rank the clients as their own counts do,
each within 5% of them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import TopicFactory
from tests.integration.labhelp import diagnose_json
from tuner.core.kafka_clients import Connection, new_producer
from tuner.driver.steady_load import produce_steadily
from tuner.lab import LabState
from tuner.lab.client_sensors import set_client_sensors
from tuner.lab.request_log import set_request_log
from tuner.measure.catalog import SERIES, Needs
from tuner.measure.prometheus import Prometheus

pytestmark = [pytest.mark.integration]

LINGERS_MS = (0, 20, 500)
RECORDS_PER_S = 150  # per client: a loaded 2-core lab still answers every request
RUN_S = 36.0
WINDOW_S = 20  # the last seconds of the run; the sensors' own Rate spans ~11 s
LOGGED_S = 40.0  # after RUN_S: the request logs turned on (kafka-configs per broker), then a window


@pytest.fixture
def sensors(lab: LabState) -> Iterator[None]:
    set_client_sensors(lab.bootstrap_servers, True)
    try:
        yield
    finally:
        set_client_sensors(lab.bootstrap_servers, False)


@pytest.fixture
def request_log(lab: LabState) -> Iterator[Callable[[], list[str]]]:
    """Turns the brokers' request logs on when called (off after the test); the call returns
    diagnose's arguments that read them."""
    brokers = [b.id for b in lab.brokers]

    def switch_on() -> list[str]:
        set_request_log(lab.bootstrap_servers, brokers, True)
        return [arg for b in lab.brokers for arg in ("--request-log", str(b.log_file))]

    try:
        yield switch_on
    finally:
        set_request_log(lab.bootstrap_servers, brokers, False)


def _produce_requests(stats: dict[str, Any]) -> int:
    """Produce requests the client wrote to its sockets."""
    return sum(int(b.get("req", {}).get("Produce", 0)) for b in stats.get("brokers", {}).values())


def _answered(stats: dict[str, Any]) -> int:
    """Responses the client received: its produce requests the brokers answered (the few metadata
    requests of a steady producer aside), what RequestMetrics counts. A loaded broker reads one
    request per connection at a time, so it can answer fewer than were written in a window."""
    return sum(int(b.get("rx", 0)) for b in stats.get("brokers", {}).values() if b.get("nodeid", -1) >= 0)


def _client(
    lab: LabState, topic: str, linger: int, marks: dict[str, list[tuple[float, int, int]]], stop: float
) -> None:
    name = f"attr-linger-{linger}"
    counts = marks.setdefault(name, [])

    def on_stats(raw: str) -> None:
        stats = json.loads(raw)
        counts.append((time.time(), _produce_requests(stats), _answered(stats)))

    producer = new_producer(
        Connection(lab.bootstrap_servers),
        {"client.id": name, "linger.ms": linger, "statistics.interval.ms": 1000, "stats_cb": on_stats},
    )
    produce_steadily(producer, topic, b"r" * 200, RECORDS_PER_S, stop)


def _rates(points: list[tuple[float, int, int]], start: float, end: float) -> tuple[float, float]:
    """Produce requests written and answered per second between the first and the last statistics
    inside [start, end]."""
    inside = [p for p in points if start <= p[0] <= end]
    assert len(inside) >= 2, points
    (t1, w1, a1), (t2, w2, a2) = inside[0], inside[-1]
    return (w2 - w1) / (t2 - t1), (a2 - a1) / (t2 - t1)


def test_diagnose_names_and_ranks_the_clients(
    lab: LabState,
    sensors: None,
    request_log: Callable[[], list[str]],
    make_topic: TopicFactory,
    tmp_path: Path,
) -> None:
    replication = min(3, len(lab.brokers))
    topic = make_topic(partitions=len(lab.brokers), replication=replication)
    marks: dict[str, list[tuple[float, int, int]]] = {}
    stop = time.time() + RUN_S + LOGGED_S
    threads = [threading.Thread(target=_client, args=(lab, topic, lg, marks, stop)) for lg in LINGERS_MS]
    for t in threads:
        t.start()
    time.sleep(RUN_S - 1.5)
    end = time.time()  # the sensors' window: the request logs off
    logs = request_log()
    logged_from = time.time() + 1.0
    logged_end = min(logged_from + WINDOW_S, stop - 1.5)
    time.sleep(max(0.0, logged_end - time.time()))
    logged_s = logged_end - logged_from
    assert logged_s >= WINDOW_S / 2, f"kafka-configs took {logged_from - end:.0f} s"
    for t in threads:
        t.join(30)
    thresholds = tmp_path / "thresholds.yaml"
    thresholds.write_text("request_queue_p99_ms: 5000\nflush_p99_ms: 5000\n")
    step = lab.config.scrape_interval_s
    _, found = diagnose_json(lab.prometheus_url, end, WINDOW_S, step, thresholds)
    clients = {c["client_id"]: c for c in found["clients"] if c["client_id"].startswith("attr-linger-")}
    names = [f"attr-linger-{lg}" for lg in LINGERS_MS]
    assert set(clients) == set(names), found["clients"]
    rates = {n: _rates(marks[n], end - WINDOW_S, end + 1.0) for n in names}
    truth = {n: answered for n, (_, answered) in rates.items()}
    brokers = sum(b.get("produce_requests_per_s") or 0.0 for b in found["snapshot"]["brokers"])
    sent = sum(truth.values())
    written = sum(w for w, _ in rates.values())
    print(
        f"the brokers counted {brokers:.1f} produce req/s; the clients had {sent:.1f} answered"
        f" ({written:.1f} sent)"
    )
    estimated = {n: clients[n]["produce_requests_per_s"] for n in names}
    for n in names:
        print(
            f"{n}: estimated {estimated[n]:.1f} req/s ({clients[n]['rate_bound']}),"
            f" the client's count {truth[n]:.1f} req/s answered"
            f" ({estimated[n] / truth[n] - 1:+.0%}); share of request time {clients[n]['time_share']:.0%};"
            f" {clients[n]['request_threads'] / truth[n] * 1e6:.0f} us of thread time and"
            f" {clients[n]['produce_bytes_per_s'] / truth[n]:.0f} B per request answered"
        )
    # linger 0 writes the most requests, linger 500 the fewest
    assert rates[names[0]][0] > rates[names[1]][0] > rates[names[2]][0], rates
    # Ranked by the estimate as by the requests the brokers answered. A lab that cannot answer what
    # the clients write (a host loaded many times over) serves them alike, whatever their batching:
    # two clients within 25% of each other there are a tie, not a ranking to get right.
    ranked = [c["client_id"] for c in found["clients"] if c["client_id"] in clients]
    assert sorted(ranked) == sorted(names)
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            assert truth[a] >= truth[b] / 1.25, (ranked, truth)
    shares = {n: clients[n]["time_share"] for n in names}
    assert shares[names[0]] > shares[names[2]] and shares[names[1]] > shares[names[2]], shares
    # Each client's part of the brokers' requests against its part of the answered ones (the split is
    # what is estimated), on the side its estimate names: 5% for the host's noise, or 4 requests (the
    # windows' edges) where that is more.
    part = {n: (estimated[n] / sum(estimated.values())) / (truth[n] / sent) for n in names}
    slack = {n: max(0.05, 4 / (truth[n] * WINDOW_S)) for n in names}
    assert [clients[n]["rate_bound"] for n in names] == ["at_least", None, "at_most"], clients
    assert 0.65 < part[names[0]] <= 1 + slack[names[0]], (part, clients, truth)
    assert part[names[2]] >= 1 - slack[names[2]], (part, clients, truth)
    # every broker exports the catalog's quota series while the sensors are on
    brokers_up = {str(b.id) for b in lab.brokers}
    for series in (s.name for s in SERIES if s.needs is Needs.QUOTA):
        found_on = {
            r.labels.get("broker")
            for r in Prometheus(lab.prometheus_url).instant(f"count by (broker)({series})")
        }
        assert found_on == brokers_up, (series, found_on)
    # the smallest-request client carries the batching gain; the batched one has none to offer
    assert clients[names[0]]["requests_cut"] is not None and clients[names[0]]["requests_cut"] > 1
    assert clients[names[0]]["bytes_per_request"] < clients[names[2]]["bytes_per_request"]
    # The request logs count every client's produce requests: the ranking and each rate as the
    # clients' own counts (answered: what the brokers completed and logged), within 5%.
    _, counted = diagnose_json(lab.prometheus_url, logged_end, logged_s, step, thresholds, *logs)
    truth = {n: _rates(marks[n], logged_from, logged_end + 1.0)[1] for n in names}
    logged = {c["client_id"]: c for c in counted["clients"] if c["client_id"] in clients}
    assert set(logged) == set(names), counted["clients"]
    for n in names:
        c = logged[n]
        print(
            f"{n}: counted {c['produce_requests_per_s']:.1f} req/s from the request logs, the client's"
            f" count {truth[n]:.1f} ({c['produce_requests_per_s'] / truth[n] - 1:+.1%});"
            f" {c['bytes_per_request']:.0f} B and {c['partitions_per_request']:.2f} partitions per request;"
            f" {c['software']}"
        )
        assert c["counted"] and c["rate_bound"] is None, c
        assert c["produce_requests_per_s"] == pytest.approx(truth[n], rel=0.05), (n, c, truth)
        assert c["software"].startswith("confluent-kafka-python"), c
    order = [c["client_id"] for c in counted["clients"] if c["client_id"] in logged]
    assert order == sorted(names, key=lambda n: -truth[n]), (order, truth)
