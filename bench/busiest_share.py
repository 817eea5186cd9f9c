"""The busiest broker's share of a keyless sticky producer's requests, measured against the model
(tuner.model.predict.busiest_share): independent librdkafka producers, each alone on a topic of one
partition per broker, linger 1 s (a partition kept for 2 s), for a window short enough that only a
few dozen partition choices fall in it. Each producer's own per-broker request counts (librdkafka
statistics) give one draw of its busiest share; the mean over the producers is set beside the
model's expectation and the even split (docs/benchmarks.md).

    kbt lab up --brokers 3 --no-tiered --base-port 32000 --lab-dir /tmp/lab-3
    python -m bench.busiest_share --lab-dir /tmp/lab-3 --producers 8 --seconds 60
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench._common import arguments
from tuner.lab.state import load_state
from tuner.model.predict import predict_rules
from tuner.model.traffic import Traffic
from tuner.spec.clients import rules_of
from tuner.spec.clients.librdkafka import LibrdkafkaProfile

FEEDS = '"Recommend: the busiest broker under a sticky partitioner"'

LINGER_MS = 1000
RATE = 50.0  # records/s per producer
WARMUP_S = 5.0


def _by_broker(stats: dict[str, object]) -> dict[int, int]:
    brokers = stats.get("brokers", {})
    assert isinstance(brokers, dict)
    return {
        int(b["nodeid"]): int(b.get("req", {}).get("Produce", 0))
        for b in brokers.values()
        if b.get("nodeid", -1) >= 0
    }


def _run(bootstrap: str, topic: str, seconds: float, out: list[dict[int, int]]) -> None:
    snaps: list[dict[int, int]] = []
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": LINGER_MS,
            "partitioner": "consistent_random",
            "sticky.partitioning.linger.ms": 2 * LINGER_MS,
            "statistics.interval.ms": 1000,
            "stats_cb": lambda raw: snaps.append(_by_broker(json.loads(raw))),
        }
    )
    start, sent, mark = time.time(), 0, None
    while (now := time.time()) - start < seconds + WARMUP_S:
        while sent < (now - start) * RATE:
            producer.produce(topic, b"y" * 300)
            sent += 1
        producer.poll(0.05)
        if mark is None and now - start >= WARMUP_S and snaps:
            mark = dict(snaps[-1])
    producer.flush(10)
    producer.poll(1.2)
    last = snaps[-1]
    out.append({b: n - (mark or {}).get(b, 0) for b, n in last.items()})


def main() -> None:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--lab-dir", type=Path, required=True)
    parser.add_argument("--producers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    state = load_state(args.lab_dir)
    brokers = len(state.brokers)
    admin = AdminClient({"bootstrap.servers": state.bootstrap_servers})
    topics = [f"busiest-share-{int(time.time())}-{i}" for i in range(args.producers)]
    for future in admin.create_topics([NewTopic(t, brokers, 1) for t in topics]).values():
        future.result(30)
    time.sleep(3)
    counts: list[dict[int, int]] = []
    threads = [
        threading.Thread(target=_run, args=(state.bootstrap_servers, t, args.seconds, counts)) for t in topics
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shares = [max(c.values()) / sum(c.values()) for c in counts if sum(c.values()) > 0]
    rules = rules_of(LibrdkafkaProfile(name="bench", linger_ms=LINGER_MS, partitioner="sticky"))
    traffic = Traffic(
        producers=1,
        rate=RATE,
        message_bytes=300.0,
        partitions=(brokers,),
        brokers=brokers,
        window_s=args.seconds,
    )
    pred = predict_rules(traffic, rules)
    print("per producer, requests by broker:", counts)
    model = pred.busiest_broker_requests_per_s / pred.requests_per_s
    print(
        f"busiest broker's share: measured mean {sum(shares) / len(shares):.3f} over {len(shares)}"
        f" producers (min {min(shares):.3f}, max {max(shares):.3f}); model {model:.3f};"
        f" even split {1 / brokers:.3f}"
    )


if __name__ == "__main__":
    main()
