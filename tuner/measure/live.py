"""Live figures while load runs: client and broker produce requests/s, p99, acked and lost so far.

Read from the lab's Prometheus, which scrapes both sides every few seconds: the client exporters
(kbt_client_*, one per driver or locust process) and the brokers' jmx_exporter. Only the run in
progress has live client series (a finished run's exporters are gone, so Prometheus marks their
series stale), so the sums need no run label. "Lost so far" counts failed deliveries as the
clients report them; the run's final lost count comes from reading every acked record back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from tuner.core.errors import KbtError
from tuner.measure.broker_window import request_selector
from tuner.measure.prometheus import Prometheus

INTERVAL_S = 5.0  # kafka-producer-perf-test prints a line every 5 s too


@dataclass(frozen=True)
class LiveSample:
    at: float  # epoch s
    client_requests_per_s: float | None
    broker_requests_per_s: float | None
    p99_ms: float | None
    acked: float | None
    lost: float | None


def _queries(window_s: float) -> dict[str, str]:
    w = f"{max(window_s, 10.0):.0f}s"
    return {
        "client_requests_per_s": f"sum(rate(kbt_client_produce_requests_total[{w}]))",
        # The brokers' job only: a lab with kubernetes_job scrapes each broker a second time.
        "broker_requests_per_s": f"sum(rate({request_selector()}[{w}]))",
        # the delivery histogram of every producer together over the window (NaN without deliveries)
        "p99_ms": "histogram_quantile(0.99, sum by (le)"
        f"(rate(kbt_client_delivery_latency_seconds_bucket[{w}]))) * 1000",
        "acked": "sum(kbt_client_records_acked_total)",
        "lost": "sum(kbt_client_delivery_errors_total)",
    }


def sample(prom: Prometheus, scrape_interval_s: float = 5.0, since: float | None = None) -> LiveSample:
    """One reading; a figure Prometheus has no series for (yet) is None. Rates span at most the
    time `since` the load started (at least 10 s): the previous run's tail stays out of them."""
    values: dict[str, float | None] = {}
    window = 4 * scrape_interval_s
    if since is not None:
        window = min(window, time.time() - since)
    for name, expr in _queries(window).items():
        try:
            values[name] = prom.value(expr)
        except KbtError:
            values[name] = None
    return LiveSample(at=time.time(), **values)


class LiveSampler:
    """Calls `on_sample` every INTERVAL_S seconds from a thread of its own until stopped."""

    def __init__(
        self,
        prometheus_url: str,
        on_sample: Callable[[LiveSample], None],
        scrape_interval_s: float = 5.0,
        prometheus: Prometheus | None = None,
    ) -> None:
        # A target's Prometheus comes with its auth and metric dialect: the broker query is
        # translated to the names its brokers export (Prometheus.for_target).
        self.prom = prometheus or Prometheus(prometheus_url, timeout_s=min(INTERVAL_S, 4.0))
        self.on_sample = on_sample
        self.scrape_interval_s = scrape_interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.time()

    def start(self) -> None:
        self.stop()
        self._stop.clear()
        self._started = time.time()
        self._thread = threading.Thread(target=self._loop, name="kbt-live", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=INTERVAL_S)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            reading = sample(self.prom, self.scrape_interval_s, since=self._started)
            if not self._stop.is_set():
                self.on_sample(reading)
