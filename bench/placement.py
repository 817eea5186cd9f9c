"""Pinned leaders and key shares on a lab (docs/benchmarks.md "Capture and replay"): runs
loadtests/pinned-placement.yaml (a librdkafka and a Java run of one keyed topic of 6 partitions,
leaders 3,3,3,1,2,3, key shares 0.4,0.1,0.1,0.1,0.1,0.2) and reads each run's topic while it lives
(the run deletes it): its partitions' leaders and end offsets, the records' share per partition.
First, librdkafka's own partitioners against tuner.driver.key_shares: 600 keys (`0`.. and `key-0`..)
produced to a 7-partition topic under each, the partition each landed on against the one computed.

    kbt lab up --brokers 3 --no-tiered --base-port 24000 --lab-dir /tmp/lab-3
    python -m bench.placement --lab-dir /tmp/lab-3 --results /tmp/placement
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka import KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient

from bench._common import KBT, ROOT, arguments
from tuner.core.kafka_clients import Connection, admin_client, new_consumer, new_producer
from tuner.driver.key_shares import partitioner
from tuner.lab.state import load_state
from tuner.spec.workload import TopicSpec
from tuner.target.topics import create_topics, delete_topics

FEEDS = (
    '"Replay placement: pinned leaders and key shares (since that run)"'  # the docs/benchmarks.md sections
)

SPEC = ROOT / "loadtests" / "pinned-placement.yaml"
TIMEOUT_S = 600.0


def _landed(conn: Connection, topic: str, name: str, keys: list[bytes]) -> dict[bytes, int]:
    """The partition each key's record landed on, produced under librdkafka's partitioner `name`."""
    landed: dict[bytes, int] = {}

    def delivered(err: object, msg: Message) -> None:
        key, partition = msg.key(), msg.partition()
        if err is None and key is not None and partition is not None:
            landed[key] = partition

    producer = new_producer(conn, {"partitioner": name, "linger.ms": 5})
    for key in keys:
        producer.produce(topic, b"v", key=key, on_delivery=delivered)
    producer.flush(30)
    return landed


def _partitioners(conn: Connection, admin: AdminClient) -> None:
    topic = "kbt-bench-partitioners"
    create_topics(admin, [TopicSpec(name=topic, partitions=7)], [topic])
    keys = [str(i).encode() for i in range(300)] + [b"key-%d" % i for i in range(300)]
    try:
        for name in ("consistent_random", "murmur2_random", "fnv1a_random"):
            landed = _landed(conn, topic, name, keys)
            computed = partitioner(name)
            assert computed is not None
            wrong = sum(1 for k in keys if landed.get(k) != computed(k, 7))
            print(f"librdkafka {name}: {len(landed)} keys delivered, {wrong} elsewhere than computed")
    finally:
        delete_topics(admin, [topic])


def main() -> None:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--lab-dir", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    args = parser.parse_args()
    conn = Connection(load_state(args.lab_dir).bootstrap_servers)
    admin = admin_client(conn)
    _partitioners(conn, admin)
    consumer = new_consumer(conn, {"group.id": "kbt-bench-placement", "enable.auto.commit": False})
    sweep = subprocess.Popen(
        [*KBT, "sweep", str(SPEC), "--lab-dir", str(args.lab_dir), "--results", str(args.results)],
        stdout=subprocess.DEVNULL,
    )
    seen: dict[str, tuple[list[int], list[int]]] = {}
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while sweep.poll() is None and time.monotonic() < deadline:
            for name, topic in admin.list_topics(timeout=10).topics.items():
                if "pinned-placement" not in name:
                    continue
                parts = sorted(topic.partitions)
                try:  # the last reading before the run deletes its topic is the one kept
                    ends = [
                        consumer.get_watermark_offsets(TopicPartition(name, p), timeout=5)[1] for p in parts
                    ]
                except KafkaException:
                    continue
                seen[name] = ([topic.partitions[p].leader for p in parts], ends)
            time.sleep(1.0)
    finally:
        if sweep.poll() is None:
            sweep.terminate()
        sweep.wait(60)
        consumer.close()
    for name, (leaders, ends) in sorted(seen.items()):
        total = sum(ends) or 1
        shares = ", ".join(f"{e / total:.3f}" for e in ends)
        print(f"{name}: leaders {leaders}; records {ends}; shares {shares}")
    sys.exit(sweep.returncode or 0)


if __name__ == "__main__":
    main()
