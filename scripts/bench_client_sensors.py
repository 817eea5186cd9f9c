"""The cost of Kafka's per-client quota sensors, side by side: the same produce load (librdkafka,
linger 0, small records) on a freshly started 1-broker lab with no client quota, then with the
sensors on (`kbt lab client-sensors on`), and the broker JVM's CPU per produce request each time
(docs/benchmarks.md). Kafka never turns the sensors off again until the broker restarts, so every
round starts its own lab.

    python scripts/bench_client_sensors.py --base-port 32100 --rounds 3 --seconds 30
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
import urllib.parse
import urllib.request

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tuner.lab import Lab, LabConfig
from tuner.lab.client_sensors import set_client_sensors


def _query(prom: str, expr: str, at: float) -> float:
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at})
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (the lab's Prometheus)
        result = json.load(answer)["data"]["result"]
    return sum(float(r["value"][1]) for r in result)


def _load(bootstrap: str, topic: str, seconds: float, rate: float) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "client.id": "bench-sensors"})
    start, sent = time.time(), 0
    while (now := time.time()) - start < seconds:
        while sent < (now - start) * rate:
            producer.produce(topic, b"x" * 200)
            sent += 1
        producer.poll(0)
        time.sleep(0.002)
    producer.flush(10)


def _round(lab: Lab, args: argparse.Namespace, rows: list[tuple[bool, float, float, float]]) -> None:
    state = lab.up()
    try:
        bootstrap, prom = state.bootstrap_servers, state.prometheus_url
        topic = "bench-client-sensors"
        admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: its futures need the handle
        for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
            future.result(30)
        _load(bootstrap, topic, 15.0, args.rate)  # the JIT warms up before either measurement
        for on in (False, True):
            if on:
                set_client_sensors(bootstrap, True)
            _load(bootstrap, topic, args.seconds, args.rate)
            end = time.time()
            w = f"{int(args.seconds - 8)}s"
            cpu = _query(prom, f"rate(process_cpu_seconds_total{{job='kafka-broker'}}[{w}])", end)
            reqs = _query(prom, f"rate(kafka_network_requests_total{{request='Produce'}}[{w}])", end)
            idle = _query(prom, f"avg_over_time(kafka_network_processor_avg_idle_ratio[{w}])", end)
            rows.append((on, reqs, cpu, idle))
            print(
                f"sensors {'on ' if on else 'off'}: {reqs:7.1f} produce req/s, broker CPU {cpu:.3f} cores"
                f" = {cpu / reqs * 1e6:6.1f} us/request, network idle {idle:.3f}",
                flush=True,
            )
    finally:
        lab.down()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-port", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=1500.0, help="records/s offered")
    args = parser.parse_args()
    rows: list[tuple[bool, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="kbt-sensors-") as tmp:
        for index in range(args.rounds):
            cfg = LabConfig(
                brokers=1, base_port=args.base_port, lab_dir=Path(tmp) / f"lab-{index}", tiered=False,
                scrape_interval_s=2.0, client_exporter_count=0,
            )  # fmt: skip
            _round(Lab(cfg), args, rows)
    for label, on in (("off", False), ("on", True)):
        per = [cpu / reqs * 1e6 for o, reqs, cpu, _ in rows if o == on and reqs > 0]
        print(
            f"sensors {label}: mean {sum(per) / len(per):.1f} us broker CPU per produce request over {len(per)} runs"
        )


if __name__ == "__main__":
    main()
