"""Run a stress test: for each profile (current, recommended, ... back to back) create fresh
topics, start the consumer groups and locust, follow the stage timeline, judge every held stage
against the gates as soon as its measurements are in (abort the ramp at the first failure when
`on_fail: abort`), verify delivery after the ramp, write one record per stage, delete the topics.

A profile of a kind locust does not drive runs stage by stage through its own engine instead
(tuner/runner/stress/engine_stages.py).

Ctrl-C stops locust and the consumers (all within seconds) and writes the records of the stages
already judged, marked interrupted (delivery not verified), before re-raising.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import AdminClient

from tuner.core.errors import BadInput, KbtError, Unreachable
from tuner.core.inputs import read_json
from tuner.core.kafka_clients import reached_admin
from tuner.driver.stress.consumer_pool import ConsumerPool
from tuner.driver.stress.plan import ABORT_FILE, STATUS_FILE, StressPlan
from tuner.driver.stress.tally import Tally
from tuner.driver.stress.verify import StressDelivery, verify_stress
from tuner.measure.broker_window import measure_window
from tuner.measure.meter_warmup import idle_meters_settled_at, wait_until_settled
from tuner.runner.lifecycle import clean_leftovers, fresh_topics, new_ids, topic_names
from tuner.runner.stress.engine_stages import EngineStages, StageParts, refuse_remote_workers, stage_parts
from tuner.runner.stress.gates import broker_gates, failed_gates, generator_note, producer_gates
from tuner.runner.stress.intermission import Intermission
from tuner.runner.stress.locust_processes import LocustOptions, LocustProcesses, remote_worker_command
from tuner.runner.stress.records import (
    ProfileOutcome,
    RunContext,
    StageMeasure,
    StageOutcome,
    remote_tier,
    stage_record,
)
from tuner.spec.stress_load import LoadedStress
from tuner.spec.stress_spec import Stage, on_locust
from tuner.store.environment import capture_environment
from tuner.store.record import Environment
from tuner.store.results import ResultsStore
from tuner.store.stress_section import GateCheck, Verdict
from tuner.target.base import Target
from tuner.target.security import client_config, connection
from tuner.target.topics import ADMIN_TIMEOUT_S, broker_ids, check_fits_cluster, delete_topics

LEAD_S = 20.0  # consumers subscribe and locust starts before t0
JOIN_GRACE_S = 5.0  # past t0 without every worker joined: the run stops
TICK_S = 0.5
END_SLACK_S = 60.0


class StressObserver:
    """Progress hooks; the CLI renders them. All no-ops by default."""

    def started(self) -> None:
        """The start's checks passed (the cluster answered, the topics fit): what the run says
        before them would stand above a failed check's one line."""

    def profile_started(self, label: str, plan: StressPlan) -> None: ...

    def engine_profile_started(self, label: str) -> None:
        """A profile driven stage by stage through its engine begins (it has no locust plan)."""

    def tick(self, label: str, plan: StressPlan, tally: Tally) -> None: ...

    def stage_judged(self, label: str, stage: Stage, checks: list[GateCheck]) -> None: ...

    def phase(self, label: str, text: str) -> None: ...

    def profile_finished(self, outcome: ProfileOutcome) -> None: ...


@dataclass
class StressOutcome:
    profiles: list[ProfileOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class StressInterrupted(KbtError):
    """Ctrl-C during a stress run; `outcome` holds what was recorded."""

    def __init__(self, outcome: StressOutcome) -> None:
        super().__init__("interrupted")
        self.outcome = outcome


class StressRunner:
    def __init__(
        self,
        target: Target,
        store: ResultsStore,
        locust: LocustOptions,
        observer: StressObserver | None = None,
        stages: StageParts | None = None,
    ) -> None:
        self.target = target
        self.store = store
        self.locust = locust
        self.stages = stages  # a profile locust does not drive runs stage by stage through its engine
        self.observer = observer or StressObserver()
        # The locust timeline's broker gates query the Prometheus the broker measurement uses (a
        # target file's with its auth and metric dialect): the stages' own when there are stages.
        self.prometheus = (stages if stages is not None else stage_parts(target)).prometheus
        # Remote workers follow the profiles: between two masters kbt holds the master's address.
        port = locust.master_port
        self.intermission = (
            Intermission(locust.master_host, port) if locust.remote_workers and port is not None else None
        )

    def run(self, loaded: LoadedStress, labels: Sequence[str]) -> StressOutcome:
        refuse_remote_workers(loaded, list(labels), self.locust.remote_workers)
        # not there: one line at once, before any profile
        admin = reached_admin(connection(self.target), ADMIN_TIMEOUT_S)
        ids = broker_ids(admin)
        brokers = len(ids)
        workload = loaded.spec.topics_with_configs()
        check_fits_cluster(workload.topics, brokers, ids)  # before any load, as a sweep checks
        environment = capture_environment(brokers, self.target.kafka_version, self.target.scrape_interval_s)
        outcome = StressOutcome()
        outcome.problems += clean_leftovers(admin, self.target.topic_ledger, self.target.topic_prefix)
        self.observer.started()
        try:
            if self.intermission is not None:  # the first master comes after topics and settled meters
                self.intermission.hold()
            for i, label in enumerate(labels):
                profile = self._profile_run(loaded, label, i, environment, admin, len(labels) - 1 - i)
                try:
                    profile.run()  # fills profile.outcome, interrupted or not
                except KeyboardInterrupt:
                    raise StressInterrupted(outcome) from None
                finally:
                    outcome.profiles.append(profile.outcome)
                    outcome.problems += profile.cleanup_problems
                self.observer.profile_finished(profile.outcome)
        finally:  # however the run ends, waiting workers find nothing there and stop in their time
            if self.intermission is not None:
                self.intermission.release()
        return outcome

    def _profile_run(
        self, loaded: LoadedStress, label: str, i: int, env: Environment, admin: AdminClient, after: int
    ) -> _ProfileRun | EngineStages:
        if on_locust(loaded.spec.profiles[label]):
            return _ProfileRun(self, loaded, label, i, env, admin, after)
        if self.stages is None:
            raise BadInput(f"profile {label}: this runner drives librdkafka profiles only")
        observer = self.observer
        observer.engine_profile_started(label)  # its live figures: the brokers' and the client's series
        return EngineStages(
            self.stages, self.store, loaded, label, env, admin, observer.phase, observer.stage_judged
        )


class _ProfileRun:
    """One profile's run through the whole timeline on locust."""

    def __init__(
        self,
        runner: StressRunner,
        loaded: LoadedStress,
        label: str,
        index: int,
        env: Environment,
        admin: AdminClient,
        profiles_after: int = 0,
    ) -> None:
        self.runner = runner
        self.profiles_after = profiles_after
        self.loaded = loaded
        self.label = label
        self.index = index
        self.environment = env
        self.admin = admin
        self.outcome = ProfileOutcome(label=label)
        self.cleanup_problems: list[str] = []
        self.measures: dict[int, StageMeasure] = {}
        self.judged: set[int] = set()
        self.abort_at: float | None = None
        self.tally = Tally()

    # ---- setup ---------------------------------------------------------------------------------

    def _await_settled_meters(self) -> None:
        """Brokers started moments ago (a fresh lab) report low idle ratios while Kafka pads their
        meters' window: the first judged stage must start past that, or its idle gate is wrong."""
        prometheus = self.runner.prometheus
        first = next((s.start_s for s in self.loaded.stages if s.judged), None)
        if prometheus is None or first is None:
            return
        settled = idle_meters_settled_at(prometheus)
        wait_until_settled(
            settled, self._lead_s + first, lambda text: self.runner.observer.phase(self.label, text)
        )

    @property
    def _lead_s(self) -> float:
        """From the plan to t0: consumers subscribe, locust starts and remote workers join."""
        locust = self.runner.locust
        return max(LEAD_S, locust.join_timeout_s) if locust.remote_workers else LEAD_S

    def _plan(self, topics: list[str], out_dir: Path, run_id: str) -> StressPlan:
        spec, target, locust = self.loaded.spec, self.runner.target, self.runner.locust
        workload = spec.topics_with_configs()
        resolved = getattr(workload.message, "resolved_path", None)
        return StressPlan(
            run_id=run_id,
            stress=spec.name,
            profile_label=self.label,
            profile=spec.profiles[self.label],
            workload=workload,
            topics=topics,
            bootstrap_servers=target.bootstrap_servers,
            rate_per_producer=self.loaded.baseline_msgs_per_s / spec.workload.producers,
            stages=self.loaded.stages,
            t0=time.time() + self._lead_s,
            groups=spec.groups,
            lagging_max_msgs_per_s=spec.lagging_max_msgs_per_s,
            producer_ports=list(locust.producer_ports),
            consumer_ports=list(locust.consumer_ports),
            out_dir=str(out_dir),
            message_path=str(resolved) if resolved is not None else None,
            client_properties=dict(target.client_properties),
            profiles_after=self.profiles_after,
        )

    def run(self) -> ProfileOutcome:
        spec = self.loaded.spec
        ids = new_ids(spec.name, self.label)
        workload = spec.topics_with_configs()
        topics = topic_names(self.runner.target.topic_prefix, workload.topics, self.index, ids, tag="s")
        out_dir = self.runner.store.root / spec.name / f"{self.label}--{ids.stamp}.locust"
        out_dir.mkdir(parents=True, exist_ok=True)
        self.runner.observer.phase(self.label, "creating topics")
        ledger = self.runner.target.topic_ledger
        with fresh_topics(self.admin, workload.topics, topics, self.cleanup_problems, delete_topics, ledger):
            self._await_settled_meters()
            pool: ConsumerPool | None = None
            locust: LocustProcesses | None = None
            try:
                plan = self._plan(topics, out_dir, ids.run_id)
                (out_dir / "plan.json").write_text(plan.model_dump_json(), encoding="utf-8")
                self.ctx = RunContext(
                    spec=spec,
                    plan=plan,
                    baseline_msgs_per_s=self.loaded.baseline_msgs_per_s,
                    environment=self.environment,
                    workers=max(1, self.runner.locust.total_workers),
                    run_stamp=ids.stamp,
                )
                self.runner.observer.phase(self.label, "starting consumers and locust")
                pool = ConsumerPool(plan)
                pool.start()
                locust = LocustProcesses(self.runner.locust, plan, out_dir)
                if self.runner.intermission is not None:
                    self.runner.intermission.release()  # the master binds the address kbt held
                locust.start()
                if self.runner.locust.remote_workers:
                    self.runner.observer.phase(self.label, self._waiting_for_workers(plan))
                self.runner.observer.profile_started(self.label, plan)
                try:
                    self._follow(plan, pool, locust, out_dir)
                except KeyboardInterrupt:
                    self._interrupted(plan, pool, locust, out_dir)
                    raise
                locust.wait(10)
                self._hold_for_next(locust)
                self._read_status(out_dir)
                if self.abort_at is None:  # after an abort the stages left have nothing to read for
                    self.runner.observer.phase(self.label, "consumers finishing")
                    pool.wait(max(1.0, plan.end + 5 - time.time()))
                pool.stop()
                self.runner.observer.phase(self.label, "verifying delivery")
                delivery = verify_stress(
                    plan.bootstrap_servers, self.tally, security=client_config(self.runner.target)
                )
                self.outcome.delivery = delivery
                self.runner.observer.phase(self.label, "measuring")
                self._write(plan, pool, delivery)
            finally:
                if locust is not None:
                    locust.stop()
                if pool is not None:
                    pool.stop()
        return self.outcome

    def _hold_for_next(self, locust: LocustProcesses) -> None:
        """Another profile follows: this master gone, its address held for the remote workers
        until the next master binds it (tuner/runner/stress/intermission.py)."""
        intermission = self.runner.intermission
        if self.profiles_after > 0 and intermission is not None:
            locust.stop()
            intermission.hold()

    # ---- following the timeline ------------------------------------------------------------------

    def _grace_s(self) -> float:
        scrape = self.runner.target.scrape_interval_s + 1.0
        slo = (self.loaded.spec.gates.p99_ms or 0) / 1000 + 1.0
        return max(scrape, 4.5, slo)

    def _waiting_for_workers(self, plan: StressPlan) -> str:
        options = self.runner.locust
        return (
            f"waiting up to {plan.t0 - time.time():.0f} s for {options.remote_workers} remote"
            f" worker(s); on each load machine run: {remote_worker_command(options)}"
        )

    def _check_joined(self, plan: StressPlan, out_dir: Path, now: float) -> None:
        """The master starts the shape (and writes its status) only once every expected worker
        has joined: no status past t0 means some never came."""
        if now < plan.t0 + JOIN_GRACE_S or (out_dir / STATUS_FILE).exists():
            return
        options = self.runner.locust
        raise Unreachable(
            f"not all {options.total_workers} locust workers joined by the first stage"
            f" ({options.remote_workers} remote expected; start each with:"
            f" {remote_worker_command(options)}, or give them longer with --join-timeout)"
        )

    def _follow(self, plan: StressPlan, pool: ConsumerPool, locust: LocustProcesses, out_dir: Path) -> None:
        grace = self._grace_s()
        deadline = plan.end + END_SLACK_S
        while locust.running():
            now = time.time()
            if self.runner.locust.remote_workers:
                self._check_joined(plan, out_dir, now)
            pool.poll()
            self._read_status(out_dir)
            if self.abort_at is None:  # after an abort no further stage starts
                self.runner.observer.tick(self.label, plan, self.tally)
            for stage in plan.stages:
                end = plan.t0 + stage.end_s
                if stage.judged and stage.index not in self.judged and now >= end + grace:
                    if self.abort_at is not None and end > self.abort_at:
                        continue
                    self._judge_now(plan, stage, out_dir)
            if now > deadline:
                self.outcome.problems.append("locust did not finish on time: stopped")
                break
            time.sleep(TICK_S)
        master = locust.master.returncode
        # 1 is also locust's exit after a run with failed requests, but such a run wrote its status
        if master not in (None, 0) and not (out_dir / STATUS_FILE).exists():
            raise KbtError(f"locust exited with {master} before the run started: {locust.log_tail()}")

    def _judge_now(self, plan: StressPlan, stage: Stage, out_dir: Path) -> None:
        self.judged.add(stage.index)
        measure = self._measure(plan, stage)
        self.measures[stage.index] = measure
        gates = self.loaded.spec.gates
        tally = self.tally.stage(stage.index)
        checks = [*broker_gates(gates, measure.broker), *producer_gates(gates, tally)]
        self.runner.observer.stage_judged(self.label, stage, checks)
        note = generator_note(tally)
        if note is not None:
            self.runner.observer.phase(self.label, f"{stage.name}: {note}")
        if failed_gates(checks) and gates.on_fail == "abort" and self.abort_at is None:
            self.abort_at = time.time()
            self.outcome.aborted_at = stage
            (out_dir / ABORT_FILE).write_text(stage.label, encoding="utf-8")
            self.runner.observer.phase(self.label, f"{stage.name} failed: ramp aborted")

    def _measure(self, plan: StressPlan, stage: Stage, until: float | None = None) -> StageMeasure:
        """The brokers over the stage's judged part, from past its settle time (up to `until` when
        the ramp stopped in it), the remote tier by halves; the window's origin is t0."""
        prom = self.runner.prometheus
        if prom is None:
            return StageMeasure()
        start = plan.t0 + stage.start_s
        end = plan.t0 + stage.end_s if until is None else min(plan.t0 + stage.end_s, until)
        settled = start + min(self.loaded.spec.shape.settle_s, stage.duration_s / 2, (end - start) / 2)
        mid = min(start + stage.duration_s / 2, end)
        scrape_s = self.runner.target.scrape_interval_s
        return StageMeasure(
            broker=measure_window(prom, settled, end, plan.topics, scrape_s, time.time(), plan.t0),
            remote=remote_tier(prom, plan.topics, settled, end, mid),
        )

    def _read_status(self, out_dir: Path) -> None:
        path = out_dir / STATUS_FILE
        try:
            data = read_json(path, "stress status")
        except BadInput:  # not written yet, or caught mid-write by an older worker
            return
        if not isinstance(data, dict):
            return
        self.tally = Tally.from_wire(data.get("tally", {}))

    # ---- records -------------------------------------------------------------------------------

    def _write(self, plan: StressPlan, pool: ConsumerPool, delivery: StressDelivery) -> None:
        until = self.abort_at if self.abort_at is not None else float("inf")
        for stage in plan.stages:
            if stage.kind == "drain":
                continue
            started = plan.t0 + stage.start_s < until
            if not started:
                break
            aborted = plan.t0 + stage.end_s > until  # the stage did not run to its end
            # The ramp stopped part way: the stage ended with the last record the producers were due
            # to send in it (they stop a moment after the abort), else at the abort itself.
            last_due = self.tally.stage(stage.index).last_due
            cut = (last_due if last_due > 0 else until) if aborted else None
            if stage.index not in self.measures or aborted:
                self.measures[stage.index] = self._measure(plan, stage, cut)
            self._record(
                stage, self.measures[stage.index], pool, delivery, "aborted" if aborted else None, cut
            )

    def _record(
        self,
        stage: Stage,
        measure: StageMeasure,
        pool: ConsumerPool,
        delivery: StressDelivery | None,
        verdict: Verdict | None,
        until: float | None = None,
    ) -> None:
        """Write the stage's record (`verdict`: aborted or interrupted, else judged from its gates)."""
        tally = self.tally.stage(stage.index)
        record = stage_record(self.ctx, stage, tally, measure, pool.tallies, delivery, verdict, until)
        self.runner.store.write(record)
        self.outcome.stages.append(StageOutcome(stage, record))

    def _interrupted(
        self, plan: StressPlan, pool: ConsumerPool, locust: LocustProcesses, out_dir: Path
    ) -> None:
        """Ctrl-C: stop everything now, keep the stages already judged (delivery not verified)."""
        self.outcome.interrupted = True
        locust.stop()
        pool.stop()
        self._read_status(out_dir)
        for stage in plan.stages:
            if stage.index not in self.judged:
                continue
            self._record(stage, self.measures.get(stage.index, StageMeasure()), pool, None, "interrupted")
