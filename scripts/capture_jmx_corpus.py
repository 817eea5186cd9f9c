"""Capture the MBean attribute names of a real lab broker into tests/unit/data/jmx_corpus.txt.

The unit tests run exporters/jmx/kafka-broker.yml over this corpus (as jmx_exporter would) to check
that every catalog series has a rule and every rule feeds the catalog. Re-run after a Kafka upgrade:

    python scripts/capture_jmx_corpus.py --base-port 19340

It starts a 2-broker tiered lab in a temporary directory with a rule that exports every attribute
under its raw name, drives produce, replication, remote copy and remote fetch traffic, scrapes
broker 1 and brings the lab down.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tuner.lab import Lab, LabConfig  # noqa: E402
from tuner.lab.client_sensors import set_client_sensors  # noqa: E402

RAW_RULES = """\
lowercaseOutputName: false
rules:
  - pattern: '^(.+): (.*)$'
    name: raw
    labels:
      bean: "$1"
"""
# Kept: the domains the broker rules look at. RequestMetrics only for a few request types (the
# full set is ~8,000 attributes) so the corpus stays small.
KEEP = re.compile(
    r"^(kafka\.network|kafka\.server|kafka\.log|kafka\.log\.remote|org\.apache\.kafka\.storage\.internals\.log)<"
)
REQUEST_METRICS = re.compile(r"^kafka\.network<type=RequestMetrics, name=\w+, request=(\w+)")
REQUESTS_KEPT = {"Produce", "FetchConsumer", "FetchFollower", "Fetch", "Metadata", "ApiVersions"}


def keep(name: str) -> bool:
    if not KEEP.match(name):
        return False
    m = REQUEST_METRICS.match(name)
    return m is None or m.group(1) in REQUESTS_KEPT


def wait_for_remote_tier(state_dirs: tuple[list[Path], Path], timeout_s: float = 90) -> None:
    """Until the first tiered segment is in the remote tier and gone from every broker's disk."""
    local_dirs, remote = state_dirs
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        first_local = [d / "corpus-tiered-0" / "00000000000000000000.log" for d in local_dirs]
        if any(remote.rglob("*.log")) and not any(p.exists() for p in first_local):
            return
        time.sleep(1)
    raise SystemExit("segments did not move to the remote tier in time")


def traffic(bootstrap: str, state_dirs: tuple[list[Path], Path]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [
        NewTopic("corpus-plain", 2, 2),
        NewTopic(
            "corpus-tiered",
            1,
            2,
            config={"remote.storage.enable": "true", "segment.ms": "1000", "local.retention.ms": "1000"},
        ),
    ]
    for fut in admin.create_topics(topics).values():
        fut.result(30)
    # Kafka's per-client quota sensors exist only while a client quota is set (kbt lab client-sensors)
    set_client_sensors(bootstrap, True)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "client.id": "corpus-producer"})
    for round_ in range(3):
        for i in range(5000):
            producer.produce("corpus-tiered", f"tiered-{round_}-{i}".encode() * 10)
            producer.produce("corpus-plain", f"plain-{round_}-{i}".encode() * 10)
        producer.flush(30)
        time.sleep(2)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "corpus",
            "enable.auto.commit": False,
            "client.id": "corpus-consumer",
        }
    )
    wait_for_remote_tier(state_dirs)
    consumer.assign([TopicPartition("corpus-tiered", 0, 0), TopicPartition("corpus-plain", 0, 0)])
    got = 0
    end = time.time() + 30
    while time.time() < end and got < 30000:
        msg = consumer.poll(1)
        if msg is not None and not msg.error():
            got += 1
    consumer.close()
    print(f"consumed {got} records", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-port", type=int, default=19340)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "unit" / "data" / "jmx_corpus.txt")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbt-corpus-") as tmp:
        rules = Path(tmp) / "raw.yml"
        rules.write_text(RAW_RULES)
        os.environ["KBT_JMX_RULES"] = str(rules)
        cfg = LabConfig(
            brokers=2,
            base_port=args.base_port,
            lab_dir=Path(tmp) / "lab",
            scrape_interval_s=5,
            client_exporter_count=0,
        )
        lab = Lab(cfg, progress=lambda m: print(m, file=sys.stderr))
        state = lab.up()
        try:
            traffic(state.bootstrap_servers, ([b.log_dir for b in state.brokers], state.remote_storage_dir))
            text = requests.get(f"http://127.0.0.1:{state.brokers[0].jmx_port}/metrics", timeout=30).text
        finally:
            lab.down()
        # The lab's temporary directory appears in log-directory MBean names: keep the corpus
        # free of this machine's paths.
        text = text.replace(str(Path(tmp) / "lab"), "/var/lib/kbt/lab")
    names = sorted({m.group(1) for m in re.finditer(r'^raw\{bean="(.*)"\}', text, re.M)})
    kept = [n for n in names if keep(n)]
    header = (
        "# MBean attribute names of a Kafka 4.1.1 broker (kbt lab, tiered), one per line, as jmx_exporter\n"
        "# matches them: domain<key=value, ...><>Attribute. Captured by scripts/capture_jmx_corpus.py.\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(header + "\n".join(kept) + "\n")
    print(f"wrote {len(kept)} of {len(names)} names to {args.out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
