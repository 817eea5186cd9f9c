"""The client exporter: one prometheus-client endpoint per driver process on a lab client port,
scraped by the lab's Prometheus (job kbt-client), so client and broker views sit side by side.

Series (labels run, producer, client; broker where meaningful), as the metric contract lists them:
kbt_client_produce_requests_total, kbt_client_records_sent_total, kbt_client_bytes_sent_total,
kbt_client_offered_records_total, kbt_client_delivery_errors_total, kbt_client_records_per_request,
kbt_client_batch_bytes, kbt_client_queue_latency_ms{quantile}, kbt_client_rtt_ms{quantile},
kbt_client_delivery_latency_ms{quantile}, kbt_client_produce_throttle_time_max_ms. The Java engine
serves the same contract from its own JVM (loadtests/java-engine, ClientExporter.java).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
from prometheus_client.metrics_core import Metric

LOOPBACK = "127.0.0.1"
# After the drain, how long an engine waits for one more scrape of its client exporter so the run's
# final counts reach Prometheus: past the lab's default scrape interval (5 s); a 1 s lab waits ~1 s.
# Every engine's exporter waits the same (the Java engine gets it in its plan).
FINAL_SCRAPE_S = 6.0


class _Scrapes:
    """A collector that only counts scrapes. Registered before every series, so a scrape counted
    after the final figures were set reads them (Exporter.await_scrape)."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        with self.changed:
            self.count += 1
            self.changed.notify_all()
        return iter(())


class Exporter:
    """A prometheus-client registry of its own, served on one loopback port."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._scrapes = _Scrapes()
        self.registry.register(self._scrapes)
        self.serving = False

    def await_scrape(self, seconds: float = FINAL_SCRAPE_S) -> bool:
        """Wait (at most `seconds`) for one scrape that starts after this call, so the final figures
        reach Prometheus before the process ends. True when one came; False at once when not serving."""
        if not self.serving:
            return False
        scrapes = self._scrapes
        end = time.monotonic() + seconds
        with scrapes.changed:
            seen = scrapes.count
            while scrapes.count == seen and (left := end - time.monotonic()) > 0:
                scrapes.changed.wait(left)
            return scrapes.count != seen

    def serve(self, port: int) -> bool:
        """Listen on 127.0.0.1:port; False when the port is taken (the run goes on unexported)."""
        try:
            start_http_server(port, addr=LOOPBACK, registry=self.registry)
        except OSError:
            return False
        self.serving = True
        return True


class ClientExporter(Exporter):
    def __init__(self, run: str, client: str) -> None:
        super().__init__()
        self.run, self.client = run, client
        labels = ["run", "producer", "client"]
        r = self.registry
        self.requests = Counter(
            "kbt_client_produce_requests", "Produce requests sent", [*labels, "broker"], registry=r
        )
        self.records = Counter("kbt_client_records_sent", "Records acked by the brokers", labels, registry=r)
        self.bytes = Counter("kbt_client_bytes_sent", "Payload bytes acked", labels, registry=r)
        self.offered = Counter(
            "kbt_client_offered_records", "Records the schedule offered", labels, registry=r
        )
        self.errors = Counter("kbt_client_delivery_errors", "Failed deliveries", labels, registry=r)
        self.per_request = Gauge("kbt_client_records_per_request", "Records per batch", labels, registry=r)
        self.batch_bytes = Gauge("kbt_client_batch_bytes", "Batch size on the wire", labels, registry=r)
        self.queue_latency = Gauge(
            "kbt_client_queue_latency_ms", "librdkafka int_latency", [*labels, "quantile"], registry=r
        )
        self.rtt = Gauge(
            "kbt_client_rtt_ms", "Broker round trip", [*labels, "broker", "quantile"], registry=r
        )
        self.delivery_latency = Gauge(
            "kbt_client_delivery_latency_ms", "From intended send to ack", [*labels, "quantile"], registry=r
        )
        self.throttle_max = Gauge(
            "kbt_client_produce_throttle_time_max_ms", "Longest broker quota throttle", labels, registry=r
        )
        self._last_requests: dict[tuple[str, str], int] = {}

    def _l(self, producer: str) -> dict[str, str]:
        return {"run": self.run, "producer": producer, "client": self.client}

    def on_stats(self, producer: str, raw: str) -> None:
        data: dict[str, Any] = json.loads(raw)
        labels = self._l(producer)
        throttled: list[float] = []
        for broker in data.get("brokers", {}).values():
            node = str(broker.get("nodeid", -1))
            if node.startswith("-"):
                continue
            throttle = broker.get("throttle")  # ms, statistics window; counts only throttled responses
            if throttle is not None:
                throttled.append(float(throttle.get("max", 0)) if throttle.get("cnt") else 0.0)
            count = int(broker.get("req", {}).get("Produce", 0))
            last = self._last_requests.get((producer, node), 0)
            if count > last:
                self.requests.labels(**labels, broker=node).inc(count - last)
                self._last_requests[(producer, node)] = count
            queued = broker.get("int_latency", {})
            if queued.get("cnt"):
                for q in ("p50", "p99"):
                    self.queue_latency.labels(**labels, quantile=_q(q)).set(queued[q] / 1000)
            rtt = broker.get("rtt", {})
            if rtt.get("cnt"):
                for q in ("p50", "p99"):
                    self.rtt.labels(**labels, broker=node, quantile=_q(q)).set(rtt[q] / 1000)
        if throttled:
            self.throttle_max.labels(**labels).set(max(throttled))
        for topic in data.get("topics", {}).values():
            count, size = topic.get("batchcnt", {}), topic.get("batchsize", {})
            if count.get("cnt"):
                self.per_request.labels(**labels).set(count["sum"] / count["cnt"])
                self.batch_bytes.labels(**labels).set(size.get("sum", 0) / count["cnt"])

    def on_delivery(self, producer: str, acked: int, acked_bytes: int, failed: int, offered: int) -> None:
        labels = self._l(producer)
        self.records.labels(**labels).inc(acked)
        self.bytes.labels(**labels).inc(acked_bytes)
        self.errors.labels(**labels).inc(failed)
        self.offered.labels(**labels).inc(offered)

    def on_latency(self, producer: str, p50_ms: float, p99_ms: float) -> None:
        labels = self._l(producer)
        self.delivery_latency.labels(**labels, quantile="0.5").set(p50_ms)
        self.delivery_latency.labels(**labels, quantile="0.99").set(p99_ms)


def _q(name: str) -> str:
    return {"p50": "0.5", "p99": "0.99"}[name]
