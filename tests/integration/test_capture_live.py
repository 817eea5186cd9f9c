"""`kbt capture` and `kbt diagnose` on the shared lab, run as the light install runs them: a PATH
holding only the virtual environment's scripts, so no java, go or Kafka tool can be found.

Two groups of real librdkafka producers the capture is not told about: `capt-keyed-1..2` (keyed
records of 300 B, acks all, 80 records/s each) and `capt-logs` (keyless records of 900 B, acks 1,
40 records/s). The capture must find both groups with their producer counts, rates within 10% of
what the brokers acknowledged to them in the window, their keys and acks, and write sweeps that load; diagnose
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
from tuner.core.kafka_clients import Connection, new_producer
from tuner.lab import LabState
from tuner.lab.request_log import set_request_log
from tuner.spec.loader import load_sweep

pytestmark = [pytest.mark.integration]

WINDOW_S = 15
RUN_S = WINDOW_S + 25.0  # the capture's start-up and its end offsets fall inside the load


def _produce(lab: LabState, topic: str, client_id: str, rate: float, size: int, keyed: bool, acks: str,
             stop: float, acked: list[tuple[float, str]]) -> None:  # fmt: skip
    """`rate` records a second until `stop`; each record's acknowledgement time kept in `acked`
    (what the brokers appended, the figure the capture's end offsets count)."""
    producer = new_producer(
        Connection(lab.bootstrap_servers), {"client.id": client_id, "acks": acks, "linger.ms": 5}
    )

    def delivered(err: object, _msg: object) -> None:
        if err is None:
            acked.append((time.time(), client_id))

    rng, start, n = random.Random(client_id), time.time(), 0
    while (now := time.time()) < stop:
        while n < (now - start) * rate:
            key = str(rng.randrange(40)).encode() if keyed else None
            producer.produce(topic, b"v" * size, key=key, on_delivery=delivered)
            n += 1
        producer.poll(0.005)
    producer.flush(30)


def _light_env(tmp_path: Path) -> dict[str, str]:
    """The environment with PATH cut to the venv's scripts (checked to hold no java or go)."""
    bin_dir = Path(sys.executable).parent
    for tool in ("java", "go", "kafka-configs.sh"):
        assert not (bin_dir / tool).exists()
    return {**os.environ, "PATH": str(bin_dir), "HOME": str(tmp_path)}


def test_capture_finds_the_groups_and_diagnose_needs_no_java(
    lab: LabState, make_topic: TopicFactory, tmp_path: Path
) -> None:
    keyed_topic = make_topic(partitions=6, replication=3)
    logs_topic = make_topic(partitions=3, replication=3)
    brokers = [b.id for b in lab.brokers]
    set_request_log(lab.bootstrap_servers, brokers, True)
    acked: list[tuple[float, str]] = []
    stop = time.time() + RUN_S
    loads = [
        ("capt-keyed-1", keyed_topic, 80.0, 300, True, "all"),
        ("capt-keyed-2", keyed_topic, 80.0, 300, True, "all"),
        ("capt-logs", logs_topic, 40.0, 900, False, "1"),
    ]
    threads = [
        threading.Thread(target=_produce, args=(lab, topic, cid, rate, size, keyed, acks, stop, acked))
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
             *logs, "--out", str(out), "--json", "-"],
            capture_output=True, text=True, timeout=180, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
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
    start, end = record["record"]["start"], record["record"]["end"]
    groups = {g["name"]: g for g in json.loads(proc.stdout)["plan"]["groups"]}
    keyed, plain = groups["capt-keyed-confluent-kafka-python"], groups["capt-logs-confluent-kafka-python"]
    for group, prefix in ((keyed, "capt-keyed"), (plain, "capt-logs")):
        # what the brokers acknowledged in the window (the acknowledgement a moment after the append)
        got = sum(1 for at, cid in acked if start <= at <= end and cid.startswith(prefix)) / (end - start)
        print(f"{group['name']}: captured {group['records_per_s']:.1f} records/s, acknowledged {got:.1f}")
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
