"""What the brokers showed over one judged stretch of a stress stage: their window (idle ratios,
request queue, requests) and the remote tier's fetch and copy rates, whole and by halves (lagging
readers reach the tier in the second half)."""

from __future__ import annotations

import time

from tuner.measure.broker_window import (
    REMOTE_COPY_BYTES,
    REMOTE_FETCH_BYTES,
    REMOTE_FETCH_REQUESTS,
    measure_window,
    topic_rate,
)
from tuner.measure.prometheus import Prometheus
from tuner.runner.stress.records import StageMeasure
from tuner.store.stress_section import RemoteTier


def measure_stage(
    prometheus: Prometheus,
    topics: list[str],
    settled: float,
    end: float,
    mid: float,
    step_s: float,
    origin: float,
) -> StageMeasure:
    """The stage from `settled` (past its settle time) to `end`, halves split at `mid`; `origin`:
    when the load that this window belongs to started."""
    return StageMeasure(
        broker=measure_window(prometheus, settled, end, topics, step_s, time.time(), origin),
        remote=remote_tier(prometheus, topics, settled, end, mid),
    )


def remote_tier(
    prometheus: Prometheus, topics: list[str], start: float, end: float, mid: float
) -> RemoteTier:
    """The remote tier's fetch and copy rates for `topics` over [start, end], fetches by halves."""
    return RemoteTier(
        fetch_requests_per_s=topic_rate(prometheus, REMOTE_FETCH_REQUESTS, topics, start, end),
        fetch_bytes_per_s=topic_rate(prometheus, REMOTE_FETCH_BYTES, topics, start, end),
        copy_bytes_per_s=topic_rate(prometheus, REMOTE_COPY_BYTES, topics, start, end),
        first_half_fetch_requests_per_s=topic_rate(prometheus, REMOTE_FETCH_REQUESTS, topics, start, mid),
        second_half_fetch_requests_per_s=topic_rate(prometheus, REMOTE_FETCH_REQUESTS, topics, mid, end),
    )
