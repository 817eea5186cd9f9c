"""The cost of what tells the clients apart, side by side: Kafka's per-client quota sensors (`kbt lab
client-sensors on`) or its request log (`kbt lab request-log on`). Two 1-broker labs at the same time
under the same produce load (librdkafka, linger 0, small records), one with the switch on, and each
broker JVM's CPU per produce request over the same window (docs/benchmarks.md). Kafka keeps the
sensors until a broker restarts, so every round starts two fresh labs, and the switch alternates
between them from round to round.

    python -m bench.client_sensors --base-port 32100 --rounds 6 --seconds 40
    python -m bench.client_sensors --switch request-log --base-port 32100 --rounds 6 --seconds 40
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench._common import arguments, lab
from tuner.driver.steady_load import produce_steadily
from tuner.lab.client_sensors import set_client_sensors
from tuner.lab.request_log import set_request_log
from tuner.lab.state import LabState

FEEDS = '"What the sensors cost" (--switch sensors), "What the request log costs" (--switch request-log)'

TOPIC = "bench-client-sensors"
PORTS_PER_LAB = 50


def _query(prom: str, expr: str, at: float) -> float:
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at})
    with urllib.request.urlopen(url, timeout=10) as answer:
        result = json.load(answer)["data"]["result"]
    return sum(float(r["value"][1]) for r in result)


def _load(bootstrap: str, seconds: float, rate: float) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "client.id": "bench-sensors"})
    produce_steadily(producer, TOPIC, b"x" * 200, rate, time.time() + seconds)


def _both(states: list[LabState], seconds: float, rate: float) -> None:
    threads = [threading.Thread(target=_load, args=(s.bootstrap_servers, seconds, rate)) for s in states]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _figures(state: LabState, window_s: int, end: float) -> tuple[float, float]:
    w = f"{window_s}s"
    cpu = _query(state.prometheus_url, f"rate(process_cpu_seconds_total{{job='kafka-broker'}}[{w}])", end)
    reqs = _query(state.prometheus_url, f"rate(kafka_network_requests_total{{request='Produce'}}[{w}])", end)
    return reqs, cpu


def main() -> None:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--base-port", type=int, required=True, help="the first lab's; the second's is 50 up")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--rate", type=float, default=800.0, help="records/s offered to each lab")
    parser.add_argument("--switch", choices=("sensors", "request-log"), default="sensors")
    args = parser.parse_args()
    per_request: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="kbt-sensors-") as tmp:
        for index in range(args.rounds):
            up = ("--brokers", "1", "--no-tiered", "--scrape-interval", "2", "--client-exporters", "0")
            with contextlib.ExitStack() as labs:
                states = [
                    labs.enter_context(
                        lab(
                            None,
                            Path(tmp) / f"round-{index}-lab-{k}",
                            args.base_port + k * PORTS_PER_LAB,
                            *up,
                        )
                    ).state()
                    for k in (0, 1)
                ]
                for s in states:
                    admin = AdminClient({"bootstrap.servers": s.bootstrap_servers})  # kept for its futures
                    for future in admin.create_topics([NewTopic(TOPIC, 1, 1)]).values():
                        future.result(30)
                    del admin  # it would go on reconnecting to the lab after the lab is down
                on = index % 2  # the lab with the sensors alternates
                if args.switch == "sensors":
                    set_client_sensors(states[on].bootstrap_servers, True)
                else:
                    set_request_log(states[on].bootstrap_servers, [b.id for b in states[on].brokers], True)
                _both(states, 15.0, args.rate)  # both JITs warm up
                _both(states, args.seconds, args.rate)
                end = time.time()
                for k, s in enumerate(states):
                    reqs, cpu = _figures(s, int(args.seconds - 8), end)
                    per_request[k == on].append(cpu / reqs * 1e6)
                    print(
                        f"round {index + 1} lab {k} {args.switch} {'on ' if k == on else 'off'}: {reqs:6.1f}"
                        f" produce req/s, broker CPU {cpu:.3f} cores = {cpu / reqs * 1e6:6.1f} us/request",
                        flush=True,
                    )
    off, on_ = per_request[False], per_request[True]
    ratios = [b / a for a, b in zip(off, on_, strict=True)]
    print(
        f"broker CPU per produce request: {args.switch} off {sum(off) / len(off):.1f} us,"
        f" on {sum(on_) / len(on_):.1f} us; on/off per round {', '.join(f'{r:.3f}' for r in ratios)}"
    )
    spread = statistics.stdev(ratios) if len(ratios) > 1 else float("nan")
    middle, geo = statistics.median(ratios), statistics.geometric_mean(ratios)
    print(
        f"on/off: median {middle:.3f}, geometric mean {geo:.3f}, range {min(ratios):.3f}-{max(ratios):.3f},"
        f" standard deviation {spread:.3f} over {len(ratios)} pairs"
    )


if __name__ == "__main__":
    main()
