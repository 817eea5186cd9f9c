"""KIP-405 tiered storage really works in the lab (LocalTieredStorage).

A topic with remote.storage.enable=true, 1 MiB segments and 1 s local retention gets its rolled
segments copied to the remote tier (RemoteCopyBytes > 0, files in the remote directory), the local
copies are deleted, and a consumer reading from offset 0 still receives every record, served from
the remote tier (RemoteFetchRequests > 0).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.integration.labhelp import wait_for
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus

pytestmark = pytest.mark.integration

RECORDS = 5000
PAYLOAD = 1000  # bytes: ~5 MB, so about four 1 MiB segments roll


def _local_base_offsets(partition_dir: Path) -> list[int]:
    return sorted(int(p.stem) for p in partition_dir.glob("*.log"))


def _topic_sum(prom: Prometheus, name: str, topic: str) -> float:
    return prom.value(f'sum({name}{{job="kafka-broker",topic="{topic}"}})') or 0.0


def test_segments_move_to_remote_tier_and_are_read_back(
    lab: LabState, admin: AdminClient, prometheus: Prometheus, make_topic
) -> None:
    if not lab.tiered:
        pytest.skip("the lab runs without tiered storage (kbt lab up --no-tiered)")
    topic = make_topic(
        partitions=1,
        replication=min(2, len(lab.brokers)),
        remote_storage_enable="true",
        segment_bytes=1048576,
        local_retention_ms=1000,
    )
    reader_before = prometheus.value('sum(kafka_log_remote_reader_fetch_total{job="kafka-broker"})') or 0.0

    producer = Producer({"bootstrap.servers": lab.bootstrap_servers, "acks": "all", "linger.ms": 20})
    for i in range(RECORDS):
        producer.produce(topic, f"{i:08d}".encode().ljust(PAYLOAD, b"x"))
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0

    leader = admin.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
    broker = next(b for b in lab.brokers if b.id == leader)
    local_dir = broker.log_dir / f"{topic}-0"

    def moved() -> bool:
        remote = list(lab.remote_storage_dir.rglob(f"{topic}-0-*/*.log"))
        local = _local_base_offsets(local_dir)
        return bool(remote) and bool(local) and local[0] > 0

    wait_for(moved, 120, "segments copied to the remote tier and deleted locally", every_s=1)
    remote_logs = list(lab.remote_storage_dir.rglob(f"{topic}-0-*/*.log"))
    assert len(remote_logs) >= 2, remote_logs
    assert not (local_dir / "00000000000000000000.log").exists()

    copied = wait_for(
        lambda: _topic_sum(prometheus, "kafka_server_remote_copy_bytes_total", topic),
        30,
        "RemoteCopyBytes > 0",
    )
    assert copied > 0
    assert _topic_sum(prometheus, "kafka_server_remote_copy_requests_total", topic) >= 1

    consumer = Consumer(
        {
            "bootstrap.servers": lab.bootstrap_servers,
            "group.id": f"tiered-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen: set[int] = set()
    first_offset = None
    deadline = time.monotonic() + 90
    while len(seen) < RECORDS and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None or msg.error() is not None:
            continue
        if first_offset is None:
            first_offset = msg.offset()
        seen.add(int(msg.value()[:8]))
    consumer.close()
    assert first_offset == 0
    assert seen == set(range(RECORDS)), f"missing {RECORDS - len(seen)} records"

    fetched = wait_for(
        lambda: _topic_sum(prometheus, "kafka_server_remote_fetch_requests_total", topic),
        30,
        "RemoteFetchRequests > 0",
    )
    assert fetched > 0
    assert _topic_sum(prometheus, "kafka_server_remote_fetch_bytes_total", topic) > 0
    reader_after = prometheus.value('sum(kafka_log_remote_reader_fetch_total{job="kafka-broker"})') or 0.0
    assert reader_after > reader_before
