"""`kbt compare`'s lines: per broker, then per client group, each figure before -> after, in the
shape of a pressure sweep's closing lines (tuner.render.pressure_summary); `make demo` ends with
them."""

from __future__ import annotations

from datetime import UTC, datetime

from tuner.core.text import fixed_or_dash
from tuner.model.compare import Comparison, Row

# (label, Figures field, digits); the groups show the request figures only (the rest is per broker)
BROKER_FIGURES = (
    ("network idle", "network_idle", 2),
    ("request queue (mean)", "request_queue", 1),
    ("handler idle", "handler_idle", 2),
    ("produce requests/s", "produce_requests_per_s", 0),
    ("bytes per request", "bytes_per_request", 0),
    ("produce p99 (ms)", "produce_p99_ms", 1),
)
GROUP_FIGURES = BROKER_FIGURES[3:]


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _block(head: str, row: Row, figures: tuple[tuple[str, str, int], ...], width: int) -> list[str]:
    lines = [head]
    for label, field, digits in figures:
        x, y = getattr(row.before, field), getattr(row.after, field)
        lines.append(f"  {label:<{width}}  {fixed_or_dash(x, digits)} -> {fixed_or_dash(y, digits)}")
    return lines


def compare_lines(result: Comparison) -> list[str]:
    width = max(len(label) for label, _, _ in BROKER_FIGURES)
    span = f"{result.window_s:.0f} s" if result.window_s < 120 else f"{result.window_s / 60:.3g} min"
    lines = [f"before: {span} to {_when(result.before_end)}; after: {span} to {_when(result.after_end)}"]
    for row in result.brokers:
        worst = " (lowest network idle before)" if row.name == result.worst_broker else ""
        lines += _block(f"broker {row.name}{worst}, before -> after:", row, BROKER_FIGURES, width)
    if not result.groups:
        lines.append("client groups: give --request-log (each broker's) to compare them")
    for row in result.groups:
        lines += _block(f"client group {row.name}, before -> after:", row, GROUP_FIGURES, width)
    return lines
