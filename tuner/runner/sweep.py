"""Run a sweep: for each named run create fresh topics, drive the load, measure the broker window,
judge delivery, write the record, delete the topics. Completed records survive an interrupt and
`resume` skips them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tuner.driver.result import DriverResult
from tuner.measure.broker_window import BrokerWindow
from tuner.measure.meter_warmup import wait_until_settled
from tuner.runner.topics import (
    admin_client,
    broker_count,
    check_fits_cluster,
    create_topics,
    delete_topics,
    run_topic_name,
)
from tuner.runner.verdict import judge
from tuner.spec.loader import LoadedSweep
from tuner.spec.sweep import RunPlan
from tuner.store.environment import capture_environment
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore, make_run_id, run_stamp


@dataclass(frozen=True)
class Target:
    """The cluster a sweep runs against (usually the lab)."""

    bootstrap_servers: str
    prometheus_url: str | None
    client_exporter_ports: Sequence[int] = ()
    kafka_version: str | None = None
    scrape_interval_s: float = 5.0
    # SASL_SSL listeners and the lab's security directory ("" / None: the lab runs without them).
    secure_bootstrap_servers: str = ""
    security_dir: Path | None = None


class Engine(Protocol):
    """Drives one run's load and verifies its delivery (the driver layer does the work)."""

    def run(self, plan: RunPlan, topics: list[str], run_id: str, target: Target) -> DriverResult: ...


class Measurer(Protocol):
    """Broker-side measurement of one run's window."""

    def measure(self, run_started: float, start: float, end: float, topics: list[str]) -> BrokerWindow: ...

    def settled_at(self) -> float | None:
        """Epoch seconds from which the brokers' idle ratios are trustworthy (None: unknown)."""
        ...


class Observer:
    """Progress hooks; the CLI renders them. All no-ops by default."""

    def sweep_started(self, runs: list[RunPlan], skipped: list[RunPlan]) -> None: ...

    def run_skipped(self, plan: RunPlan, record: RunRecord) -> None: ...

    def run_started(self, plan: RunPlan) -> None: ...

    def phase(self, plan: RunPlan, text: str) -> None: ...

    def run_finished(self, plan: RunPlan, record: RunRecord, path: str) -> None: ...


@dataclass
class SweepOutcome:
    records: list[RunRecord] = field(default_factory=list)  # written by this invocation
    skipped: list[RunRecord] = field(default_factory=list)  # completed earlier (--resume)
    problems: list[str] = field(default_factory=list)  # cleanup problems

    @property
    def all_records(self) -> list[RunRecord]:
        return [*self.skipped, *self.records]

    @property
    def failed(self) -> list[RunRecord]:
        return [r for r in self.all_records if r.status != "ok"]


class SweepRunner:
    def __init__(
        self,
        target: Target,
        engine: Engine,
        measurer: Measurer | None,
        store: ResultsStore,
        observer: Observer | None = None,
    ) -> None:
        self.target = target
        self.engine = engine
        self.measurer = measurer
        self.store = store
        self.observer = observer or Observer()

    def run(self, loaded: LoadedSweep, resume: bool = False) -> SweepOutcome:
        outcome = SweepOutcome()
        todo: list[RunPlan] = []
        for plan in loaded.runs:
            done = self.store.completed(plan.sweep, plan.name, plan.spec_hash) if resume else None
            if done is not None:
                outcome.skipped.append(done)
            else:
                todo.append(plan)
        admin = admin_client(self.target.bootstrap_servers)
        brokers = broker_count(admin)
        for plan in todo:
            check_fits_cluster(plan.workload.topics, brokers)
        self.observer.sweep_started(todo, [p for p in loaded.runs if p not in todo])
        for record in outcome.skipped:
            plan = next(p for p in loaded.runs if p.name == record.name)
            self.observer.run_skipped(plan, record)
        environment = capture_environment(brokers, self.target.kafka_version, self.target.scrape_interval_s)
        for plan in todo:
            started = time.time()
            run_id = make_run_id(plan.sweep, plan.name, started)
            stamp = run_stamp(started).replace(".", "").replace("T", "").rstrip("Z")[-12:]
            topics = [run_topic_name(t.name, plan.index, stamp) for t in plan.workload.topics]
            self.observer.run_started(plan)
            try:
                self.observer.phase(plan, "creating topics")
                create_topics(admin, plan.workload.topics, topics)
                self._await_settled_meters(plan)
                self.observer.phase(plan, "producing")
                result = self.engine.run(plan, topics, run_id, self.target)
                broker = self._measure(plan, result, topics)
            finally:
                # Runs also on Ctrl-C: an interrupted run leaves no topics and no record behind.
                outcome.problems += delete_topics(admin, topics)
            status, problems = judge(plan, result, broker)
            record = RunRecord(
                run_id=run_id,
                name=plan.name,
                sweep=plan.sweep,
                index=plan.index,
                spec_hash=plan.spec_hash,
                plan=plan,
                environment=environment,
                created_at=time.time(),
                topics=topics,
                client=result.client,
                delivery=result.delivery,
                broker=broker,
                status=status,
                problems=problems,
            )
            path = self.store.write(record)
            outcome.records.append(record)
            self.observer.run_finished(plan, record, str(path))
        return outcome

    def _await_settled_meters(self, plan: RunPlan) -> None:
        """A run on brokers started moments ago (a fresh lab) would measure their idle ratios while
        Kafka still pads the meters' window: wait until the measured window starts past that."""
        settled = self.measurer.settled_at() if self.measurer is not None else None
        wait_until_settled(settled, plan.workload.warmup_s, lambda text: self.observer.phase(plan, text))

    def _measure(self, plan: RunPlan, result: DriverResult, topics: list[str]) -> BrokerWindow | None:
        if self.measurer is None:
            return None
        # The last scrape of the window lands up to one interval after it ends: wait for it.
        wait_until = result.client.finished_at + self.target.scrape_interval_s + 1.0
        self.observer.phase(plan, "measuring brokers")
        delay = wait_until - time.time()
        if delay > 0:
            time.sleep(delay)
        client = result.client
        return self.measurer.measure(client.started_at, client.window_start, client.window_end, topics)
