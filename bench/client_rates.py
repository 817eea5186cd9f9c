"""Per-client produce request rates on a running lab: librdkafka producers of different batching
(their own per-broker counts of answered Produce requests are the truth) against Kafka's per-client
quota sensors and the brokers' RequestMetrics, read from the lab's Prometheus. Writes the raw figures
(per broker: produce req/s, per client: thread time, bytes/s, answered req/s) as JSON lines, one per
run, so the estimates of tuner.model.clients can be judged on them (docs/benchmarks.md "Which
clients").

    kbt lab up --brokers 3 --no-tiered --scrape-interval 2 --base-port 32000 --lab-dir /tmp/lab-3
    python -m bench.client_rates --lab-dir /tmp/lab-3 --runs 3 --out rates.jsonl
"""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from bench._common import arguments
from tuner.core.kafka_clients import Connection, new_producer
from tuner.driver.steady_load import produce_steadily
from tuner.lab import load_state
from tuner.lab.client_sensors import set_client_sensors
from tuner.measure.prometheus import Prometheus
from tuner.measure.promql import promql, rate_window

FEEDS = '"A size correction, tried on measured data (not used)" ("Which clients")'


def _answered(stats: dict[str, Any]) -> dict[str, int]:
    """Responses the client received per broker (its answered produce requests, a steady
    producer's rare metadata aside)."""
    return {
        str(b["nodeid"]): int(b.get("rx", 0))
        for b in stats.get("brokers", {}).values()
        if b.get("nodeid", -1) >= 0
    }


def _client(bootstrap: str, topic: str, name: str, linger: int, rate: float, size: int, stop: float,
            marks: list[tuple[float, dict[str, int]]]) -> None:  # fmt: skip
    def on_stats(raw: str) -> None:
        marks.append((time.time(), _answered(json.loads(raw))))

    producer = new_producer(
        Connection(bootstrap),
        {"client.id": name, "linger.ms": linger, "statistics.interval.ms": 1000, "stats_cb": on_stats},
    )
    produce_steadily(producer, topic, b"r" * size, rate, stop)


def _per_broker(marks: list[tuple[float, dict[str, int]]], start: float, end: float) -> dict[str, float]:
    inside = [m for m in marks if start <= m[0] <= end]
    (t1, a), (t2, b) = inside[0], inside[-1]
    return {k: (b[k] - a.get(k, 0)) / (t2 - t1) for k in b}


def _series(prom: Prometheus, name: str, end: float, window: float, step: float) -> list[dict[str, Any]]:
    expr = promql(name, rate_window(step))
    return [
        {"labels": r.labels, "values": [v for _, v in r.points]}
        for r in prom.range(expr, end - window, end, step)
    ]


def run_once(
    lab_dir: Path, clients: list[tuple[str, int, float, int]], seconds: float, window: float
) -> dict:
    state = load_state(lab_dir)
    bootstrap = state.bootstrap_servers
    topic = f"kbt-rates-{uuid.uuid4().hex[:6]}"
    n = len(state.brokers)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, n, min(3, n))])[topic].result(30)
    time.sleep(3)
    marks: dict[str, list[tuple[float, dict[str, int]]]] = {c[0]: [] for c in clients}
    stop = time.time() + seconds
    with ThreadPoolExecutor(len(clients)) as pool:  # left when every client has flushed
        running = [pool.submit(_client, bootstrap, topic, *c, stop, marks[c[0]]) for c in clients]
        time.sleep(seconds - 1.5)
        end = time.time()
    for done in running:
        done.result()  # a client's failure ends the run
    time.sleep(state.config.scrape_interval_s * 2)
    prom = Prometheus(state.prometheus_url)
    step = state.config.scrape_interval_s
    out = {
        "brokers": n,
        "end": end,
        "window_s": window,
        "clients": {
            name: {"linger_ms": lg, "records_per_s": r, "record_bytes": s} for name, lg, r, s in clients
        },
        "truth": {name: _per_broker(m, end - window, end + 1.0) for name, m in marks.items()},
        "produce_requests": _series(prom, "PRODUCE_REQUESTS_RATE", end, window, step),
        "threads": _series(prom, "CLIENT_REQUEST_THREADS", end, window, step),
        "bytes": _series(prom, "CLIENT_PRODUCE_BYTES_RATE", end, window, step),
    }
    admin.delete_topics([topic])
    return out


def main() -> None:
    ap = arguments(__doc__, FEEDS)
    ap.add_argument("--lab-dir", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=36.0)
    ap.add_argument("--window", type=float, default=20.0)
    ap.add_argument("--rate", type=float, default=150.0, help="records/s per client")
    ap.add_argument("--lingers", default="0,20,500")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    state = load_state(args.lab_dir)
    clients = [(f"rates-linger-{lg}", int(lg), args.rate, 200) for lg in args.lingers.split(",")]
    set_client_sensors(state.bootstrap_servers, True)
    try:
        for i in range(args.runs):
            found = run_once(args.lab_dir, clients, args.seconds, args.window)
            with args.out.open("a") as f:
                f.write(json.dumps(found) + "\n")
            print(f"run {i + 1}: truth", {k: round(sum(v.values()), 1) for k, v in found["truth"].items()})
    finally:
        set_client_sensors(state.bootstrap_servers, False)


if __name__ == "__main__":
    main()
