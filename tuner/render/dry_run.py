"""What a dry run prints: a sweep's runs and a stress test's stages, as JSON rows and text lines.
Nothing is created or contacted to make them."""

from __future__ import annotations

from typing import Any

from tuner.core.redact import redact
from tuner.render.fit import PIPE_WIDTH, wrap_list
from tuner.spec.loader import LoadedSweep
from tuner.spec.stress_load import LoadedStress
from tuner.spec.stress_spec import on_locust
from tuner.spec.sweep import RunPlan


def planned_run(plan: RunPlan, prefix: str) -> dict[str, Any]:
    """One run of a sweep as it would go: topics (named with the target's prefix), load, profile
    and its client kind. Every field is a value of its own (a topic's name and partitions apart)."""
    w = plan.workload
    return {
        "name": plan.name,
        "topics": [
            {"name": f"{prefix}{t.name}-r{plan.index}-<stamp>", "partitions": t.partitions} for t in w.topics
        ],
        "producers": w.producers,
        "rate_per_producer": w.rate_per_producer,
        "duration_s": w.duration_s,
        "warmup_s": w.warmup_s,
        "profile": plan.profile.name,
        "client": plan.profile.client,
        "client_config": {k: str(v) for k, v in redact(plan.profile.client_settings()).items()},
    }


def sweep_dry_run(
    loaded: LoadedSweep, prefix: str, width: int = PIPE_WIDTH
) -> tuple[list[dict[str, Any]], list[str]]:
    """(the runs as JSON rows, text lines of at most `width` columns: a run's head, then its
    settings and its topics, each list broken only between its items)."""
    rows = [planned_run(plan, prefix) for plan in loaded.runs]
    lines = []
    for plan, row in zip(loaded.runs, rows, strict=True):
        w = plan.workload
        rate = "max" if w.rate_per_producer == "max" else f"{w.rate_per_producer:g}/s"
        lines += wrap_list(
            "",
            [
                f"{plan.name}: {w.producers} producers x {rate}",
                f"{w.duration_s:g} s (warm-up {w.warmup_s:g} s)",
                f"profile {plan.profile.name} ({row['client']})",
            ],
            width,
        )
        settings = [f"{k}={v}" for k, v in row["client_config"].items()] or ["(defaults)"]
        lines += wrap_list("  settings:", settings, width)
        topics = [f"{t['name']} ({t['partitions']} partitions)" for t in row["topics"]]
        lines += wrap_list("  topics:", topics, width)
    return rows, lines


def stress_drivers(loaded: LoadedStress, labels: list[str]) -> dict[str, str]:
    """How each profile's load is driven: "locust" (users along the timeline, consumer groups
    beside them) or "engine" (each stage a run of the kind's own engine)."""
    return {label: "locust" if on_locust(loaded.spec.profiles[label]) else "engine" for label in labels}


def stress_driver_lines(loaded: LoadedStress, labels: list[str]) -> list[str]:
    said = {
        "locust": "locust users along the stage timeline",
        "engine": "each stage a run of its own engine (no lagging readers)",
    }
    return [
        f"profile {label}: client {loaded.spec.profiles[label].client}, {said[how]}"
        for label, how in stress_drivers(loaded, labels).items()
    ]


# a stage's JSON row, in this order
STAGE_FIELDS = (
    "label", "kind", "start_s", "duration_s", "users", "users_end", "multiplier", "lagging", "judged",
)  # fmt: skip


def stress_dry_run(loaded: LoadedStress) -> tuple[list[dict[str, Any]], list[str]]:
    """(the stages as JSON rows, one text line per stage)."""
    rows = [{name: getattr(st, name) for name in STAGE_FIELDS} for st in loaded.stages]
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
