"""Capture the environment a run happened in (versions, cores, brokers) for its record."""

from __future__ import annotations

import os
import platform
import sys

from tuner import __version__
from tuner.store.record import Environment


def capture_environment(
    broker_count: int | None = None,
    kafka_version: str | None = None,
    scrape_interval_s: float | None = None,
) -> Environment:
    import confluent_kafka

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return Environment(
        kbt_version=__version__,
        python=platform.python_version(),
        platform=f"{sys.platform}-{platform.machine()}",
        cpu_count=cores,
        confluent_kafka=confluent_kafka.version()[0],
        librdkafka=confluent_kafka.libversion()[0],
        kafka_version=kafka_version,
        broker_count=broker_count,
        prometheus_scrape_interval_s=scrape_interval_s,
    )
