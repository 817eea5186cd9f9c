"""The consumer exporter: one prometheus-client endpoint per `kbt stress` consumer process on a lab
client port, scraped by the lab's Prometheus with job kbt-client (like the producer's
kbt_client_* series), so consumer lag sits beside the broker series on the stress dashboard.

Series (labels run, group, mode = realtime|lagging; consumer where per member):
kbt_consumer_records_total{consumer}, kbt_consumer_bytes_total{consumer},
kbt_consumer_lag_records{consumer} (records behind the high watermark, from librdkafka statistics),
kbt_consumer_e2e_latency_seconds{quantile="0.5"|"0.99"} (real-time groups: now - record timestamp over
the last few seconds), kbt_consumer_data_age_seconds (age of the records read last; lagging groups
read minutes-old data from the remote tier), kbt_consumer_lagging_active (1 while a lagging group
reads), kbt_consumer_rewinds_total (a lagging reader caught up and went back lag_s).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from tuner.driver.client_exporter import Exporter


class ConsumerExporter(Exporter):
    def __init__(self, run: str, group: str, mode: str) -> None:
        super().__init__()
        self.base = {"run": run, "group": group, "mode": mode}
        r = self.registry
        labels = ["run", "group", "mode"]
        member = [*labels, "consumer"]
        self.records = Counter("kbt_consumer_records", "Records consumed", member, registry=r)
        self.bytes = Counter("kbt_consumer_bytes", "Value bytes consumed", member, registry=r)
        self.lag = Gauge("kbt_consumer_lag_records", "Records behind the high watermark", member, registry=r)
        self.e2e = Gauge(
            "kbt_consumer_e2e_latency_seconds",
            "Record timestamp to consumption",
            [*labels, "quantile"],
            registry=r,
        )
        self.age = Gauge("kbt_consumer_data_age_seconds", "Age of the records read last", labels, registry=r)
        self.active = Gauge("kbt_consumer_lagging_active", "1 while lagging readers read", labels, registry=r)
        self.rewinds = Counter("kbt_consumer_rewinds", "Lagging reader went back lag_s", labels, registry=r)

    def consumed(self, consumer: str, records: int, size: int) -> None:
        self.records.labels(**self.base, consumer=consumer).inc(records)
        self.bytes.labels(**self.base, consumer=consumer).inc(size)

    def set_lag(self, consumer: str, lag: float) -> None:
        self.lag.labels(**self.base, consumer=consumer).set(lag)

    def set_e2e(self, p50_ms: float, p99_ms: float) -> None:
        self.e2e.labels(**self.base, quantile="0.5").set(p50_ms / 1000)
        self.e2e.labels(**self.base, quantile="0.99").set(p99_ms / 1000)

    def set_age(self, seconds: float) -> None:
        self.age.labels(**self.base).set(seconds)

    def set_active(self, active: bool) -> None:
        self.active.labels(**self.base).set(1 if active else 0)

    def rewound(self) -> None:
        self.rewinds.labels(**self.base).inc()
