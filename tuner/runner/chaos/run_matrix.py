"""Run the fault matrix: each (scenario, profile) is one run of the sweep spec's workload with a fault
script beside it, verified like every sweep run (lost = acked - consumed, duplicates, per-partition
order) and written as a RunRecord carrying the fault, its verdict and `degraded`.

A run is **degraded** when the cluster could not take every write: partitions fell under
min.insync.replicas, or sends failed or timed out. Degraded records are never tuning results
(`RunRecord.tuning_result`), and neither is any chaos record.

The load lasts the scenario's duration (its measured window) and then goes on until the fault
script is done, up to `load_cap_s()`: a restarted broker can take a minute and more to rejoin the
ISR on a busy machine, and a fault cut short by the end of the load proves less than it claims (the
run fails then).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tuner.core.errors import BadInput, Interrupted, KbtError, did_you_mean
from tuner.core.kafka_clients import Connection, admin_client, reached_admin, served
from tuner.core.paths import KAFKA_VERSION
from tuner.driver.engines import engine_of
from tuner.driver.result import DriverResult
from tuner.lab import LabState
from tuner.lab.health import silent_logger
from tuner.runner.chaos.faults import FaultContext, Stopped
from tuner.runner.chaos.netem import netem_status
from tuner.runner.chaos.scenarios import Scenario
from tuner.runner.lifecycle import Engine, Figures, Observer, Run, RunLifecycle, RunPolicy
from tuner.spec.clients import profile_of
from tuner.spec.loader import LoadedSweep
from tuner.spec.sweep import RunPlan
from tuner.store.environment import capture_environment
from tuner.store.fault import Expectation, FaultRun
from tuner.store.figures import DeliveryResult
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore
from tuner.target.base import Target
from tuner.target.lab import lab_state
from tuner.target.topics import ADMIN_TIMEOUT_S, delete_topics

REPLICATION_FACTOR = 3
MIN_INSYNC_REPLICAS = 2
LOAD_START_TIMEOUT_S = 120.0
SCRIPT_MARGIN_S = 3.0  # the load goes on this long after the fault script is done (and restored)
OVERRUN_MIN_S = 120.0  # how far past its duration the load may go for a slow fault script (at least)
OVERRUN_FACTOR = 2.0  # ... and at most this many times its duration more
RESTORE_WAIT_S = 120.0
READY_WAIT_S = 300.0  # a broker restarted by the previous run may still be loading its logs
DELETE_ATTEMPTS = 3


def load_cap_s(scenario: Scenario) -> float:
    """The longest the load of `scenario` may last while its fault script is still running: three
    times its duration, and at least OVERRUN_MIN_S more (a broker restarted on a machine at load 60
    took 3 min to rejoin the ISR). The script is cut short there, and the run fails."""
    return scenario.duration_s + max(OVERRUN_MIN_S, OVERRUN_FACTOR * scenario.duration_s)


@dataclass(frozen=True)
class ChaosRun:
    scenario: Scenario
    plan: RunPlan


@dataclass(frozen=True)
class SkippedRun:
    scenario: Scenario
    profile: str
    reason: str


@dataclass
class ChaosOutcome:
    records: list[RunRecord] = field(default_factory=list)
    earlier: list[RunRecord] = field(default_factory=list)  # completed before (--resume)
    skipped: list[SkippedRun] = field(default_factory=list)
    errors: list[SkippedRun] = field(default_factory=list)  # runs that ended without a record
    problems: list[str] = field(default_factory=list)

    @property
    def all_records(self) -> list[RunRecord]:
        return [*self.earlier, *self.records]

    @property
    def failed(self) -> list[RunRecord]:
        return [r for r in self.all_records if r.fault is None or r.fault.verdict != "pass"]


class ChaosObserver:
    """Progress hooks for the CLI; no-ops by default."""

    def run_started(self, run: ChaosRun) -> None: ...

    def event(self, run: ChaosRun, at_s: float, what: str) -> None: ...

    def run_finished(self, run: ChaosRun, record: RunRecord, path: str) -> None: ...

    def run_failed(self, run: ChaosRun, message: str) -> None: ...


# ---- planning ----------------------------------------------------------------------------------


def chaos_plans(
    loaded: LoadedSweep, scenarios: list[Scenario], profiles: list[str] | None = None
) -> list[ChaosRun]:
    """(scenario x profile) runs of the spec's workload with the no-loss topic settings."""
    base = {p.profile.name: p for p in loaded.runs}
    names = profiles or [p.name for p in loaded.spec.profiles]
    for name in names:
        if name not in base:
            raise BadInput(f'no profile named "{name}" in {loaded.spec.name}{did_you_mean(name, base)}')
    pairs = [(scenario, name) for scenario in scenarios for name in names]
    return [ChaosRun(s, chaos_plan(base[n], s, i, loaded.spec.name)) for i, (s, n) in enumerate(pairs)]


def chaos_plan(base: RunPlan, scenario: Scenario, index: int, spec_name: str) -> RunPlan:
    if not engine_of(base).capabilities.holds_load:  # the fault window holds the load open
        raise BadInput(
            f"profile {base.profile.name}: kbt chaos drives librdkafka profiles (this one is"
            f" client {base.profile.client})"
        )
    workload = base.workload
    no_loss = {"min.insync.replicas": str(MIN_INSYNC_REPLICAS), **scenario.topic_configs}
    topics = [
        t.model_copy(update={"replication_factor": REPLICATION_FACTOR, "configs": {**t.configs, **no_loss}})
        for t in workload.topics
    ]
    workload = workload.model_copy(
        update={
            "topics": topics,
            "duration_s": scenario.duration_s,
            "warmup_s": min(workload.warmup_s, scenario.duration_s / 4),
        }
    )
    data = {**base.profile.model_dump(mode="json"), **scenario.profile}
    # Connection closes are the fault itself here: librdkafka need not log each one.
    data["overrides"] = {"log.connection.close": "false", **base.profile.raw_properties, **scenario.overrides}
    try:
        profile = profile_of(data)
    except ValueError as exc:
        first = str(exc).splitlines()[-1].strip()
        raise BadInput(f"profile {base.profile.name} under chaos scenario {scenario.name}: {first}") from None
    return RunPlan(
        index=index,
        name=f"{scenario.name}-{base.profile.name}",
        sweep=f"{spec_name}-chaos",
        workload=workload,
        profile=profile,
        assignments={"fault": scenario.name, "profile": base.profile.name},
        slo=base.slo,
    )


def missing_requirement(scenario: Scenario, state: LabState, netem: tuple[bool, str]) -> str | None:
    """Why `scenario` cannot run on this lab (None when it can)."""
    for need in scenario.needs:
        if need == "toxiproxy" and not state.config.via_toxiproxy:
            return "needs a lab behind Toxiproxy (kbt lab up --via-toxiproxy)"
        if need == "tiered" and not state.tiered:
            return "needs a lab with tiered storage (kbt lab up --tiered)"
        if need == "netem" and not netem[0]:
            return netem[1]
    return None


# ---- verdicts ----------------------------------------------------------------------------------


def degraded_reasons(delivery: DeliveryResult, under_min_isr_s: float) -> list[str]:
    reasons = []
    if under_min_isr_s > 0:
        reasons.append(f"partitions under min.insync.replicas for ~{under_min_isr_s:.0f} s")
    if delivery.failed or delivery.indeterminate:
        reasons.append(f"{delivery.failed} sends failed, {delivery.indeterminate} with unknown outcome")
    return reasons


def expectation_verdict(
    expect: Expectation,
    delivery: DeliveryResult,
    degraded: bool,
    script_error: str | None,
    degraded_why: list[str] | None = None,
) -> tuple[bool, list[str]]:
    """Did the run come out the way its scenario says it must? (passed, reasons)"""
    found = [
        f"{delivery.lost} acked records lost",
        f"{delivery.duplicates} duplicates",
        f"{delivery.out_of_order} out of order",
    ]
    why: list[str] = []
    if script_error:
        why.append(f"the fault script failed: {script_error}")
    if not delivery.verified:
        why.append("delivery was not verified")
    if expect == "no-loss":
        if delivery.lost or delivery.duplicates or delivery.out_of_order:
            why.append("expected none, found " + ", ".join(found))
    elif expect == "detects-loss":
        if not (delivery.lost or delivery.duplicates):
            why.append("negative control: the verification saw neither loss nor duplicates")
    elif expect == "degraded":
        if not degraded:
            why.append("expected a degraded run (sends failing or timing out)")
        if delivery.lost:
            why.append(f"{delivery.lost} acked records lost")
    passed = not why
    if passed:
        why.append(", ".join(found))
    if degraded and expect == "no-loss":  # no acked record lost, but not a fault the cluster absorbed
        because = "; ".join(degraded_why) if degraded_why else "the cluster could not take every write"
        why.append(f"degraded: {because}")
    return passed, why


# ---- running -----------------------------------------------------------------------------------


class IsrWatch(threading.Thread):
    """Samples, once a second, whether any partition is under min.insync.replicas."""

    def __init__(self, ctx: FaultContext, stop: threading.Event) -> None:
        super().__init__(name="kbt-chaos-isr", daemon=True)
        self.ctx = ctx
        self.stop = stop
        self.under_s = 0.0

    def run(self) -> None:
        last = time.monotonic()
        while not self.stop.wait(1.0):
            now = time.monotonic()
            try:
                under = self.ctx.under_min_isr()
            except Exception:  # a sample lost to the fault itself
                under = None
            if under:
                self.under_s += now - last
            last = now


class ChaosPolicy(RunPolicy):
    """A sweep run with the scenario's fault script beside it: no settle wait or broker window (the
    figures of a fault are never tuning results), the load held until the script is done, topics
    deleted once the cluster is whole again, and the fault's verdict in the record."""

    measure_brokers = False

    def __init__(self, chaos_run: ChaosRun, state: LabState, observer: ChaosObserver) -> None:
        self.scenario = chaos_run.scenario
        self.state = state
        self.observer = observer
        self.chaos_run = chaos_run
        self.script_error: list[str] = []
        self.under_min_isr_s = 0.0
        self.ctx: FaultContext | None = None

    def delete_topics(self, admin: Any, topics: list[str]) -> list[str]:
        """Delete the run's topics, retrying once the cluster is whole again: a topic left behind (the
        controller timed out right after a fault) would weigh on every later broker restart."""
        problems: list[str] = []
        for attempt in range(DELETE_ATTEMPTS):
            problems = delete_topics(admin, topics)
            if not problems:
                return []
            if attempt + 1 < DELETE_ATTEMPTS:
                wait_cluster_ready(self.state, READY_WAIT_S)
                time.sleep(5)
                try:
                    existing = admin.list_topics(timeout=10).topics
                except Exception:  # cleanup reports, never raises: try every topic again
                    continue
                topics = [t for t in topics if t in existing]
                if not topics:
                    return []
        return problems

    def drive(self, run: Run, engine: Engine) -> DriverResult:
        stop = threading.Event()
        done = threading.Event()
        ctx = self.ctx = FaultContext(self.state.lab_dir, run.topics, MIN_INSYNC_REPLICAS, stop)
        ctx.on_note = lambda at, what: self.observer.event(self.chaos_run, at, what)
        watch = IsrWatch(ctx, stop)
        script = threading.Thread(
            target=_run_script,
            args=(self.scenario, ctx, run.problems, self.script_error, done),
            name="kbt-chaos-script",
            daemon=True,
        )
        script.start()
        watch.start()
        try:
            hold = LoadHold(ctx, self.scenario, done)
            return engine.run(run.plan, run.topics, run.ids.run_id, run.target, hold=hold)
        finally:
            stop.set()
            script.join(timeout=RESTORE_WAIT_S)
            watch.join(timeout=10)
            self.under_min_isr_s = watch.under_s

    def finish(self, run: Run, figures: Figures, fields: dict[str, Any]) -> dict[str, Any]:
        assert self.ctx is not None
        delivery = figures.delivery
        scenario = self.scenario
        reasons = degraded_reasons(delivery, self.under_min_isr_s)
        error = self.script_error[0] if self.script_error else None
        passed, why = expectation_verdict(scenario.expect, delivery, bool(reasons), error, reasons)
        notes = [n for n in fields["problems"] if n != "no broker measurement"]
        return {
            "status": fields["status"],
            "problems": notes + [f"degraded: {r}" for r in reasons],
            "degraded": bool(reasons),
            "fault": FaultRun(
                scenario=scenario.name,
                description=scenario.summary,
                expect=scenario.expect,
                events=list(self.ctx.events),
                verdict="pass" if passed else "fail",
                reasons=why,
            ),
        }


@dataclass(eq=False)
class ChaosRunner:
    target: Target
    engine: Engine
    store: ResultsStore
    observer: ChaosObserver = field(default_factory=ChaosObserver)

    def run(self, runs: list[ChaosRun], resume: bool = False) -> ChaosOutcome:
        outcome = ChaosOutcome()
        state = lab_state(self.target)
        if len(state.brokers) < REPLICATION_FACTOR:
            raise BadInput(
                f"kbt chaos needs a lab of {REPLICATION_FACTOR} brokers (RF 3, min.insync.replicas 2);"
                f" this one has {len(state.brokers)}"
            )
        netem = netem_status() if any("netem" in r.scenario.needs for r in runs) else (True, "")
        environment = capture_environment(len(state.brokers), KAFKA_VERSION, state.config.scrape_interval_s)
        # Admin requests bypass the proxies: the faults themselves must not stop the cleanup.
        direct = Connection(state.direct_bootstrap_servers)
        # a stopped lab: one line at once, not each run's wait for a restarted broker
        admin = reached_admin(direct, ADMIN_TIMEOUT_S)
        lifecycle = RunLifecycle(self.target, self.engine, None, self.store, environment, Observer(), admin)
        for run in runs:
            why = missing_requirement(run.scenario, state, netem)
            if why is not None:
                outcome.skipped.append(SkippedRun(run.scenario, run.plan.profile.name, why))
                continue
            plan = run.plan
            done = self.store.completed(plan.sweep, plan.name, plan.spec_hash) if resume else None
            if done is not None:
                outcome.earlier.append(done)
                continue
            self.observer.run_started(run)
            outcome.problems += wait_cluster_ready(state, READY_WAIT_S)
            outcome.problems += wait_replicas_in_sync(state, READY_WAIT_S)
            policy = ChaosPolicy(run, state, self.observer)
            try:
                record, path = lifecycle.run(plan, policy, outcome.problems)
            except Interrupted:
                raise
            except KbtError as exc:  # this run has no record; the others still run
                outcome.errors.append(SkippedRun(run.scenario, run.plan.profile.name, exc.message))
                self.observer.run_failed(run, exc.message)
                continue
            outcome.records.append(record)
            self.observer.run_finished(run, record, path)
        return outcome


class LoadHold:
    """The engine's `hold`: True while the fault script runs (and SCRIPT_MARGIN_S after it is done),
    never past the script's deadline plus RESTORE_WAIT_S. Notes when the load goes past its duration
    and when it ends, so the record says how long the fault really took."""

    def __init__(self, ctx: FaultContext, scenario: Scenario, done: threading.Event) -> None:
        self.ctx = ctx
        self.duration_s = scenario.duration_s
        self.cap_s = load_cap_s(scenario)
        self.done = done
        self.done_at: float | None = None
        self.past_window = False

    def __call__(self) -> bool:
        now = time.time()
        if self.done.is_set() and self.done_at is None:
            self.done_at = now
        held = (self.done_at is None or now < self.done_at + SCRIPT_MARGIN_S) and (
            now < self.ctx.deadline + RESTORE_WAIT_S
        )
        flowing = self.ctx.deadline != float("inf")  # the script saw records arrive
        over = flowing and self.ctx.now() > self.duration_s
        if held and over and not self.past_window:
            self.past_window = True
            self.ctx.note(
                f"the load goes on past its {self.duration_s:g} s until the fault script is done"
                f" (at most {self.cap_s:g} s)"
            )
        if not held and self.past_window:
            self.ctx.note(f"load ended after {self.ctx.now():.0f} s")
        return held


def wait_cluster_ready(state: LabState, timeout_s: float) -> list[str]:
    """Wait (bounded) until every lab broker is registered again; returns a problem if not."""
    from tuner.lab.health import brokers_in_metadata

    wanted = {b.id for b in state.brokers}
    deadline = time.monotonic() + timeout_s
    while True:
        present = brokers_in_metadata(state.direct_bootstrap_servers)
        if wanted <= present:
            return []
        if time.monotonic() > deadline:
            missing = ", ".join(str(b) for b in sorted(wanted - present))
            return [f"broker(s) {missing} not back in the cluster after {timeout_s:.0f} s"]
        time.sleep(2)


def wait_replicas_in_sync(state: LabState, timeout_s: float) -> list[str]:
    """Wait (bounded) until no partition of the lab is under-replicated, so that a run starts on a
    whole cluster however long the previous run's restarted broker needs to catch up; returns a
    problem if not."""
    # librdkafka's lines of a broker still down go to the silent logger, served at each look, not to
    # the terminal between the chaos run's lines
    admin = admin_client(
        Connection(state.direct_bootstrap_servers), {"logger": silent_logger("kbt.chaos.client")}
    )
    deadline = time.monotonic() + timeout_s
    while True:
        served(admin)
        try:
            topics = admin.list_topics(timeout=10).topics
            behind = [f"{t}-{p}" for t, meta in topics.items() for p, part in meta.partitions.items()
                      if len(part.isrs) < len(part.replicas)]  # fmt: skip
        except Exception:  # metadata not answering yet: keep waiting
            behind = ["(no metadata)"]
        if not behind:
            return []
        if time.monotonic() > deadline:
            return [f"{len(behind)} partition(s) under-replicated after {timeout_s:.0f} s, e.g. {behind[0]}"]
        time.sleep(2)


def _run_script(
    scenario: Scenario,
    ctx: FaultContext,
    problems: list[str],
    errors: list[str],
    done: threading.Event | None = None,
) -> None:
    """The fault script's thread: wait for the load, run the script, always restore, then say so
    (`done`: the load may end)."""
    try:
        ctx.wait_for_load(LOAD_START_TIMEOUT_S, load_cap_s(scenario) - SCRIPT_MARGIN_S)
        scenario.script(ctx)
        ctx.note("fault script done")
    except Stopped as stopped:  # the fault was not carried out in full: the run proves less than it says
        ctx.note(f"fault script {stopped}")
        errors.append(str(stopped))
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
        ctx.note(f"fault script failed: {exc}")
    finally:
        try:
            problems += ctx.restore()
        finally:
            if done is not None:
                done.set()
