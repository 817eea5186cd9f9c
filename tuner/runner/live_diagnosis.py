"""A live cluster's diagnosis from its Prometheus: the snapshot of a window, classified. What
`kbt diagnose` shows and what `kbt forecast --target` starts from; `kbt report --target` asks the
same Prometheus. The CLI prints the diagnosis and the notes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tuner.core.errors import ExitStatus, KbtError

if TYPE_CHECKING:
    from tuner.measure.prometheus import Prometheus, Window
    from tuner.model.cost import BrokerCostModel
    from tuner.model.diagnosis import Diagnosis
    from tuner.model.diagnosis_config import DiagnoseThresholds
    from tuner.store.snapshot import ClusterSnapshot
    from tuner.target.base import Target, TargetSource

# Every query of one diagnose together: a slow or trickling Prometheus cannot hold it longer.
DEADLINE_S = 60.0
LIVE_TIMEOUT_S = 4.0  # a live figure's queries answer within its 5 s step, or that reading shows "-"
MIN_STEP_S = 15.0  # a target diagnosed for a forecast: idle averaged over at least this step
TOP_TOPICS = 5


@dataclass(frozen=True)
class LiveDiagnosis:
    diagnosis: Diagnosis
    # One line per series the target's dialect lacks (and how the dialect was detected): the
    # findings that need it were not made, never guessed.
    notes: list[str]


def window_prometheus(
    prometheus_url: str | None, source: TargetSource | None, window: Window | None
) -> Prometheus:
    """A bare --prometheus URL's Prometheus (no target), else the target's (its auth, selectors and
    metric dialect resolved, from the series of `window` when given, else of now), for one
    diagnosis: every call within DEADLINE_S."""
    from tuner.measure.prometheus import Prometheus
    from tuner.target.registry import resolve_target

    if prometheus_url is not None and source is None:
        return Prometheus(prometheus_url, deadline_s=DEADLINE_S)
    return diagnosis_prometheus(resolve_target(None, source), window)


def live_prometheus(source: TargetSource) -> Prometheus:
    """A target's Prometheus for live figures during a run: each reading's queries within
    LIVE_TIMEOUT_S, and no deadline over the run."""
    from tuner.measure.prometheus import Prometheus
    from tuner.target.registry import resolve_target

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
    request_logs: list[Path] | None = None,
) -> LiveDiagnosis:
    """Diagnose the window ending at `end_s` (default now) from a bare Prometheus URL (no target) or
    the target's Prometheus, with each client's produce requests counted from the brokers' request
    logs when given. KbtError UNREACHABLE when Prometheus cannot answer."""
    from tuner.measure.prometheus import PrometheusError

    try:
        # A past window is read in the names and labels its series had then (a rollout or an
        # upgrade between then and now may have changed them).
        window = None if end_s is None else (end_s - window_s, end_s)
        prom = window_prometheus(prometheus_url, source, window)
        return _classified(prom, window_s, step_s, thresholds, cost_model, end_s, top_topics, request_logs)
    except PrometheusError as exc:
        raise KbtError(exc.message, ExitStatus.UNREACHABLE) from None


def target_diagnosis(source: TargetSource, window_s: float) -> LiveDiagnosis:
    """The target's brokers now, as `kbt diagnose --target FILE --window W` sees them (default
    thresholds; the step follows the target's scrape interval)."""
    from tuner.measure.prometheus import MAX_POINTS_PER_SERIES, PrometheusError, fits, fitting_step
    from tuner.runner.diagnose_inputs import load_thresholds
    from tuner.target.registry import resolve_target

    target = resolve_target(None, source)
    step_s = min(window_s, max(MIN_STEP_S, target.scrape_interval_s))
    widened = []
    if not fits(window_s, step_s):  # a long --window: the step is widened to fit it
        step_s = fitting_step(window_s)
        widened = [
            f"idle and queue averaged every {step_s:g} s over the {window_s:,.0f} s window (at most"
            f" {MAX_POINTS_PER_SERIES:,} points a series, the most Prometheus answers a query)"
        ]
    try:
        prom = diagnosis_prometheus(target)
        live = _classified(prom, window_s, step_s, load_thresholds(None), None, None, TOP_TOPICS)
    except PrometheusError as exc:
        raise KbtError(exc.message, ExitStatus.UNREACHABLE) from None
    return LiveDiagnosis(live.diagnosis, widened + live.notes)


def diagnosis_prometheus(target: Target, window: Window | None = None) -> Prometheus:
    """A resolved target's Prometheus for one diagnosis (every call within DEADLINE_S)."""
    from tuner.measure.prometheus import QUERY_TIMEOUT_S, Prometheus

    return Prometheus.for_target(target, timeout_s=QUERY_TIMEOUT_S, deadline_s=DEADLINE_S, window=window)


def _classified(
    prom: Prometheus,
    window_s: float,
    step_s: float,
    thresholds: DiagnoseThresholds,
    cost_model: BrokerCostModel | None,
    end_s: float | None,
    top_topics: int,
    request_logs: list[Path] | None = None,
) -> LiveDiagnosis:
    from tuner.measure.cluster_snapshot import take_snapshot
    from tuner.model.diagnosis import diagnose as classify

    left_out: list[str] = []
    figures = take_snapshot(prom, window_s, step_s, end_s, top_topics, notes=left_out)
    if request_logs:  # BadInput for a file that cannot be read
        from tuner.measure.request_log import read_request_logs

        clients, coverage = read_request_logs(request_logs, figures["end"] - window_s, figures["end"])
        figures = {**figures, "client_requests": clients, "request_logs": coverage}
    snap = snapshot_of(figures)
    notes = unavailable_notes(prom) + left_out + handler_idle_notes(prom, window_s, figures["end"])
    notes += request_log_notes(snap)
    return LiveDiagnosis(classify(snap, thresholds, cost_model), notes)


# The rows of a snapshot and the key that names each row in a message.
_ROW_NAMES = {
    "brokers": ("broker", "broker"),
    "topics": ("topic", "topic"),
    "clients": ("client", "client_id"),
}


def snapshot_of(figures: dict[str, Any]) -> ClusterSnapshot:
    """The figures tuner.measure.cluster_snapshot read, as a snapshot. A figure past its field's
    bound (scrapes attempted 1e308: a Prometheus, recording rule or exporter answering nonsense) or
    below zero (a negative latency, rate, ratio or queue: none is a measurement) is one
    PrometheusError line naming the broker, topic or client and the figure."""
    from pydantic import ValidationError

    from tuner.core.errors import field_message
    from tuner.store.snapshot import ClusterSnapshot

    prometheus = str(figures.get("prometheus", "?"))
    try:
        snap = ClusterSnapshot.model_validate(figures)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = tuple(err["loc"])
        parts = [".".join(str(part) for part in loc)]
        if len(loc) > 1 and loc[0] in _ROW_NAMES and isinstance(loc[1], int):
            noun, key = _ROW_NAMES[str(loc[0])]
            row = figures[str(loc[0])][loc[1]]
            parts = [f"{noun} {row.get(key, '?') if isinstance(row, dict) else '?'}"]
            parts.append(".".join(str(part) for part in loc[2:]))
        raise _unusable(prometheus, ": ".join(part for part in parts if part), field_message(err)) from None
    for rows, (noun, key) in _ROW_NAMES.items():
        for row in getattr(snap, rows):
            for name, value in row:
                _not_negative(prometheus, f"{noun} {getattr(row, key)}: {name}", value)
    return snap


def measured_by_broker(prometheus: str, figure: str, unit: Any, values: dict[str, float]) -> dict[str, float]:
    """Per-broker figures read beside a snapshot (compare's produce p99), held as snapshot_of holds
    a snapshot's: within their unit's bound (tuner.core.units) and not below zero."""
    from pydantic import TypeAdapter, ValidationError

    from tuner.core.errors import field_message

    adapter: TypeAdapter[float] = TypeAdapter(unit)
    for broker, value in values.items():
        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            raise _unusable(
                prometheus, f"broker {broker}: {figure}", field_message(exc.errors()[0])
            ) from None
        _not_negative(prometheus, f"broker {broker}: {figure}", value)
    return values


def _not_negative(prometheus: str, where: str, value: object) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        raise _unusable(prometheus, where, f"must be 0 or more (got {value:g})")


def _unusable(prometheus: str, where: str, problem: str) -> Exception:
    from tuner.measure.prometheus import PrometheusError

    return PrometheusError(f"Prometheus at {prometheus} answered a figure kbt cannot use: {where}: {problem}")


def handler_idle_notes(prom: Prometheus, window_s: float, end: float) -> list[str]:
    """A note for each broker whose handler idle reads above 1 over the window (kbt clamps it): the
    handler idle meter of a KRaft combined-mode node before KAFKA-19606 (Kafka 4.2, KIP-1207) counts
    its broker and controller pools into one meter, each divided by its own thread count."""
    from tuner.spec.thresholds import THRESHOLDS

    span = f"{max(1, int(window_s * 1000))}ms"
    # Summed as the figure is (REQUEST_HANDLER_IDLE): a rescheduled pod's two series are one meter.
    expr = f"sum by (broker)(rate(kafka_server_request_handler_idle_ns_total[{span}])) / 1e9"
    notes = []
    for sample in prom.instant(expr, end):
        if sample.value > THRESHOLDS.idle_ratio_max:
            notes.append(
                f"broker {sample.labels.get('broker', '?')}: request handler idle reads {sample.value:.2f}"
                " (above 1): a KRaft combined-mode node before Kafka 4.2 counts its broker and controller"
                " pools into one meter; read as 1 (clamped), it cannot show the broker pool saturating"
                " (Kafka 4.2+: the broker pool's own meter, KIP-1207)"
            )
    return notes


def request_log_notes(snap: ClusterSnapshot) -> list[str]:
    """A line per request log that counted nothing in the window, and per one with unreadable lines."""
    notes = []
    for c in snap.request_logs:
        if c.span_s <= 0:
            notes.append(
                f"request log {c.file}: too few requests logged in the window to count a rate"
                " (kafka.request.logger at DEBUG? its time stamps are read as this machine's local time)"
            )
        if c.unreadable_lines:
            notes.append(f"request log {c.file}: {c.unreadable_lines} request line(s) could not be read")
    return notes


def unavailable_notes(prom: Prometheus) -> list[str]:
    """How the target's dialect was detected (when it is not kbt's), and each series it lacks."""
    from tuner.measure.dialects import allowlist_advice

    translator = prom.translator
    dialect = translator.dialect.name if translator is not None else "kbt"
    notes = []
    if translator is not None and translator.detection is not None and not translator.identity:
        notes.append(translator.detection.statement())
        # Each series diagnose needs that the setup leaves out, and the change that exports it.
        notes += allowlist_advice(translator.detection)
    for series, reason in sorted(prom.unavailable.items()):
        notes.append(f"figures from {series} cannot be made on the {dialect} dialect: {reason}")
    return notes
