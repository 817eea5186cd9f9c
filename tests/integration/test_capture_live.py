"""`kbt capture` and `kbt diagnose` on the shared lab, run as the light install runs them: a PATH
holding only the virtual environment's scripts, so no java, go or Kafka tool can be found.

Two groups of real librdkafka producers the capture is not told about: `capt-keyed-1..2` (keyed
records of 300 B, acks all, 80 records/s each) and `capt-logs` (keyless records of 900 B, acks 1,
40 records/s). The capture must find both groups with their producer counts, rates within 10% of
what the brokers appended for them in the window (their topics keep LogAppendTime: each record's
timestamp is the broker's, so the truth does not move with when a busy client saw its
acknowledgements), their keys and acks, and write sweeps that load; diagnose
must read the brokers with nothing from outside the venv. Its load runs 40 s; the test took 145 s
on the 2-core machine at load average 20-35 (producers flushing requests the busy lab timed out)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.integration.conftest import TopicFactory
from tuner.core.kafka_clients import Connection, new_consumer, new_producer
from tuner.lab import LabState
from tuner.lab.request_log import set_request_log
from tuner.spec.loader import load_sweep

pytestmark = [pytest.mark.integration]

WINDOW_S = 15
SILENT_PROMETHEUS = "http://127.0.0.1:1"  # nothing listens on port 1 of loopback
RUN_S = WINDOW_S + 25.0  # the capture's start-up and its end offsets fall inside the load


def _produce(lab: LabState, topic: str, client_id: str, rate: float, size: int, keyed: bool, acks: str,
             stop: float) -> None:  # fmt: skip
    """`rate` records a second until `stop`."""
    producer = new_producer(
        Connection(lab.bootstrap_servers), {"client.id": client_id, "acks": acks, "linger.ms": 5}
    )
    rng, start, n = random.Random(client_id), time.time(), 0
    while (now := time.time()) < stop:
        while n < (now - start) * rate:
            key = str(rng.randrange(40)).encode() if keyed else None
            producer.produce(topic, b"v" * size, key=key)
            n += 1
        producer.poll(0.005)
    producer.flush(30)


def _appended(lab: LabState, topic: str, start: float, end: float) -> float:
    """Records a second the brokers appended to `topic` in [start, end], by their append times."""
    from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

    consumer = new_consumer(
        Connection(lab.bootstrap_servers),
        {"group.id": f"truth-{topic}", "enable.auto.commit": False, "enable.partition.eof": True},
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        left, count, deadline = set(partitions), 0, time.time() + 60
        while left and time.time() < deadline:
            for msg in consumer.consume(1000, timeout=1.0):
                if (err := msg.error()) is not None:
                    assert err.code() == KafkaError._PARTITION_EOF, err
                    left.discard(msg.partition())  # the end of a partition
                    continue
                kind, ms = msg.timestamp()
                assert kind == 2, "the topic keeps LogAppendTime"  # TIMESTAMP_LOG_APPEND_TIME
                count += start * 1000 <= ms <= end * 1000
        assert not left, f"{topic}: not read to its end"
    finally:
        consumer.close()
    return count / (end - start)


def _light_env(tmp_path: Path) -> dict[str, str]:
    """The environment with PATH cut to the venv's scripts (checked to hold no java or go)."""
    bin_dir = Path(sys.executable).parent
    for tool in ("java", "go", "kafka-configs.sh"):
        assert not (bin_dir / tool).exists()
    return {**os.environ, "PATH": str(bin_dir), "HOME": str(tmp_path)}


def test_capture_finds_the_groups_and_diagnose_needs_no_java(
    lab: LabState, make_topic: TopicFactory, tmp_path: Path
) -> None:
    keyed_topic = make_topic(partitions=6, replication=3, message_timestamp_type="LogAppendTime")
    logs_topic = make_topic(partitions=3, replication=3, message_timestamp_type="LogAppendTime")
    brokers = [b.id for b in lab.brokers]
    set_request_log(lab.bootstrap_servers, brokers, True)
    stop = time.time() + RUN_S
    loads = [
        ("capt-keyed-1", keyed_topic, 80.0, 300, True, "all"),
        ("capt-keyed-2", keyed_topic, 80.0, 300, True, "all"),
        ("capt-logs", logs_topic, 40.0, 900, False, "1"),
    ]
    threads = [
        threading.Thread(target=_produce, args=(lab, topic, cid, rate, size, keyed, acks, stop))
        for cid, topic, rate, size, keyed, acks in loads
    ]
    env = _light_env(tmp_path)
    try:
        for t in threads:
            t.start()
        time.sleep(5)
        logs = [arg for b in lab.brokers for arg in ("--request-log", str(b.log_file))]
        out = tmp_path / "capture"
        kbt = str(Path(sys.executable).parent / "kbt")
        proc = subprocess.run(
            [kbt, "capture", "--bootstrap-server", lab.bootstrap_servers, "--window", f"{WINDOW_S}s",
             "--prometheus", SILENT_PROMETHEUS, *logs, "--out", str(out), "--json", "-"],
            capture_output=True, text=True, timeout=180, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        # a Prometheus that does not answer is said before the window, and the capture goes on
        silent = proc.stderr.find(f"kbt: note: Prometheus at {SILENT_PROMETHEUS} is unreachable")
        assert 0 <= silent < proc.stderr.find("window over: reading record samples"), proc.stderr
        diagnosis = subprocess.run(
            [kbt, "diagnose", "--prometheus", lab.prometheus_url, "--window", "30s", "--step", "5s",
             "--json", "-"],
            capture_output=True, text=True, timeout=180, env=env,
        )  # fmt: skip
    finally:
        for t in threads:
            t.join(timeout=60)
        set_request_log(lab.bootstrap_servers, brokers, False)
    assert diagnosis.returncode in (0, 10, 11), diagnosis.stderr
    assert len(json.loads(diagnosis.stdout)["snapshot"]["brokers"]) == len(lab.brokers)
    record = json.loads((out / "capture.json").read_text())
    assert any(n.startswith("the brokers' figures were not read") for n in record["record"]["notes"])
    start, end = record["record"]["start"], record["record"]["end"]
    groups = {g["name"]: g for g in json.loads(proc.stdout)["plan"]["groups"]}
    keyed, plain = groups["capt-keyed-confluent-kafka-python"], groups["capt-logs-confluent-kafka-python"]
    for group, topic in ((keyed, keyed_topic), (plain, logs_topic)):
        got = _appended(lab, topic, start, end)  # what the brokers appended in the window
        print(f"{group['name']}: captured {group['records_per_s']:.1f} records/s, appended {got:.1f}")
        assert group["records_per_s"] == pytest.approx(got, rel=0.10)
        loaded = load_sweep(out / group["name"] / "sweep.yaml")
        # the source's leaders, on a lab of the same brokers 1..3: the same ids
        facts = next(t for t in record["record"]["topics"] if t["name"] in group["topics"])
        assert loaded.spec.workload.topics[0].leaders == facts["leaders"]
        assert sum(facts["partition_records"]) == facts["records"]
    assert (keyed["producers"], keyed["acks"], keyed["kind"]) == (2, "all", "librdkafka")
    # 40 keys over 6 partitions, each partition's newest 200 records read while they are still written
    # to (a partition reports its end again each time it catches up): every partition read, all keys
    sample = next(s for s in record["record"]["samples"] if s["topic"] in keyed["topics"])
    assert sample["partitions_read"] == 6
    assert keyed["key_cardinality"] == 40
    assert keyed["record_bytes"] == pytest.approx(301, abs=2)  # 300 B values, 1-2 B keys
    assert (plain["producers"], plain["acks"], plain["key_cardinality"]) == (1, "1", None)
    assert plain["record_bytes"] == pytest.approx(900, abs=1)
