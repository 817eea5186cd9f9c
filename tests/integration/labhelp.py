"""Helpers for integration tests on the real lab: bounded waits (no timing is asserted)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from confluent_kafka.admin import AdminClient


def wait_for_leaders(admin: AdminClient, topic: str, partitions: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        ready = meta is not None and meta.error is None and len(meta.partitions) == partitions
        if ready and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        time.sleep(0.2)
    raise AssertionError(f"topic {topic} has no leaders after {timeout_s}s")


def wait_for(predicate: Callable[[], Any], timeout_s: float, what: str, every_s: float = 0.5) -> Any:
    """Poll until `predicate()` is truthy (bounded; no timing is asserted)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(every_s)
