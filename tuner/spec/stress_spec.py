"""StressSpec: the pre-holiday stress test `kbt stress` runs (load shape, profiles, consumers, gates).

    name: holiday-peak
    workload: workloads/qunar-logs.yaml   # producers ("pods"), message source, topics
    topic_configs: {remote.storage.enable: true, segment.ms: 10000, local.retention.ms: 10000}
    baseline: {msgs_per_s: 600}           # or {from_diagnose: diagnose.json}; default: the workload's rate
    profiles: {current: profiles/filebeat-like.yaml, recommended: profiles/batched-snappy.yaml}
    shape: {prefill_s: 60, steps: [1, 2, 3, 4], step_s: 40, spike: {multiplier: 5, duration_s: 20},
            ramp_down_s: 20}
    consumer_groups: [{name: rt, mode: realtime}, {name: replay, mode: lagging, lag_s: 90}]
    gates: {network_idle_min: 0.3, request_queue_max: 20, p99_ms: 1500}

A step multiplies the baseline by adding producers: step k runs round(k x producers) producers, each
at baseline / producers msgs/s (more pods at the peak, each as busy as on an ordinary day).
`build_stages` turns the shape into the timeline every process of a run follows.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tuner.core.units import Count, Ratio, Seconds
from tuner.spec.base import ConfigMap, StrictModel, check_unique
from tuner.spec.clients import ClientProfile, kind_of
from tuner.spec.duration import MAX_SPEC_MS
from tuner.spec.engine_id import EngineId
from tuner.spec.limits import MAX_CONSUMER_GROUPS, MAX_COUNT, MAX_ITEMS, MAX_RATE_PER_S, TOPIC_NAME_PATTERN
from tuner.spec.thresholds import THRESHOLDS
from tuner.spec.workload import ConsumerGroupSpec, WorkloadSpec, dump_keeping_path

# Locust users drive this engine's profiles along the stage timeline (distributed too, with the
# consumer groups reading beside them); a profile of any other kind runs stage by stage through its
# own engine, the one a sweep uses (tuner/runner/stress/engine_stages.py).
LOCUST_ENGINE = EngineId.LIBRDKAFKA
MAX_MULTIPLIER = 100.0
MAX_STAGE_S = 3600.0
MAX_USERS = 2000  # producers (locust users) at any moment, over every worker
REMOTE_STORAGE_KEY = "remote.storage.enable"
LOCAL_RETENTION_KEY = "local.retention.ms"

StageKind = Literal["prefill", "step", "hold", "spike", "ramp_down", "drain"]
Lagging = Literal["off", "on", "split"]


def on_locust(profile: ClientProfile) -> bool:
    """Whether locust users drive this profile (else its kind's engine runs each stage)."""
    return kind_of(profile).engine == LOCUST_ENGINE


class Baseline(StrictModel):
    """The ordinary day's load that the steps multiply, in msgs/s over all producers: given here, or
    read from `kbt diagnose --json` output of the production cluster (`from_diagnose`, a path
    relative to the spec). Neither: the workload's producers x rate_per_producer."""

    msgs_per_s: float | None = Field(default=None, gt=0, le=MAX_RATE_PER_S)
    from_diagnose: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one(self) -> Baseline:
        if self.msgs_per_s is not None and self.from_diagnose is not None:
            raise ValueError("give msgs_per_s or from_diagnose, not both")
        return self


class Spike(StrictModel):
    multiplier: float = Field(gt=0, le=MAX_MULTIPLIER)
    duration_s: float = Field(gt=0, le=MAX_STAGE_S)


class Shape(StrictModel):
    """The stages, in order: prefill (baseline load so lagging readers find tiered data), the
    steps (each held `step_s`), a hold at the last step, a spike, a linear ramp down to
    `ramp_down_to` x baseline, and a drain (no load: producers flush, consumers catch up)."""

    prefill_s: float = Field(default=0, ge=0, le=MAX_STAGE_S)
    steps: list[Annotated[float, Field(gt=0, le=MAX_MULTIPLIER)]] = Field(min_length=1, max_length=50)
    step_s: float = Field(gt=0, le=MAX_STAGE_S)
    hold_s: float = Field(default=0, ge=0, le=MAX_STAGE_S)
    spike: Spike | None = None
    ramp_down_s: float = Field(default=0, ge=0, le=MAX_STAGE_S)
    ramp_down_to: float = Field(default=1.0, ge=0, le=MAX_MULTIPLIER)
    drain_s: float = Field(default=10, ge=1, le=600)
    # The first seconds of a judged stage (producers spawning, batches filling) are not judged.
    settle_s: float = Field(default=5, ge=0, le=600)

    @model_validator(mode="after")
    def _check(self) -> Shape:
        if any(b <= a for a, b in zip(self.steps, self.steps[1:], strict=False)):
            raise ValueError(f"steps must increase (got {[f'{k:g}' for k in self.steps]})")
        if self.settle_s >= self.step_s / 2:
            raise ValueError(
                f"settle_s ({self.settle_s:g}) must be under half of step_s ({self.step_s:g}):"
                " each half of a step is measured apart (with and without lagging readers)"
            )
        return self


class Gates(StrictModel):
    """When a judged stage fails. `on_fail: abort` stops the profile's ramp at the first failure;
    `continue` runs every stage and marks the failed ones. Any acked record lost always fails."""

    # NetworkProcessorAvgIdlePercent, mean over the stage, worst broker
    network_idle_min: float | None = Field(default=THRESHOLDS.network_idle_critical, gt=0, le=1)
    request_queue_max: float | None = Field(
        default=None, gt=0, le=MAX_COUNT
    )  # mean RequestQueueSize: saturated
    p99_ms: float | None = Field(default=None, gt=0, le=MAX_SPEC_MS)  # producer delivery latency p99 (SLO)
    e2e_p99_ms: float | None = Field(default=None, gt=0, le=MAX_SPEC_MS)  # real-time consumer end-to-end p99
    on_fail: Literal["abort", "continue"] = "abort"


class Stage(StrictModel):
    """One stretch of the timeline, `start_s` seconds after the run's t0."""

    index: Count
    name: str
    kind: StageKind
    multiplier: Ratio  # of the baseline at the stage start
    multiplier_end: Ratio  # at its end (differs only for the ramp down)
    users: Count  # producers at the start
    users_end: Count
    start_s: Seconds
    duration_s: Seconds
    lagging: Lagging  # when the lagging groups read: off, on, or the second half only (split)

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    @property
    def judged(self) -> bool:
        """Gates apply (a held load); prefill, ramp down and drain are only measured."""
        return self.kind in ("step", "hold", "spike")

    @property
    def label(self) -> str:
        return f"{self.index:02d}-{self.name}"


class StressSpec(StrictModel):
    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    description: str = ""
    workload: WorkloadSpec
    # Merged into every topic's configs (e.g. tiering so lagging readers hit the remote tier).
    topic_configs: ConfigMap = Field(default_factory=dict)
    baseline: Baseline = Field(default_factory=Baseline)
    profiles: dict[str, ClientProfile] = Field(min_length=1, max_length=MAX_ITEMS)
    shape: Shape
    # None: the workload's own consumer_groups.
    consumer_groups: list[ConsumerGroupSpec] | None = Field(None, max_length=MAX_CONSUMER_GROUPS)
    # When lagging groups read: split = the second half of every stage (each half measured apart).
    lagging_readers: Lagging = "split"
    lagging_max_msgs_per_s: float | None = Field(
        default=None, gt=0, le=MAX_RATE_PER_S
    )  # per lagging consumer
    gates: Gates = Field(default_factory=Gates)

    @model_validator(mode="after")
    def _check(self) -> StressSpec:
        if self.workload.rate_per_producer == "max":
            raise ValueError(
                'workload.rate_per_producer: a stress test offers a fixed load, not "max"'
                " (set msgs/s per producer, or baseline.msgs_per_s)"
            )
        for label, profile in self.profiles.items():
            lagging = [g.name for g in self.groups if g.mode == "lagging"]
            if lagging and not on_locust(profile):
                raise ValueError(
                    f"profiles.{label}: lagging consumer groups ({', '.join(lagging)}) read beside"
                    f" {LOCUST_ENGINE} profiles only: client {profile.client} runs each stage on fresh"
                    " topics through its own engine (keep the realtime groups, drop the lagging ones)"
                )
        peak = max([*self.shape.steps, self.shape.spike.multiplier if self.shape.spike else 0])
        if round(peak * self.workload.producers) > MAX_USERS:
            raise ValueError(
                f"shape: the peak x{peak:g} needs {round(peak * self.workload.producers)} producers"
                f" (at most {MAX_USERS}); use fewer producers with a higher baseline each"
            )
        check_unique("consumer group", [g.name for g in self.groups])
        self.topics_with_configs()  # merged topic configs must still be valid (e.g. max.message.bytes)
        return self

    @property
    def groups(self) -> list[ConsumerGroupSpec]:
        return self.consumer_groups if self.consumer_groups is not None else self.workload.consumer_groups

    def topics_with_configs(self) -> WorkloadSpec:
        """The workload with `topic_configs` merged into each topic (topic's own keys win)."""
        if not self.topic_configs:
            return self.workload
        data = dump_keeping_path(self.workload)
        data["topics"] = [{**t, "configs": {**self.topic_configs, **t["configs"]}} for t in data["topics"]]
        return WorkloadSpec.model_validate(data)

    def notes(self) -> list[str]:
        """Things that are allowed but probably not what the author meant."""
        out: list[str] = []
        lagging = [g for g in self.groups if g.mode == "lagging"]
        workload = self.topics_with_configs()
        for group in lagging:
            for topic in workload.topics:
                tiered = topic.configs.get(REMOTE_STORAGE_KEY, "false").lower() == "true"
                local_ms = topic.configs.get(LOCAL_RETENTION_KEY)
                if not tiered:
                    out.append(
                        f"lagging group {group.name}: topic {topic.name} is not tiered"
                        f" ({REMOTE_STORAGE_KEY} is not true): it reads local segments"
                    )
                elif local_ms is None or float(local_ms) >= (group.lag_s or 0) * 1000:
                    out.append(
                        f"lagging group {group.name}: lag_s {group.lag_s:g} is within {LOCAL_RETENTION_KEY}"
                        f" of topic {topic.name}: data that old may still be local"
                    )
            first = first_lagging_start(self)
            if first is not None and group.lag_s is not None and first < group.lag_s:
                out.append(
                    f"lagging group {group.name}: its first read starts {first:g} s into the run,"
                    f" before data is {group.lag_s:g} s old (raise shape.prefill_s)"
                )
        if lagging and self.lagging_readers == "off":
            out.append("lagging_readers is off: the lagging groups never read")
        return out


def users_for(spec: StressSpec, multiplier: float) -> int:
    return max(1, round(multiplier * spec.workload.producers)) if multiplier > 0 else 0


def build_stages(spec: StressSpec) -> list[Stage]:
    """The run's timeline from its shape."""
    shape = spec.shape
    has_lagging = any(g.mode == "lagging" for g in spec.groups)
    held: Lagging = spec.lagging_readers if has_lagging else "off"
    stages: list[Stage] = []

    def add(name: str, kind: StageKind, k: float, duration: float, k_end: float | None = None) -> None:
        if duration <= 0:
            return
        start = stages[-1].end_s if stages else 0.0
        end_k = k if k_end is None else k_end
        lagging: Lagging = held if kind in ("step", "hold", "spike") else "off"
        if kind == "ramp_down" and held != "off":
            lagging = "on"
        stages.append(
            Stage(
                index=len(stages),
                name=name,
                kind=kind,
                multiplier=k,
                multiplier_end=end_k,
                users=users_for(spec, k),
                users_end=users_for(spec, end_k),
                start_s=start,
                duration_s=duration,
                lagging=lagging,
            )
        )

    add("prefill", "prefill", 1.0, shape.prefill_s)
    for i, k in enumerate(shape.steps):
        add(f"step{i + 1}-x{k:g}", "step", k, shape.step_s)
    peak = shape.steps[-1]
    add(f"hold-x{peak:g}", "hold", peak, shape.hold_s)
    if shape.spike is not None:
        add(f"spike-x{shape.spike.multiplier:g}", "spike", shape.spike.multiplier, shape.spike.duration_s)
    add(f"ramp-down-x{shape.ramp_down_to:g}", "ramp_down", peak, shape.ramp_down_s, shape.ramp_down_to)
    add("drain", "drain", 0.0, shape.drain_s)
    return stages


def first_lagging_start(spec: StressSpec) -> float | None:
    """Seconds into the run when lagging readers first read, or None when they never do."""
    for stage in build_stages(spec):
        if stage.lagging == "on":
            return stage.start_s
        if stage.lagging == "split":
            return stage.start_s + stage.duration_s / 2
    return None


def users_at(stage: Stage, t_in_stage: float) -> int:
    """Producers wanted `t_in_stage` seconds into `stage` (linear during the ramp down)."""
    if stage.kind != "ramp_down" or stage.duration_s <= 0:
        return stage.users
    frac = min(max(t_in_stage / stage.duration_s, 0.0), 1.0)
    return round(stage.users + (stage.users_end - stage.users) * frac)


def stage_at(stages: list[Stage], t_s: float) -> Stage | None:
    """The stage running `t_s` seconds after t0 (None before t0 or after the last stage)."""
    for stage in stages:
        if stage.start_s <= t_s < stage.end_s:
            return stage
    return None
