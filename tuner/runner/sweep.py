"""Run a sweep: every named run of a spec through the run lifecycle (fresh topics, load, broker
window, delivery verdict, record, cleanup). Completed records survive an interrupt and `resume`
skips them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tuner.core.kafka_clients import reached_admin
from tuner.runner.lifecycle import Engine, Measurer, Observer, RunLifecycle, RunPolicy, clean_leftovers
from tuner.spec.loader import LoadedSweep
from tuner.spec.sweep import RunPlan
from tuner.store.environment import capture_environment
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore
from tuner.target.base import Target
from tuner.target.security import connection
from tuner.target.topics import ADMIN_TIMEOUT_S, broker_ids, check_fits_cluster


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
        return [r for r in self.all_records if r.status == "failed"]

    @property
    def unverified(self) -> list[RunRecord]:
        return [r for r in self.all_records if r.status == "unverified"]

    @property
    def unclean(self) -> list[RunRecord]:
        return [r for r in self.all_records if r.status == "unclean"]


@dataclass(eq=False)
class SweepRunner:
    target: Target
    engine: Engine
    measurer: Measurer | None
    store: ResultsStore
    observer: Observer = field(default_factory=Observer)

    def run(self, loaded: LoadedSweep, resume: bool = False) -> SweepOutcome:
        outcome = SweepOutcome()
        todo: list[RunPlan] = []
        for plan in loaded.runs:
            done = self.store.completed(plan.sweep, plan.name, plan.spec_hash) if resume else None
            if done is not None:
                outcome.skipped.append(done)
            else:
                todo.append(plan)
        # the runs' admin client, its first call the start's check (a cluster that is not there: one
        # line at once, before any run), unless the preflight's had the cluster's answer
        admin = reached_admin(connection(self.target), ADMIN_TIMEOUT_S)
        ids = broker_ids(admin)
        brokers = len(ids)
        outcome.problems += clean_leftovers(admin, self.target.topic_ledger, self.target.topic_prefix)
        for plan in todo:
            check_fits_cluster(plan.workload.topics, brokers, ids)
        self.observer.sweep_started(todo, [p for p in loaded.runs if p not in todo])
        for record in outcome.skipped:
            plan = next(p for p in loaded.runs if p.name == record.name)
            self.observer.run_skipped(plan, record)
        environment = capture_environment(brokers, self.target.kafka_version, self.target.scrape_interval_s)
        lifecycle = RunLifecycle(
            self.target, self.engine, self.measurer, self.store, environment, self.observer, admin
        )
        for plan in todo:
            record, _ = lifecycle.run(plan, RunPolicy(), outcome.problems)
            outcome.records.append(record)
        return outcome
