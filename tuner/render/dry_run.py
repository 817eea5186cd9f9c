"""What a dry run prints: a sweep's runs and a stress test's stages, as JSON rows and text lines.
Nothing is created or contacted to make them."""

from __future__ import annotations

from typing import Any

from tuner.core.redact import redact
from tuner.spec.loader import LoadedSweep
from tuner.spec.stress_load import LoadedStress
from tuner.spec.sweep import RunPlan


def planned_run(plan: RunPlan, prefix: str) -> dict[str, Any]:
    """One run of a sweep as it would go: topics (named with the target's prefix), load, profile."""
    w = plan.workload
    return {
        "topics": [f"{prefix}{t.name}-r{plan.index}-<stamp> ({t.partitions} partitions)" for t in w.topics],
        "name": plan.name,
        "producers": w.producers,
        "rate_per_producer": w.rate_per_producer,
        "duration_s": w.duration_s,
        "warmup_s": w.warmup_s,
        "profile": plan.profile.name,
        "client_config": {k: str(v) for k, v in redact(plan.profile.client_settings()).items()},
    }


def sweep_dry_run(loaded: LoadedSweep, prefix: str) -> tuple[list[dict[str, Any]], list[str]]:
    """(the runs as JSON rows, one text line per run)."""
    rows = [planned_run(plan, prefix) for plan in loaded.runs]
    lines = []
    for plan, row in zip(loaded.runs, rows, strict=True):
        w = plan.workload
        rate = "max" if w.rate_per_producer == "max" else f"{w.rate_per_producer:g}/s"
        settings = " ".join(f"{k}={v}" for k, v in row["client_config"].items())
        lines.append(
            f"{plan.name}: {w.producers} producers x {rate}, {w.duration_s:g} s"
            f" (warm-up {w.warmup_s:g} s), profile {plan.profile.name}: {settings or '(defaults)'};"
            f" topics {', '.join(row['topics'])}"
        )
    return rows, lines


def stress_dry_run(loaded: LoadedStress) -> tuple[list[dict[str, Any]], list[str]]:
    """(the stages as JSON rows, one text line per stage)."""
    rows = [
        {
            "label": st.label,
            "kind": st.kind,
            "start_s": st.start_s,
            "duration_s": st.duration_s,
            "users": st.users,
            "users_end": st.users_end,
            "multiplier": st.multiplier,
            "lagging": st.lagging,
            "judged": st.judged,
        }
        for st in loaded.stages
    ]
    lines = []
    for stage in loaded.stages:
        users = f"{stage.users}" if stage.users == stage.users_end else f"{stage.users}->{stage.users_end}"
        rate = loaded.baseline_msgs_per_s * stage.multiplier
        lines.append(
            f"{stage.label}: {stage.kind}, {stage.duration_s:g} s from {stage.start_s:g} s,"
            f" {users} producers (x{stage.multiplier:g} = {rate:.0f} msgs/s),"
            f" lagging readers {stage.lagging},"
            f" {'judged' if stage.judged else 'not judged'}"
        )
    return rows, lines
