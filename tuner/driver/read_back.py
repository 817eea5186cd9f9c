"""Reading a run's topic back for delivery verification (acked_verify, range_verify, stress_verify)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any


def verify_consumer(bootstrap: str, security: Mapping[str, str] | None = None) -> Any:
    """A consumer in a group of its own that reads from the beginning and commits nothing
    (`security`: the target's librdkafka client security)."""
    from confluent_kafka import Consumer

    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            **(security or {}),
            "group.id": f"kbt-verify-{uuid.uuid4().hex[:12]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )


def consume(consumer: Any, batch: int) -> list[Any]:
    """Up to `batch` records within a second. End-of-partition events are skipped (the high
    watermark may still trail the last acked offset); any other error is raised."""
    from confluent_kafka import KafkaError, KafkaException

    records = []
    for msg in consumer.consume(num_messages=batch, timeout=1.0):
        err = msg.error()
        if err is None:
            records.append(msg)
        elif err.code() != KafkaError._PARTITION_EOF:
            raise KafkaException(err)
    return records
