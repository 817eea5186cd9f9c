"""A stress stage as one run: what a profile driven through its kind's engine runs in a stage, and
what a stage record names as its plan. Built when the spec loads (a stage no engine could run is
one line then, not a failure half way up the ramp) and again when the stage runs."""

from __future__ import annotations

from tuner.spec.stress_spec import Stage, StressSpec
from tuner.spec.sweep import SLO, RunPlan
from tuner.spec.workload import WorkloadSpec, dump_keeping_path


def stage_producers(stage: Stage) -> int:
    """The producers a stage runs through an engine: a ramp down (users -> users_end) at its mean."""
    return max(1, round((stage.users + stage.users_end) / 2))


def stage_run_plan(
    spec: StressSpec,
    label: str,
    workload: WorkloadSpec,
    stage: Stage,
    rate: float,
    producers: int,
    processes: int,
) -> RunPlan:
    """One stage as a run: `producers` at `rate` msgs/s each (the baseline's share), for the
    stage's duration, the spec's settle time as the warm-up and its p99 gate as the SLO."""
    data = dump_keeping_path(workload)
    data.update(
        producers=producers,
        processes=processes,
        rate_per_producer=rate,
        duration_s=stage.duration_s,
        warmup_s=min(spec.shape.settle_s, stage.duration_s / 2),
    )
    stage_workload = type(workload).model_validate(data)
    return RunPlan(
        index=stage.index,
        name=f"{label}-{stage.label}",
        sweep=spec.name,
        workload=stage_workload,
        profile=spec.profiles[label],
        assignments={"profile": label, "stage": stage.name, "multiplier": stage.multiplier},
        slo=SLO(p99_ms=spec.gates.p99_ms),
    )


def engine_stage_plan(spec: StressSpec, label: str, stage: Stage, baseline_msgs_per_s: float) -> RunPlan:
    """The run a profile driven through its engine makes of `stage` (topic configs merged)."""
    workload = spec.topics_with_configs()
    producers = stage_producers(stage)
    rate = baseline_msgs_per_s / spec.workload.producers
    return stage_run_plan(
        spec, label, workload, stage, rate, producers, max(1, min(workload.processes, producers))
    )
