"""A live cluster's diagnosis from its Prometheus: the snapshot of a window, classified. What
`kbt diagnose` shows and what `kbt forecast --target` starts from; `kbt report --target` asks the
same Prometheus. The CLI prints the diagnosis and the notes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuner.core.errors import ExitStatus, KbtError

if TYPE_CHECKING:
    from tuner.measure.prometheus import Prometheus
    from tuner.model.cost import BrokerCostModel
    from tuner.model.diagnosis import Diagnosis
    from tuner.model.diagnosis_config import DiagnoseThresholds
    from tuner.target import Target, TargetSource

# Every query of one diagnose together: a slow or trickling Prometheus cannot hold it longer.
DEADLINE_S = 60.0
TARGET_TIMEOUT_S = 30.0
LIVE_TIMEOUT_S = 4.0  # a live figure's queries answer within its 5 s step, or that reading shows "-"
MIN_STEP_S = 15.0  # a target diagnosed for a forecast: idle averaged over at least this step
TOP_TOPICS = 5


@dataclass(frozen=True)
class LiveDiagnosis:
    diagnosis: Diagnosis
    # One line per series the target's dialect lacks (and how the dialect was detected): the
    # findings that need it were not made, never guessed.
    notes: list[str]


def target_prometheus(source: TargetSource | None) -> Prometheus:
    """The Prometheus of a target (its auth, selectors and metric dialect resolved), for one
    diagnosis: every call within DEADLINE_S."""
    from tuner.target import resolve_target

    return _prometheus_of(resolve_target(None, source))


def live_prometheus(source: TargetSource) -> Prometheus:
    """A target's Prometheus for live figures during a run: each reading's queries within
    LIVE_TIMEOUT_S, and no deadline over the run."""
    from tuner.measure.prometheus import Prometheus
    from tuner.target import resolve_target

    return Prometheus.for_target(resolve_target(None, source), timeout_s=LIVE_TIMEOUT_S)


def diagnose_live(
    prometheus_url: str | None,
    source: TargetSource | None,
    window_s: float,
    step_s: float,
    thresholds: DiagnoseThresholds,
    cost_model: BrokerCostModel | None = None,
    end_s: float | None = None,
    top_topics: int = TOP_TOPICS,
) -> LiveDiagnosis:
    """Diagnose the window ending at `end_s` (default now) from a bare Prometheus URL (no target) or
    the target's Prometheus. KbtError UNREACHABLE when Prometheus cannot answer."""
    from tuner.measure.prometheus import Prometheus, PrometheusError

    try:
        prom = (
            Prometheus(prometheus_url, deadline_s=DEADLINE_S)
            if prometheus_url is not None and source is None
            else target_prometheus(source)
        )
        return _classified(prom, window_s, step_s, thresholds, cost_model, end_s, top_topics)
    except PrometheusError as exc:
        raise KbtError(exc.message, ExitStatus.UNREACHABLE) from None


def target_diagnosis(source: TargetSource, window_s: float) -> LiveDiagnosis:
    """The target's brokers now, as `kbt diagnose --target FILE --window W` sees them (default
    thresholds; the step follows the target's scrape interval)."""
    from tuner.measure.prometheus import PrometheusError
    from tuner.runner.diagnose_inputs import load_thresholds
    from tuner.target import resolve_target

    target = resolve_target(None, source)
    step_s = min(window_s, max(MIN_STEP_S, target.scrape_interval_s))
    try:
        prom = _prometheus_of(target)
        return _classified(prom, window_s, step_s, load_thresholds(None), None, None, TOP_TOPICS)
    except PrometheusError as exc:
        raise KbtError(exc.message, ExitStatus.UNREACHABLE) from None


def _prometheus_of(target: Target) -> Prometheus:
    from tuner.measure.prometheus import Prometheus

    return Prometheus.for_target(target, timeout_s=TARGET_TIMEOUT_S, deadline_s=DEADLINE_S)


def _classified(
    prom: Prometheus,
    window_s: float,
    step_s: float,
    thresholds: DiagnoseThresholds,
    cost_model: BrokerCostModel | None,
    end_s: float | None,
    top_topics: int,
) -> LiveDiagnosis:
    from tuner.measure.cluster_snapshot import take_snapshot
    from tuner.model.diagnosis import diagnose as classify
    from tuner.store.snapshot import ClusterSnapshot

    snap = ClusterSnapshot.model_validate(
        take_snapshot(prom, window_s=window_s, step_s=step_s, end=end_s, top_topics=top_topics)
    )
    return LiveDiagnosis(classify(snap, thresholds, cost_model), unavailable_notes(prom))


def unavailable_notes(prom: Prometheus) -> list[str]:
    """How the target's dialect was detected (when it is not kbt's), and each series it lacks."""
    translator = prom.translator
    dialect = translator.dialect.name if translator is not None else "kbt"
    notes = []
    if translator is not None and translator.detection is not None and not translator.identity:
        notes.append(translator.detection.statement())
    for series, reason in sorted(prom.unavailable.items()):
        notes.append(f"figures from {series} cannot be made on the {dialect} dialect: {reason}")
    return notes
