"""Capture records for unit tests of `kbt capture`'s shaping (tuner.model.capture): one client row
as a broker's request log gives it, and the record around rows, topics and samples."""

from __future__ import annotations

from typing import Any

from tuner.store.capture import CaptureRecord

JAVA = "apache-kafka-java 4.1.1"
RDKAFKA = "confluent-kafka-python 2.16.1-rdkafka-2.16.0"


def client_row(
    client_id: str, software: str, broker: str, requests: int, topic: str, **kw: Any
) -> dict[str, Any]:
    """One client on one broker over the window: `requests` produce requests of 1000 B each to
    `topic` (one partition each, acks all, one connection) unless `kw` says otherwise."""
    record_bytes = kw.pop("record_bytes", requests * 1000)
    return {
        "client_id": client_id,
        "software": software,
        "broker": broker,
        "requests": requests,
        "record_bytes": record_bytes,
        "partitions": kw.pop("partitions", requests),
        "acks": kw.pop("acks", {"-1": requests}),
        "topic_bytes": {topic: record_bytes},
        "connections": kw.pop("connections", 1),
        **kw,
    }


def capture_record(
    clients: list[dict[str, Any]], topics: list[dict[str, Any]], samples: list[dict[str, Any]], **kw: Any
) -> CaptureRecord:
    """A 100 s capture of 3 brokers (`kw` overrides, e.g. brokers and broker_ids)."""
    fields: dict[str, Any] = {"start": 0.0, "end": 100.0, "bootstrap_servers": "127.0.0.1:1", "brokers": 3}
    return CaptureRecord(**{**fields, **kw}, topics=topics, clients=clients, samples=samples)
