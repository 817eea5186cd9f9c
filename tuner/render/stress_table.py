"""What `kbt stress` prints: one row per stage of each profile, then the highest step each held."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from tuner.core.text import or_dash
from tuner.spec.clients import kind_of
from tuner.store.record import RunRecord
from tuner.store.stress_section import StressStep

VERDICT_STYLE = {"held": "green", "failed": "red", "aborted": "yellow", "interrupted": "yellow"}


def _gate(step: StressStep, gate: str) -> float | None:
    return next((check.value for check in step.gates if check.gate == gate), None)


COLUMNS = (
    "profile",
    "stage",
    "producers",
    "offered/s",
    "acked/s",
    "req/s",
    "p99 ms",
    "net idle",
    "req queue",
    "rt e2e p99 ms (no lag / lag)",
    "remote fetch/s",
    "lost",
    "verdict",
)
TEXT_COLUMNS = ("profile", "stage", "verdict")  # left-aligned; the figures right


def stress_table(records: Sequence[RunRecord], title: str) -> Table:
    table = Table(title=title, show_lines=False)
    for name in COLUMNS:
        table.add_column(name, justify="left" if name in TEXT_COLUMNS else "right")
    for record in records:
        step = record.stress
        if step is None:
            continue
        # Once per request (RequestMetrics) for clients whose requests carry several partitions.
        multi = kind_of(record.plan.profile).multi_partition_requests
        broker_req = record.broker.run_produce_requests_per_s(multi) if record.broker else None
        verdict = step.verdict
        style = VERDICT_STYLE.get(verdict, "dim")
        problems = "; ".join(record.problems)
        e2e = f"{or_dash(step.realtime_e2e_p99_ms(False))} / {or_dash(step.realtime_e2e_p99_ms(True))}"
        table.add_row(
            step.profile_label,
            step.stage.name,
            str(record.client.producers),  # locust's users at the stage's peak, or the engine's producers
            or_dash(step.offered_msgs_per_s),
            or_dash(record.client.records_per_s),
            or_dash(broker_req if broker_req is not None else record.client.requests_per_s),
            or_dash(record.client.delivery_latency_ms.p99),
            or_dash(_gate(step, "network_idle"), "{:.2f}"),
            or_dash(_gate(step, "request_queue"), "{:.1f}"),
            e2e,
            or_dash(step.remote.fetch_requests_per_s if step.remote else None, "{:.1f}"),
            str(record.delivery.lost) if record.delivery.verified else "?",
            f"[{style}]{verdict}[/{style}]" + (f" ({problems})" if problems else ""),
        )
    return table


def highest_held_line(label: str, step_name: str | None, multiplier: float | None, baseline: float) -> str:
    if step_name is None or multiplier is None:
        return f"{label}: no step held"
    return f"{label}: highest step held {step_name} (x{multiplier:g} = {multiplier * baseline:.0f} msgs/s)"
