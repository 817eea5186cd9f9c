"""`kbt compare`: the same cluster over two windows of equal length, before and after a change
(a rollout of rendered files). Each window is read as `kbt diagnose` reads it
(tuner.runner.live_diagnosis), plus the produce p99 per broker and, from the brokers' request logs,
each client group's requests."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.core.errors import BadInput, ExitStatus, KbtError

if TYPE_CHECKING:
    from tuner.measure.prometheus import Prometheus
    from tuner.model.compare import Comparison, Figures
    from tuner.target.base import TargetSource


def compare_windows(
    prometheus_url: str | None,
    source: TargetSource | None,
    before_end: float,
    after_end: float,
    window_s: float,
    step_s: float,
    request_logs: list[Path],
) -> tuple[Comparison, list[str]]:
    """The comparison and the notes of both diagnoses (a series the dialect lacks, once)."""
    from tuner.measure.prometheus import PrometheusError
    from tuner.model.compare import compare
    from tuner.runner.diagnose_inputs import load_thresholds
    from tuner.runner.live_diagnosis import diagnose_live, window_prometheus

    if after_end - before_end < window_s:
        raise BadInput("--after must end at least one --window after --before (the windows may not overlap)")
    limits = load_thresholds(None)
    before = diagnose_live(prometheus_url, source, window_s, step_s, limits, end_s=before_end)
    after = diagnose_live(prometheus_url, source, window_s, step_s, limits, end_s=after_end)
    try:
        prom = window_prometheus(prometheus_url, source, (before_end - window_s, after_end))
        p99_before, p99_after = (_p99(prom, window_s, step_s, end) for end in (before_end, after_end))
    except PrometheusError as exc:
        raise KbtError(exc.message, ExitStatus.UNREACHABLE) from None
    groups_before, groups_after = (
        _groups(request_logs, end - window_s, end) for end in (before_end, after_end)
    )
    notes = list(dict.fromkeys(before.notes + after.notes))
    result = compare(
        before.diagnosis.snapshot,
        after.diagnosis.snapshot,
        p99_before,
        p99_after,
        groups_before,
        groups_after,
    )
    return result, notes


def _p99(prom: Prometheus, window_s: float, step_s: float, end: float) -> dict[str, float]:
    """Produce TotalTimeMs p99 per broker, averaged over the window ({} when the dialect lacks it)."""
    from tuner.core.units import Millis
    from tuner.measure.broker_window import window_query
    from tuner.measure.dialects import MissingSeries
    from tuner.runner.live_diagnosis import measured_by_broker

    try:
        samples = prom.instant(window_query("PRODUCE_TOTAL_P99_MS", "avg", window_s, step_s), end)
    except MissingSeries:
        return {}
    p99 = {s.labels["broker"]: s.value for s in samples if "broker" in s.labels and math.isfinite(s.value)}
    return measured_by_broker(prom.shown, "produce_total_p99_ms", Millis, p99)


def _groups(paths: list[Path], start: float, end: float) -> dict[str, Figures]:
    from tuner.measure.capture_log import read_produce_traffic
    from tuner.model.compare import group_figures
    from tuner.store.capture import ClientTraffic

    if not paths:
        return {}
    rows = [ClientTraffic.model_validate(r) for r in read_produce_traffic(paths, start, end).rows]
    return group_figures(rows, end - start)
