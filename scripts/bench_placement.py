"""Pinned leaders and key shares on a lab (docs/benchmarks.md "Capture and replay"): runs
loadtests/pinned-placement.yaml (a librdkafka and a Java run of one keyed topic of 6 partitions,
leaders 3,3,3,1,2,3, key shares 0.4,0.1,0.1,0.1,0.1,0.2) and reads each run's topic while it lives
(the run deletes it): its partitions' leaders and end offsets, the records' share per partition.

    kbt lab up --brokers 3 --no-tiered --base-port 24000 --lab-dir /tmp/lab-3
    python scripts/bench_placement.py --lab-dir /tmp/lab-3 --results /tmp/placement
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka import KafkaException, TopicPartition

from tuner.core.kafka_clients import Connection, admin_client, new_consumer
from tuner.lab.state import load_state

SPEC = Path(__file__).resolve().parents[1] / "loadtests" / "pinned-placement.yaml"
TIMEOUT_S = 600.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab-dir", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    args = parser.parse_args()
    conn = Connection(load_state(args.lab_dir).bootstrap_servers)
    admin = admin_client(conn)
    consumer = new_consumer(conn, {"group.id": "kbt-bench-placement", "enable.auto.commit": False})
    kbt = Path(sys.executable).parent / "kbt"
    sweep = subprocess.Popen(
        [str(kbt), "sweep", str(SPEC), "--lab-dir", str(args.lab_dir), "--results", str(args.results)],
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
