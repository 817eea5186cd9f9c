"""Build a SweepRunner for a target (the lab by default): its cluster, its Prometheus, the engines."""

from __future__ import annotations

from pathlib import Path

from tuner.measure.prometheus import QUERY_TIMEOUT_S, Prometheus
from tuner.runner.lifecycle import Engine, Measurer, Observer
from tuner.runner.series_store import SeriesStore
from tuner.runner.sweep import SweepRunner
from tuner.target.base import Target, TargetSource
from tuner.target.registry import resolve_target


def measurer_of(target: Target) -> Measurer | None:
    """The broker measurement through the target's Prometheus (None: the target has none)."""
    if not target.prometheus_url:
        return None
    lab = target.lab
    # a target file's Prometheus with its auth and metric dialect; the lab's is read plain
    if target.translated_prometheus:
        prometheus = Prometheus.for_target(target, QUERY_TIMEOUT_S)
    else:
        prometheus = Prometheus(target.prometheus_url, timeout_s=QUERY_TIMEOUT_S)
    return Measurer(
        prometheus,
        target.scrape_interval_s,
        lab.request_queue_cap if lab is not None else None,
        lab.local_broker_pids if lab is not None else (),
    )


def sweep_runner(
    lab_dir: Path | None,
    results: Path,
    observer: Observer | None = None,
    target_file: TargetSource | None = None,
) -> SweepRunner:
    target = resolve_target(lab_dir, target_file)
    measurer = measurer_of(target)
    return SweepRunner(
        target=target,
        engine=Engine(),
        measurer=measurer,
        store=SeriesStore(results, measurer.prometheus if measurer else None, target.scrape_interval_s),
        observer=observer or Observer(),
    )
