"""Write each run record's time series beside it (tuner.store.run_series), fetched from the lab's
Prometheus right after the record: a ResultsStore that does both. Optional by design: when
Prometheus cannot answer, the record stands alone and the problem goes to stderr.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tuner.core.errors import KbtError
from tuner.measure.prometheus import Prometheus
from tuner.measure.series_fetch import fetch_run_series
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore
from tuner.store.run_series import RunSeries, write_run_series


def save_series(prom: Prometheus, record: RunRecord, record_path: Path, scrape_s: float) -> str | None:
    """Capture and write; the problem as one line instead of an exception. The span captured: a
    stress stage's window, else the run from start to drain; padded by two scrapes before (rates need
    history) and one after (the last scrape lands late)."""
    if record.stress is not None:
        start, end = record.stress.start, record.stress.end
    else:
        start, end = record.client.started_at, record.client.finished_at
    start, end = start - 2 * scrape_s, min(end + scrape_s, time.time())
    problems: list[str] = []
    try:
        step, queries, ranges = fetch_run_series(
            prom, record.run_id, start, end, scrape_s,
            on_error=lambda name, exc: problems.append(f"{name}: {exc}"),
        )  # fmt: skip
        series = RunSeries.from_ranges(
            record.run_id, start, end, step, time.time(), queries, ranges, problems
        )
        write_run_series(record_path, series)
    except KbtError as exc:
        return f"{record.run_id}: no time series saved: {exc.message}"
    return None


class SeriesStore(ResultsStore):
    """A ResultsStore that also saves each written record's time series from Prometheus."""

    def __init__(self, root: Path, prometheus: Prometheus | None, scrape_interval_s: float) -> None:
        """`prometheus`: the target's, as its broker measurement queries it (a target file's with
        its auth and metric dialect), so the saved series are the ones the record's figures read."""
        super().__init__(root)
        self.prometheus = prometheus
        self.scrape_interval_s = scrape_interval_s

    def write(self, record: RunRecord) -> Path:
        path = super().write(record)
        if self.prometheus is not None:
            problem = save_series(self.prometheus, record, path, self.scrape_interval_s)
            if problem:
                sys.stderr.write(f"kbt: warning: {problem}\n")
        return path
