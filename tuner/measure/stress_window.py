"""Stress-test measurement beyond the broker window: the remote tier traffic of a run's topics.

Series from the shared catalog (kafka_server_remote_*{topic}); each rate is taken over exactly
the asked window, evaluated at its end.
"""

from __future__ import annotations

import math

from tuner.measure.broker_window import PrometheusReader, duration, topic_selector
from tuner.measure.catalog import series

REMOTE_FETCH_REQUESTS = series("kafka_server_remote_fetch_requests_total").name
REMOTE_FETCH_BYTES = series("kafka_server_remote_fetch_bytes_total").name
REMOTE_COPY_BYTES = series("kafka_server_remote_copy_bytes_total").name


def topic_rate(
    prom: PrometheusReader, name: str, topics: list[str], start: float, end: float
) -> float | None:
    """Per-second rate of a per-topic counter summed over the run's topics and brokers."""
    if end <= start:
        return None
    expr = f"sum(rate({topic_selector(topics, name)}[{duration(end - start)}]))"
    samples = prom.instant(expr, end)
    values = [s.value for s in samples if math.isfinite(s.value)]
    return sum(values) if values else None
