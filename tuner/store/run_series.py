"""RunSeries: the optional time-series artifact beside a run record, schema-versioned.

A run record holds window aggregates only; reports also want the run over time (requests/s and idle
ratios per broker, offered vs acked). The runner writes them, fetched from Prometheus right after
the record, to `<results>/<sweep>/series/<record file name>`: beside the record yet outside the
`*.json` files the results store reads as records. Missing series are fine (older records, no
Prometheus): readers get None. `kbt report --prometheus/--lab-dir` can fill them in later while the
lab's Prometheus still holds the data.

Compatibility: a reader accepts exactly SERIES_SCHEMA_VERSION; adding an optional field keeps the
version, anything else bumps it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError

from tuner.core.frozen import Frozen
from tuner.core.units import Count, Entries, Epoch, Figure, Seconds, Text
from tuner.core.writes import atomic_write, json_text
from tuner.measure.prometheus import PrometheusError, RangeSeries
from tuner.store.document import field_problem, read_document, validated

SERIES_SCHEMA_VERSION = 1
SERIES_KIND: Literal["run-series"] = "run-series"
SERIES_DIR = "series"


class SeriesLine(Frozen):
    """One series of one catalog query: its labels (broker, run, ...) and (epoch s, value) points."""

    query: Text = Field(description="Catalog query name, e.g. PRODUCE_REQUESTS_RATE.")
    labels: Annotated[dict[Text, Text], Entries] = Field(default_factory=dict)
    points: Annotated[list[tuple[Figure, Figure]], Entries] = Field(default_factory=list)


class RunSeries(Frozen):
    schema_version: Count = SERIES_SCHEMA_VERSION
    kind: Literal["run-series"] = SERIES_KIND
    run_id: Text
    start: Epoch = Field(description="Epoch s of the first evaluation.")
    end: Epoch
    step_s: Seconds
    captured_at: Epoch
    queries: Annotated[dict[Text, Text], Entries] = Field(
        default_factory=dict, description="Catalog name -> PromQL evaluated."
    )
    lines: Annotated[list[SeriesLine], Entries] = Field(default_factory=list)
    problems: Annotated[list[Text], Entries] = Field(
        default_factory=list, description="Queries that failed, and why."
    )

    def of(self, query: str) -> list[SeriesLine]:
        return [line for line in self.lines if line.query == query]

    @classmethod
    def from_ranges(
        cls,
        run_id: str,
        start: float,
        end: float,
        step_s: float,
        captured_at: float,
        queries: dict[str, str],
        ranges: dict[str, list[RangeSeries]],
        problems: list[str] | None = None,
    ) -> RunSeries:
        lines = []
        for name, series in ranges.items():
            for s in series:
                points = [p for p in s.points if p[1] == p[1]]  # no NaN
                try:
                    lines.append(SeriesLine(query=name, labels=s.labels, points=points))
                except ValidationError as exc:  # a Prometheus answering 1e308: PrometheusError, one line
                    raise PrometheusError(
                        f"Prometheus answered {name} with a point kbt cannot keep: {field_problem(exc)}"
                    ) from None
        return cls(
            run_id=run_id, start=start, end=end, step_s=step_s, captured_at=captured_at, queries=queries,
            lines=lines, problems=problems or [],
        )  # fmt: skip


def series_path(record_path: Path) -> Path:
    return record_path.parent / SERIES_DIR / record_path.name


def write_run_series(record_path: Path, series: RunSeries) -> Path:
    """Write atomically beside the record, replacing an older capture of the same run and nothing
    else: BadInput, and the file left as it is, when something kbt cannot read as a run series is
    there (`report --prometheus` fills in a run whose series is unreadable: a link to a user's file
    there was written through)."""
    target = series_path(record_path)
    load_run_series(record_path)
    return atomic_write(target, json_text(series.model_dump(mode="json"), indent=None), "run series")


def load_run_series(record_path: Path) -> RunSeries | None:
    """The series beside a record, None when there are none; BadInput when the file is unreadable."""
    path = series_path(record_path)
    if not os.path.lexists(path):  # a FIFO, a directory or a link loop there is named, not passed over
        return None
    data = read_document(path, "run series", SERIES_KIND, "a run series file", (SERIES_SCHEMA_VERSION,))
    return validated(RunSeries, data, path, "run series")
