"""Turn one stress run's tallies and measurements into run records (one per stage), and find the
highest step that held. What the brokers showed over a stage: their window (idle ratios, request
queue, requests) and the remote tier's fetch and copy rates."""

from __future__ import annotations

from dataclasses import dataclass, field

from tuner.driver.latency_hist import latency_ms
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.driver.stress.plan import StressPlan
from tuner.driver.stress.tally import StageTally
from tuner.driver.stress.verify import StressDelivery
from tuner.measure.broker_window import (
    REMOTE_COPY_BYTES,
    REMOTE_FETCH_BYTES,
    REMOTE_FETCH_REQUESTS,
    topic_rate,
)
from tuner.measure.prometheus import Prometheus
from tuner.runner.lifecycle import build_record
from tuner.runner.stress.gates import (
    consumer_stage,
    describe,
    failed_gates,
    generator_note,
    loss_gates,
    stage_gates,
)
from tuner.spec.stress_spec import Stage, StressSpec
from tuner.spec.stress_stage import stage_run_plan
from tuner.store.figures import BrokerWindow, ClientResult, DeliveryResult
from tuner.store.record import Environment, RunRecord
from tuner.store.stress_section import RemoteTier, StressStep, Verdict


@dataclass
class StageMeasure:
    """What was measured of one stage on the brokers."""

    broker: BrokerWindow | None = None
    remote: RemoteTier | None = None


def remote_tier(
    prometheus: Prometheus, topics: list[str], start: float, end: float, mid: float
) -> RemoteTier:
    """The remote tier's fetch and copy rates for `topics` over [start, end], fetches by halves
    (lagging readers reach the tier in the second half)."""
    return RemoteTier(
        fetch_requests_per_s=topic_rate(prometheus, REMOTE_FETCH_REQUESTS, topics, start, end),
        fetch_bytes_per_s=topic_rate(prometheus, REMOTE_FETCH_BYTES, topics, start, end),
        copy_bytes_per_s=topic_rate(prometheus, REMOTE_COPY_BYTES, topics, start, end),
        first_half_fetch_requests_per_s=topic_rate(prometheus, REMOTE_FETCH_REQUESTS, topics, start, mid),
        second_half_fetch_requests_per_s=topic_rate(prometheus, REMOTE_FETCH_REQUESTS, topics, mid, end),
    )


@dataclass
class RunContext:
    spec: StressSpec
    plan: StressPlan
    baseline_msgs_per_s: float
    environment: Environment
    workers: int
    run_stamp: str  # shared by the run's records: <label>-<stage>--<stamp>


@dataclass
class StageOutcome:
    stage: Stage
    record: RunRecord


@dataclass
class ProfileOutcome:
    label: str
    stages: list[StageOutcome] = field(default_factory=list)
    aborted_at: Stage | None = None
    interrupted: bool = False
    problems: list[str] = field(default_factory=list)
    delivery: StressDelivery | None = None

    @property
    def records(self) -> list[RunRecord]:
        return [s.record for s in self.stages]

    @property
    def highest_held(self) -> Stage | None:
        """The last ramp step (or hold) before the first judged step that did not hold."""
        best: Stage | None = None
        for outcome in self.stages:
            stress = outcome.record.stress
            if stress is None or outcome.stage.kind not in ("step", "hold"):
                continue
            if stress.verdict != "held":
                break
            best = outcome.stage
        return best

    @property
    def spike_held(self) -> bool | None:
        for outcome in self.stages:
            if outcome.stage.kind == "spike" and outcome.record.stress is not None:
                return outcome.record.stress.verdict == "held"
        return None


def client_of(
    ctx: RunContext, stage: Stage, tally: StageTally, window: tuple[float, float], users: int, processes: int
) -> ClientResult:
    start, end = window
    batches = tally.batches
    mean_payload = tally.bytes_acked / tally.acked if tally.acked else 0.0
    requests = sum(tally.requests.values())
    return ClientResult(
        engine="locust",
        producers=users,
        processes=processes,
        started_at=start,
        window_start=start,
        window_end=end,
        finished_at=end,
        offered_records=round(
            (stage.users + stage.users_end) / 2 * ctx.plan.rate_per_producer * (end - start)
        ),
        records_sent=tally.sent,
        records_acked=tally.acked,
        records_failed=tally.failed,
        bytes_acked=tally.bytes_acked,
        produce_requests=requests,
        produce_requests_by_broker=dict(sorted(tally.requests.items())),
        records_acked_total=tally.acked,
        produce_requests_total=requests,
        records_per_request=tally.batch_records / batches if batches else None,
        batch_bytes=tally.batch_bytes / batches if batches else None,
        compression_ratio=tally.batch_records * mean_payload / tally.batch_bytes
        if tally.batch_bytes
        else None,
        delivery_latency_ms=latency_ms(tally.latency.hist),
    )


def stage_record(
    ctx: RunContext,
    stage: Stage,
    tally: StageTally,
    measure: StageMeasure,
    groups: dict[str, GroupTally],
    delivery: StressDelivery | None,
    verdict_override: Verdict | None = None,
    until: float | None = None,
) -> RunRecord:
    """One stage's record; `until` (epoch s) ends a stage the ramp left part way (an abort)."""
    gates = ctx.spec.gates
    realtime = [g.name for g in ctx.plan.groups if g.mode == "realtime"]
    lost = delivery.lost_by_stage.get(stage.index, 0) if delivery is not None else None
    verified = delivery is not None and delivery.verified
    readers = [groups[name].stage(stage.index) for name in realtime if name in groups]
    checks = stage_gates(gates, stage, measure.broker, tally, readers, loss_gates(lost, verified))
    failing = failed_gates(checks)
    verdict: Verdict
    if verdict_override == "interrupted" and any(c.gate != "verified" for c in failing):
        verdict = "failed"
    elif verdict_override is not None:
        verdict = verdict_override
    elif not stage.judged:
        verdict = "not judged"
    else:
        verdict = "failed" if failing else "held"
    users = max(stage.users, stage.users_end, 1)
    processes = max(1, min(ctx.workers, users))
    rate = ctx.plan.rate_per_producer
    plan = stage_run_plan(ctx.spec, ctx.plan.profile_label, ctx.plan.workload, stage, rate, users, processes)
    start, end = ctx.plan.t0 + stage.start_s, ctx.plan.t0 + stage.end_s
    if until is not None and start < until < end:
        end = until  # an aborted stage ends when the ramp stopped
    settle = min(ctx.spec.shape.settle_s, stage.duration_s / 2)
    consumers = [consumer_stage(g, groups.get(g.name, GroupTally()), stage) for g in ctx.plan.groups]
    step = StressStep(
        stress=ctx.spec.name,
        profile_label=ctx.plan.profile_label,
        stage=stage,
        t0=ctx.plan.t0,
        start=start,
        end=end,
        judged_from=start + settle,
        baseline_msgs_per_s=ctx.baseline_msgs_per_s,
        offered_msgs_per_s=stage.users * ctx.plan.rate_per_producer,
        verdict=verdict,
        gates=checks,
        consumers=consumers,
        remote=measure.remote,
        locust_workers=ctx.workers,
    )
    acked = delivery.acked_by_stage.get(stage.index, 0) if delivery is not None else tally.acked
    delivery_result = DeliveryResult(
        acked=acked,
        consumed=max(0, acked - (lost or 0)),
        lost=lost or 0,
        failed=tally.failed,
        indeterminate=tally.unacked,
        verified=verified,
    )
    problems = [describe(c) for c in failing]
    note = generator_note(tally)
    if note is not None:
        problems.append(note)
    if delivery is not None and delivery.detail:
        problems.append(delivery.detail)
    status = "failed" if (lost or verdict == "failed") else "ok"
    return build_record(
        plan,
        f"{ctx.spec.name}/{plan.name}--{ctx.run_stamp}",
        ctx.environment,
        list(ctx.plan.topics),
        client_of(ctx, stage, tally, (start, end), users, processes),
        delivery_result,
        measure.broker,
        status,
        problems,
        stress=step,
    )
