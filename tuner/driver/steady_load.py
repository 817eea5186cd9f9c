"""A steady, small open-loop load from one producer, for lab benchmarks and tests that need traffic
but measure something else (the client sensors, the demo's before/after):

    produce_steadily(new_producer(conn), topic, b"x" * 200, 150, time.time() + 20)
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from confluent_kafka import Producer

STEP_S = 0.005  # between bursts: librdkafka's callbacks are served, the schedule kept
FLUSH_S = 15.0


def produce_steadily(
    producer: Producer,
    topic: str,
    payload: bytes,
    rate_per_s: float,
    stop_at: float,
    flush_s: float = FLUSH_S,
) -> None:
    """Hand `producer` `rate_per_s` records a second until the epoch second `stop_at`, then flush."""
    sent, start = 0, time.time()
    while (now := time.time()) < stop_at:
        while sent < (now - start) * rate_per_s:
            producer.produce(topic, payload)
            sent += 1
        producer.poll(STEP_S)
    producer.flush(flush_s)
