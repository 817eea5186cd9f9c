"""Filebeat version lines: what changes in the memory queue between the Filebeat releases kbt models.

One home for the per-version facts the model, the checker and the profiles use. Read from libbeat
(elastic/beats `libbeat/publisher/queue/memqueue`: config.go defaults, broker.go normalisation,
runloop.go / eventloop.go hand-over; `libbeat/outputs/kafka`), not measured unless `measured` says so:

- **7.17** (the build kbt runs and measured): `queue.mem` defaults 4096 events, `flush.min_events`
  2048, `flush.timeout` 1s. The buffering event loop fills a buffer of `flush.min_events` events (or
  flushes it when `flush.timeout` passes since its first event) and hands the output pieces of up to
  `bulk_max_size` from it: a `bulk_max_size` below `flush.min_events` does not shorten the wait.
- **8.13+** (8.13 ... 9.x; elastic/beats #37795, #36990, #37757): defaults 3200 / 1600 / 10s.
  `flush.min_events` is only the most events one batch may carry; the output asks for
  `bulk_max_size` events and the queue answers once that many (capped by `flush.min_events`) are
  waiting, or when `flush.timeout` passes. So the batch *and* the wait are `bulk_max_size`-sized.
  With the shipped 10 s timeout, a pod writing fewer than 160 events/s holds each batch for up to
  10 s: a latency trap for low-rate sidecars.

Both lines keep the old switch: `flush.min_events` 0 or 1 means "hand over at once" (timeout 0,
batches of up to half the queue). 8.0-8.12 changed the queue in steps kbt does not model; they are
refused by name. Filebeat 9.0 disabled the deprecated `log` input: a 9.x profile uses `filestream`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tuner.core.numbers import cut_value

Fill = Literal["flush.min_events", "batch"]


@dataclass(frozen=True)
class FilebeatLine:
    name: str  # "7.17", "8.13+"
    first: tuple[int, int]  # the first minor version of the line
    last: tuple[int, int]  # the last minor version kbt knows of in the line
    queue_events: int
    queue_min_events: int
    queue_timeout: str  # a Go duration, as filebeat.yml spells it
    # What a batch request waits for before the flush timeout: the whole flush.min_events buffer
    # (7.17's buffering event loop) or just the batch it asks for (8.13+'s run loop).
    fill: Fill
    measured: str | None  # the real build kbt measured this line with, if any

    def covers(self, version: tuple[int, int]) -> bool:
        return self.first <= version <= self.last


LINES: tuple[FilebeatLine, ...] = (
    FilebeatLine("7.17", (7, 17), (7, 17), 4096, 2048, "1s", "flush.min_events", "7.17.29"),
    FilebeatLine("8.13+", (8, 13), (9, 99), 3200, 1600, "10s", "batch", None),
)
DEFAULT_FILEBEAT = "7.17.29"  # the build kbt installs and its profiles leave unstated
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")
LOG_INPUT_REMOVED = (9, 0)  # Filebeat 9.0 disabled the `log` input (filestream replaces it)


def parse_version(text: str) -> tuple[int, int, int]:
    """ "9.5" or "9.5.5" as (9, 5, 5) (patch 0 when left out); ValueError naming the form."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{cut_value(str(text))} is not a Filebeat version like 7.17.29 or 9.5")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def line_of(text: str) -> FilebeatLine:
    """The version line a Filebeat version belongs to; ValueError for a version kbt does not model."""
    major, minor, _ = parse_version(text)
    for line in LINES:
        if line.covers((major, minor)):
            return line
    known = ", ".join(
        f"{n.first[0]}.{n.first[1]}" + ("" if n.first == n.last else " and later") for n in LINES
    )
    raise ValueError(f"Filebeat {text.strip()} is not modelled (kbt models {known})")


def has_log_input(text: str) -> bool:
    """Whether this Filebeat version still runs the `log` input."""
    return parse_version(text)[:2] < LOG_INPUT_REMOVED
