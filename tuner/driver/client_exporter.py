"""The client exporter: one prometheus-client endpoint per driver process on a lab client port,
scraped by the lab's Prometheus (job kbt-client), so client and broker views sit side by side.

Series (labels run, producer, client; broker where meaningful) in base units, as the metric
contract (tuner.measure.catalog CLIENT_SERIES, which a unit test holds this exporter to) lists them:
kbt_client_produce_requests_total, kbt_client_records_acked_total, kbt_client_bytes_acked_total,
kbt_client_offered_records_total, kbt_client_delivery_errors_total, kbt_client_records_per_request,
kbt_client_batch_bytes, kbt_client_queue_latency_seconds{quantile}, kbt_client_rtt_seconds{quantile},
kbt_client_produce_throttle_time_max_seconds and the histogram kbt_client_delivery_latency_seconds.
The Java engine serves the same contract from its own JVM (loadtests/java-engine, ClientExporter.java).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from socketserver import ThreadingMixIn
from typing import Any, Self
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, make_wsgi_app
from prometheus_client.metrics_core import HistogramMetricFamily, Metric

from tuner.core.client_figures import DELIVERY_BUCKETS_S
from tuner.driver.rdkafka_stats import Emission, LatencyWindow

LOOPBACK = "127.0.0.1"
# After the drain, how long an engine waits for one more scrape of its client exporter so the run's
# final counts reach Prometheus: past the lab's default scrape interval (5 s); a 1 s lab waits ~1 s.
# Every engine's exporter waits the same (the Java engine gets it in its plan).
FINAL_SCRAPE_S = 6.0


class _Served:
    """A scrape's response body: close() after the whole body was written tells the exporter that
    scrape reached Prometheus (wsgiref closes the body on success and, inside its except clause, on a
    failed write; only the first counts)."""

    def __init__(self, body: Iterable[bytes], done: Callable[[], None]) -> None:
        self._body, self._done = body, done

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        if sys.exc_info()[0] is None:  # no write failed
            self._done()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Exporter:
    """A prometheus-client registry of its own, served on one loopback port.

    Scrapes are numbered as they arrive and reported when their response was written whole, so the
    engine can wait, before its process ends, for one scrape that read the final figures and was
    delivered (a process ending right after the metrics were read cut the response off)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.serving = False
        self._metrics = make_wsgi_app(self.registry)
        self._scrapes = threading.Condition()
        self._arrived = 0  # scrapes begun
        self._delivered = 0  # the latest scrape number whose response was written whole

    def await_scrape(self, seconds: float = FINAL_SCRAPE_S) -> bool:
        """Wait (at most `seconds`) for one scrape that begins after this call and is delivered, so
        the final figures reach Prometheus before the process ends. True when one was; False at once
        when not serving."""
        if not self.serving:
            return False
        end = time.monotonic() + seconds
        with self._scrapes:
            seen = self._arrived
            while self._delivered <= seen and (left := end - time.monotonic()) > 0:
                self._scrapes.wait(left)
            return self._delivered > seen

    def served(self, port: int) -> Self | None:
        """This exporter once it listens on 127.0.0.1:port; None when the port is taken (the run goes
        on unexported)."""
        try:
            server = make_server(LOOPBACK, port, self._app, _ThreadingServer, _QuietHandler)
        except OSError:
            return None
        threading.Thread(target=server.serve_forever, name="client-exporter", daemon=True).start()
        self.serving = True
        return self

    def _app(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self._scrapes:
            self._arrived += 1
            number = self._arrived
        return _Served(self._metrics(environ, start_response), lambda: self._deliver(number))

    def _deliver(self, number: int) -> None:
        with self._scrapes:
            self._delivered = max(self._delivered, number)
            self._scrapes.notify_all()


class ClientExporter(Exporter):
    def __init__(self, run: str, client: str) -> None:
        super().__init__()
        self.run, self.client = run, client
        labels = ["run", "producer", "client"]
        r = self.registry
        self.requests = Counter(
            "kbt_client_produce_requests", "Produce requests sent", [*labels, "broker"], registry=r
        )
        self.records = Counter("kbt_client_records_acked", "Records the brokers acked", labels, registry=r)
        self.bytes = Counter("kbt_client_bytes_acked", "Payload bytes the brokers acked", labels, registry=r)
        self.offered = Counter(
            "kbt_client_offered_records", "Records the schedule offered", labels, registry=r
        )
        self.errors = Counter("kbt_client_delivery_errors", "Failed deliveries", labels, registry=r)
        self.per_request = Gauge("kbt_client_records_per_request", "Records per batch", labels, registry=r)
        self.batch_bytes = Gauge("kbt_client_batch_bytes", "Batch size on the wire", labels, registry=r)
        self.queue_latency = Gauge(
            "kbt_client_queue_latency_seconds", "librdkafka int_latency", [*labels, "quantile"], registry=r
        )
        self.rtt = Gauge(
            "kbt_client_rtt_seconds", "Broker round trip", [*labels, "broker", "quantile"], registry=r
        )
        self.delivery = _DeliveryHistogram()
        r.register(self.delivery)
        self.throttle_max = Gauge(
            "kbt_client_produce_throttle_time_max_seconds",
            "Longest broker quota throttle",
            labels,
            registry=r,
        )
        self._last_requests: dict[str, dict[str, int]] = {}  # producer -> node -> cumulative count

    def _l(self, producer: str) -> dict[str, str]:
        return {"run": self.run, "producer": producer, "client": self.client}

    def on_stats(self, producer: str, emission: Emission) -> None:
        labels = self._l(producer)
        last = self._last_requests.setdefault(producer, {})
        for node, delta in emission.new_requests(last).items():
            self.requests.labels(**labels, broker=node).inc(delta)
        for broker in emission.brokers:
            if broker.int_latency.cnt:
                for quantile, seconds in _quantiles(broker.int_latency):
                    self.queue_latency.labels(**labels, quantile=quantile).set(seconds)
            if broker.rtt.cnt:
                for quantile, seconds in _quantiles(broker.rtt):
                    self.rtt.labels(**labels, broker=broker.node, quantile=quantile).set(seconds)
        throttled = [b.throttle_max for b in emission.brokers if b.throttle_max is not None]
        if throttled:
            self.throttle_max.labels(**labels).set(max(throttled) / 1000)  # ms
        for topic in emission.topics:
            if topic.batches:
                self.per_request.labels(**labels).set(topic.records / topic.batches)
                self.batch_bytes.labels(**labels).set(topic.bytes / topic.batches)

    def on_delivery(self, producer: str, acked: int, acked_bytes: int, failed: int, offered: int) -> None:
        labels = self._l(producer)
        self.records.labels(**labels).inc(acked)
        self.bytes.labels(**labels).inc(acked_bytes)
        self.errors.labels(**labels).inc(failed)
        self.offered.labels(**labels).inc(offered)

    def on_latency(self, producer: str, counts: list[tuple[int, int]]) -> None:
        """The delivery latencies so far, as (microseconds, count) pairs of the process's histogram
        (cumulative: each call replaces the last)."""
        self.delivery.set(self._l(producer), counts)


def _quantiles(window: LatencyWindow) -> tuple[tuple[str, float], ...]:
    """librdkafka's window percentiles (microseconds) as quantile labels and seconds."""
    return ("0.5", window.p50 / 1e6), ("0.99", window.p99 / 1e6)


class _DeliveryHistogram:
    """kbt_client_delivery_latency_seconds: a Prometheus histogram (buckets DELIVERY_BUCKETS_S) read
    from each producer's own HdrHistogram when Prometheus scrapes, so nothing is observed twice."""

    NAME = "kbt_client_delivery_latency_seconds"

    def __init__(self) -> None:
        self._by_labels: dict[tuple[tuple[str, str], ...], list[tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def set(self, labels: dict[str, str], counts: list[tuple[int, int]]) -> None:
        with self._lock:
            self._by_labels[tuple(labels.items())] = list(counts)

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            items = list(self._by_labels.items())
        if not items:
            return
        family = HistogramMetricFamily(
            self.NAME, "From intended send to ack", labels=[k for k, _ in items[0][0]]
        )
        for key, counts in items:
            family.add_metric([v for _, v in key], *histogram_buckets(counts))
        yield family


def histogram_buckets(counts: list[tuple[int, int]]) -> tuple[list[tuple[str, float]], float]:
    """(cumulative buckets with +Inf, sum in seconds) of (microseconds, count) pairs."""
    buckets = [(repr(b), float(sum(c for us, c in counts if us <= b * 1e6))) for b in DELIVERY_BUCKETS_S]
    buckets.append(("+Inf", float(sum(c for _, c in counts))))
    return buckets, sum(us * c for us, c in counts) / 1e6
