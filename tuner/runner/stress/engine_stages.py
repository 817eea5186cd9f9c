"""A stress profile of a kind that locust does not drive (real Filebeat pods, the Java producer,
the collector, Sarama), run stage by stage through its own engine: each stage is one run of the run
lifecycle a sweep uses (fresh topics, settle wait, the engine's load and delivery check, the broker
window, a record), judged against the spec's gates as soon as it ends. The spec's real-time consumer
groups read each stage's topics beside it (their end-to-end p99 is a gate, as on locust).

What differs from the locust timeline: the stages do not follow each other without a gap (each
starts its clients afresh and reads its topics back before the next), a ramp down runs as one stage
at its mean load, a stage has no halves, and no lagging group reads (a stage's topics are fresh, so
there is no minute-old data to replay; the spec refuses lagging groups for such a profile). The
drain stage has nothing to do: every run flushes and verifies its own records.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tuner.core.errors import BadInput
from tuner.driver.result import DriverResult
from tuner.driver.stress.consumer_pool import ConsumerPool
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.driver.stress.plan import StressPlan
from tuner.driver.stress.verify import StressDelivery
from tuner.measure.prometheus import Prometheus
from tuner.runner.lifecycle import Engine, Figures, Measurer, Observer, Run, RunLifecycle, RunPolicy
from tuner.runner.stress.gates import (
    ProducerFigures,
    describe,
    failed_gates,
    loss_gates,
    stage_gates,
    whole_stage_consumer,
)
from tuner.runner.stress.records import ProfileOutcome, StageOutcome, remote_tier
from tuner.runner.wiring import measurer_of
from tuner.spec.stress_load import LoadedStress
from tuner.spec.stress_spec import Stage, on_locust
from tuner.spec.stress_stage import engine_stage_plan
from tuner.spec.sweep import RunPlan
from tuner.store.record import Environment, RunRecord
from tuner.store.stress_section import GateCheck, StressStep, Verdict
from tuner.target.base import Target

# The readers' plan outlives the stage's run (clients' start, warm-up, read-back): they are stopped
# when the run returns.
READERS_SLACK_S = 3600.0

Phase = Callable[[str, str], None]  # (profile label, text)
Judged = Callable[[str, Stage, list[GateCheck]], None]


@dataclass(frozen=True)
class StageParts:
    """What a stage run needs from the target: the target itself, the engine that drives any
    registered kind, the broker measurement."""

    target: Target
    engine: Engine
    measurer: Measurer | None
    prometheus: Prometheus | None


def stage_parts(target: Target) -> StageParts:
    """The engine, the broker measurement and the Prometheus a stage run through a kind's engine
    uses: the sweep's own."""
    measurer = measurer_of(target)
    prometheus = measurer.prometheus if measurer is not None else None
    return StageParts(target, Engine(), measurer, prometheus)


class _Forward(Observer):
    """The lifecycle's progress as the stress observer's phases of one profile."""

    def __init__(self, phase: Phase, label: str, stage: Stage) -> None:
        self.say, self.label, self.stage = phase, label, stage

    def phase(self, plan: RunPlan, text: str) -> None:
        self.say(self.label, f"{self.stage.name}: {text}")


class StageGates(RunPolicy):
    """A plain run whose record carries the stage and its gates' verdict, the spec's real-time
    consumer groups reading its topics while it runs."""

    def __init__(
        self,
        loaded: LoadedStress,
        label: str,
        stage: Stage,
        prometheus: Prometheus | None,
        t0: float | None = None,  # the profile's first stage start (its timeline origin)
    ) -> None:
        self.loaded, self.label, self.stage, self.prometheus = loaded, label, stage, prometheus
        self.checks: list[GateCheck] = []
        self.t0 = t0
        self.groups = [g for g in loaded.spec.groups if g.mode == "realtime"]  # the spec refuses lagging
        self.tallies: dict[str, GroupTally] = {}

    def drive(self, run: Run, engine: Engine) -> DriverResult:
        if not self.groups:
            return super().drive(run, engine)
        pool = ConsumerPool(self._readers(run))
        try:
            pool.start()  # every group subscribed before the first record
            return super().drive(run, engine)
        finally:
            pool.stop()
            self.tallies = pool.tallies

    def _readers(self, run: Run) -> StressPlan:
        """The consumer groups' plan: the run's topics, one stage from now (they stop with the run)."""
        horizon = self.stage.duration_s + READERS_SLACK_S
        stage = self.stage.model_copy(update={"start_s": 0.0, "duration_s": horizon, "lagging": "off"})
        workload = run.plan.workload
        return StressPlan(
            run_id=run.ids.run_id,
            stress=self.loaded.spec.name,
            profile_label=self.label,
            profile=run.plan.profile,
            workload=workload,
            topics=run.topics,
            bootstrap_servers=run.target.bootstrap_servers,
            rate_per_producer=float(workload.rate_per_producer),
            stages=[stage],
            t0=time.time(),
            groups=self.groups,
            client_properties=dict(run.target.client_properties),
        )

    def finish(self, run: Run, figures: Figures, fields: dict[str, Any]) -> dict[str, Any]:
        stage, gates = self.stage, self.loaded.spec.gates
        client, delivery = figures.client, figures.delivery
        loss = loss_gates(delivery.lost, delivery.verified)
        readers = [self.tallies.get(g.name, GroupTally()).stage(stage.index) for g in self.groups]
        producers = ProducerFigures.of_run(client, delivery)
        checks = self.checks = stage_gates(gates, stage, figures.broker, producers, readers, loss)
        failing = failed_gates(checks)
        verdict: Verdict = ("failed" if failing else "held") if stage.judged else "not judged"
        start, end, prom = client.window_start, client.window_end, self.prometheus
        remote = remote_tier(prom, run.topics, start, end, (start + end) / 2) if prom is not None else None
        consumers = [
            whole_stage_consumer(g, self.tallies.get(g.name, GroupTally()), stage) for g in self.groups
        ]
        step = StressStep(
            stress=self.loaded.spec.name,
            profile_label=self.label,
            stage=stage,
            t0=self.t0 if self.t0 is not None else client.started_at,
            start=start,
            end=end,
            judged_from=start,  # the run's warm-up (the spec's settle time) is before its window
            baseline_msgs_per_s=self.loaded.baseline_msgs_per_s,
            offered_msgs_per_s=run.plan.workload.offered_msgs_per_s,
            verdict=verdict,
            gates=checks,
            consumers=consumers,
            remote=remote,
            locust_workers=0,  # no locust: the record's client section names the engine
        )
        status = "failed" if (delivery.lost or verdict == "failed") else fields["status"]
        problems = [*fields["problems"], *(describe(c) for c in failing)]
        return {**fields, "status": status, "problems": problems, "stress": step}


class EngineStages:
    """One profile through every stage of the timeline, each a run of its kind's engine."""

    def __init__(
        self,
        parts: StageParts,
        store: Any,
        loaded: LoadedStress,
        label: str,
        environment: Environment,
        admin: Any,
        phase: Phase,
        judged: Judged,
    ) -> None:
        self.parts, self.store, self.loaded, self.label = parts, store, loaded, label
        self.environment, self.admin = environment, admin
        self.phase, self.judged = phase, judged  # the stress observer's hooks
        self.outcome = ProfileOutcome(label=label)
        self.cleanup_problems: list[str] = []

    def run(self) -> ProfileOutcome:
        spec = self.loaded.spec
        engine = spec.profiles[self.label].client
        t0: float | None = None
        try:
            for stage in self.loaded.stages:
                if stage.kind == "drain":
                    continue
                plan = engine_stage_plan(spec, self.label, stage, self.loaded.baseline_msgs_per_s)
                load = plan.workload
                self.phase(
                    self.label,
                    f"stage {stage.name}: {load.producers} {engine} producers at"
                    f" {load.rate_per_producer:g} msgs/s each for {stage.duration_s:g} s",
                )
                policy = StageGates(self.loaded, self.label, stage, self.parts.prometheus, t0)
                record = self._run(plan, policy, stage)
                if t0 is None:
                    t0 = record.client.started_at
                self.outcome.stages.append(StageOutcome(stage, record))
                if stage.judged:
                    self.judged(self.label, stage, policy.checks)
                if stage.judged and failed_gates(policy.checks) and spec.gates.on_fail == "abort":
                    self.outcome.aborted_at = stage
                    self.phase(self.label, f"{stage.name} failed: ramp aborted")
                    break
        except KeyboardInterrupt:
            self.outcome.interrupted = True
            raise
        finally:
            self.outcome.delivery = _delivery(self.outcome.records)
        return self.outcome

    def _run(self, plan: RunPlan, policy: StageGates, stage: Stage) -> RunRecord:
        parts = self.parts
        lifecycle = RunLifecycle(
            parts.target,
            parts.engine,
            parts.measurer,
            self.store,
            self.environment,
            _Forward(self.phase, self.label, stage),
            self.admin,
        )
        record, _ = lifecycle.run(plan, policy, self.cleanup_problems)
        return record


def _delivery(records: list[RunRecord]) -> StressDelivery | None:
    """The profile's delivery over its stages, as the locust path reports it."""
    if not records:
        return None
    unverified = [r.name for r in records if not r.delivery.verified]
    return StressDelivery(
        verified=not unverified,
        acked=sum(r.delivery.acked for r in records),
        consumed=sum(r.delivery.consumed for r in records),
        duplicates=sum(r.delivery.duplicates for r in records),
        lost_by_stage={r.index: r.delivery.lost for r in records},
        acked_by_stage={r.index: r.delivery.acked for r in records},
        detail=f"delivery not verified in {', '.join(unverified)}" if unverified else "",
    )


def refuse_remote_workers(loaded: LoadedStress, labels: list[str], remote_workers: int) -> None:
    """Distributed load is locust's: a profile driven through its engine runs on this machine."""
    staged = [label for label in labels if not on_locust(loaded.spec.profiles[label])]
    if remote_workers and staged:
        client = loaded.spec.profiles[staged[0]].client
        raise BadInput(
            f"--remote-workers: profile {staged[0]} (client {client}) runs through its own engine on"
            " this machine; only librdkafka profiles run distributed on locust"
        )
