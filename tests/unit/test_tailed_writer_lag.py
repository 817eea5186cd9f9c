"""The tailed pods' log writer measures how far behind its schedule it wrote (the send lag of real
Filebeat and collector runs), and the run's record carries it, so the verdict's send-lag limit
judges those runs as it judges the librdkafka and Java engines'."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tuner.driver.tailed.pods import start_writers, wait_writers

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority


@dataclass(frozen=True)
class _Pod:
    index: int
    log_file: Path


def _run(
    tmp_path: Path, start_in_s: float, duration_s: float, rate: float
) -> tuple[dict[int, int], float, int]:
    pods = [_Pod(i, tmp_path / f"pod-{i}.log") for i in range(2)]
    writers = start_writers(pods, 1, rate, time.time() + start_in_s, duration_s, ["payload"], tmp_path)
    written, lag = wait_writers(writers, duration_s + 30)
    hist = lag.histogram()
    return written, hist.get_value_at_percentile(99) / 1000, int(hist.get_total_count())


def test_a_writer_on_schedule_reports_a_small_lag_for_every_line(tmp_path: Path) -> None:
    written, p99_ms, counted = _run(tmp_path, start_in_s=1.0, duration_s=1.0, rate=200)
    assert written == {0: 200, 1: 200}
    assert counted == 400  # every line is weighed once
    assert p99_ms < 1000  # on schedule: well under the time it was started ahead


def test_a_writer_that_starts_behind_its_schedule_reports_that_lag(tmp_path: Path) -> None:
    # The schedule began 2 s before the writer could write: the first write carries ~2 s of lag
    # for the ~400 lines already due in each file, the rest are on time.
    written, p99_ms, counted = _run(tmp_path, start_in_s=-2.0, duration_s=3.0, rate=200)
    assert written == {0: 600, 1: 600}
    assert counted == 1200
    assert p99_ms >= 1500
