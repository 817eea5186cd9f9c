"""Demo traffic on the running lab: the same records sent unbatched and batched, broker view of each.

Prints, per phase, what the brokers saw (from Prometheus, via the named PromQL catalog): produce
requests per second, records per produce request, network and request-handler idle, broker CPU.
Bounded: 2 phases of about 15 s each, to 127.0.0.1 only; the demo topic is deleted afterwards.
"""

from __future__ import annotations

import sys
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tuner.driver.steady_load import produce_steadily
from tuner.lab import load_state
from tuner.measure.prometheus import Prometheus
from tuner.measure.promql import promql

PHASES: list[tuple[str, dict[str, object]]] = [
    ("unbatched (linger.ms=0)", {"linger.ms": 0}),
    ("batched (linger.ms=100, lz4)", {"linger.ms": 100, "compression.type": "lz4"}),
]
RATE = 3000  # records per second
SECONDS = 15
SHOWN = [
    ("PRODUCE_REQUESTS_RATE", "produce req/s", "{:.0f}"),
    ("RECORDS_PER_PRODUCE_REQUEST", "records/request", "{:.1f}"),
    ("BYTES_PER_PRODUCE_REQUEST", "bytes/request", "{:.0f}"),
    ("NETWORK_IDLE", "network idle", "{:.3f}"),
    ("REQUEST_HANDLER_IDLE", "handler idle", "{:.3f}"),
    ("BROKER_CPU_CORES", "broker cores", "{:.2f}"),
]


def produce(bootstrap: str, topic: str, extra: dict[str, object]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **extra})
    payload = b'{"level":"INFO","service":"checkout","msg":"order accepted","latency_ms":12}' * 3
    produce_steadily(producer, topic, payload, RATE, time.time() + SECONDS, flush_s=30)


def main() -> int:
    state = load_state()
    prom = Prometheus(state.prometheus_url)
    admin = AdminClient({"bootstrap.servers": state.bootstrap_servers})
    topic = f"kbt-demo-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(topic, 6, min(3, len(state.brokers)))])[topic].result(30)
    window = f"{SECONDS - 3}s"
    rows = []
    try:
        for label, extra in PHASES:
            print(f"producing {RATE} records/s for {SECONDS}s, {label} ...", file=sys.stderr)
            produce(state.bootstrap_servers, topic, extra)
            time.sleep(2 * state.config.scrape_interval_s)
            values = []
            for name, _, fmt in SHOWN:
                samples = [s.value for s in prom.instant(promql(name, window))]
                values.append(fmt.format(sum(samples) / len(samples)) if samples else "-")
            rows.append((label, values))
    finally:
        admin.delete_topics([topic])[topic].result(30)
    width = max(len(r[0]) for r in rows)
    print(f"\nbroker view per phase (mean over brokers, {window} window; {state.prometheus_url})")
    print(" " * width + "  " + "  ".join(f"{h:>15}" for _, h, _ in SHOWN))
    for label, values in rows:
        print(label.ljust(width) + "  " + "  ".join(f"{v:>15}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
