"""One run lifecycle: identity, fresh topics, settle wait, drive, measure, verify, judge, record,
cleanup, interruption.

    lifecycle = RunLifecycle(target, engine, measurer, store, environment, observer)
    record = lifecycle.run(plan, RunPolicy())       # a sweep run
    record = lifecycle.run(plan, ChaosPolicy(...))  # the same run with a fault script beside it

Sweeps, live recommend (a one-run sweep per trial), chaos and the stages of a stress test driven
through a kind's engine are policies on `RunLifecycle.run`. A stress run on locust follows a stage
timeline, so it drives and judges its own way, but it takes its identity, topics, settle wait and
records from here. This module is the one place that
builds a RunRecord.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tuner.core.client_log import kept_in, summary
from tuner.core.errors import BadInput
from tuner.core.inputs import shown_path
from tuner.driver.engine import Placement
from tuner.driver.engines import drive
from tuner.driver.result import DriverResult
from tuner.measure.attribution import attribute
from tuner.measure.broker_window import measure_window
from tuner.measure.meter_warmup import idle_meters_settled_at, wait_until_settled
from tuner.measure.prometheus import Prometheus
from tuner.measure.threads import ThreadSampler
from tuner.runner.verdict import judge
from tuner.spec.references import expand_references
from tuner.spec.sweep import RunPlan
from tuner.spec.workload import TopicSpec
from tuner.store.figures import BrokerWindow, ClientResult, DeliveryResult
from tuner.store.record import Environment, RunRecord
from tuner.store.results import make_run_id, run_stamp
from tuner.target.base import Target
from tuner.target.ledger import TopicLedger
from tuner.target.topics import create_topics, delete_topics, run_topic_name


@dataclass(frozen=True)
class RunIds:
    """A run's identity: `<sweep>/<name>--<utc stamp>`, and the short stamp its topics carry."""

    run_id: str
    stamp: str  # 20261124T173506.123Z

    @property
    def short(self) -> str:
        """The stamp as topics carry it: 12 digits, `MMDDhhmmssSSS`-like, unique per run."""
        return self.stamp.replace(".", "").replace("T", "").rstrip("Z")[-12:]


def new_ids(sweep: str, name: str, started: float | None = None) -> RunIds:
    at = time.time() if started is None else started
    return RunIds(run_id=make_run_id(sweep, name, at), stamp=run_stamp(at))


def topic_names(prefix: str, specs: list[TopicSpec], index: int, ids: RunIds, tag: str = "r") -> list[str]:
    """The run's fresh topics, under the target's prefix (kbt touches only topics it named)."""
    return [
        run_topic_name(t.name if t.name.startswith(prefix) else prefix + t.name, index, ids.short, tag)
        for t in specs
    ]


@contextmanager
def fresh_topics(
    admin: Any,
    specs: list[TopicSpec],
    names: list[str],
    problems: list[str],
    delete: Callable[[Any, list[str]], list[str]] = delete_topics,
    ledger_path: Path | None = None,
) -> Iterator[list[str]]:
    """Create the run's topics; delete them however the run ends (Ctrl-C too): an interrupted run
    leaves no topics behind. Cleanup problems are appended to `problems`, never raised. A target's
    ledger remembers them until deleted (a crashed run's topics go on the next run)."""
    ledger = TopicLedger(ledger_path) if ledger_path is not None else None
    if ledger is not None:
        ledger.add(names)
    create_topics(admin, specs, names)
    try:
        yield names
    finally:
        cleanup = delete(admin, names)
        problems += cleanup
        if ledger is not None and not cleanup:
            ledger.remove(names)


def clean_leftovers(admin: Any, ledger_path: Path | None, prefix: str) -> list[str]:
    """Delete the topics under `prefix` that runs which crashed left in a target's ledger (None: the
    target keeps none), before a run makes its own; returns the problems."""
    return TopicLedger(ledger_path).clean(admin, prefix, delete_topics) if ledger_path is not None else []


def build_record(
    plan: RunPlan,
    run_id: str,
    environment: Environment,
    topics: list[str],
    client: ClientResult,
    delivery: DeliveryResult,
    broker: BrokerWindow | None,
    status: str,
    problems: list[str],
    **extras: Any,
) -> RunRecord:
    """The one constructor of run records (extras: stress, fault, degraded)."""
    return RunRecord(
        run_id=run_id,
        name=plan.name,
        sweep=plan.sweep,
        index=plan.index,
        spec_hash=plan.spec_hash,
        plan=plan,
        environment=environment,
        created_at=time.time(),
        topics=topics,
        client=client,
        delivery=delivery,
        broker=broker,
        status=status,
        problems=problems,
        **extras,
    )


class Engine:
    """Drives one run's load and verifies its delivery: the engine of the profile's client kind (the
    driver layer does the work)."""

    def run(
        self,
        plan: RunPlan,
        topics: list[str],
        run_id: str,
        target: Target,
        hold: Callable[[], bool] | None = None,
    ) -> DriverResult:
        """`hold`: keep the load going past its duration while it returns True (kbt chaos)."""
        return drive(plan, placement(plan, target, run_id, topics), hold)


def placement(plan: RunPlan, target: Target, run_id: str, topics: list[str]) -> Placement:
    """Where a run goes: the target's bootstrap servers and client security, or its SASL_SSL
    listener when the profile asks for it, the profile's `${VAR}` overrides resolved, the run's
    topics and the target's client exporter ports."""
    from tuner.target.security import client_config

    security: dict[str, str] = client_config(target)  # a target file's client security
    bootstrap = target.bootstrap_servers
    if plan.profile.security == "sasl_ssl":
        lab = target.lab
        if lab is None or not lab.secure_bootstrap_servers:
            raise BadInput(
                f"profile {plan.profile.name} uses security sasl_ssl but the lab has no SASL_SSL"
                " listener (kbt lab up --security sasl_ssl)"
            )
        bootstrap = lab.secure_bootstrap_servers
        security.update(lab.secure_client_properties)
    security.update(expand_references(plan.profile.raw_properties, f"profile {plan.profile.name}"))
    ports = target.lab.client_exporter_ports if target.lab is not None else ()
    return Placement(run_id, tuple(topics), bootstrap, security, tuple(ports))


@dataclass(frozen=True)
class Measurer:
    """Broker-side measurement of one run's window through the target's Prometheus; on a target
    whose brokers run on this machine (the lab), their network and handler threads sampled from the
    kernel as well."""

    prometheus: Prometheus
    step_s: float
    queue_cap: int | None
    broker_pids: tuple[int, ...]

    def measure(self, run_started: float, start: float, end: float, topics: list[str]) -> BrokerWindow:
        return measure_window(
            self.prometheus, start, end, topics, self.step_s, time.time(), run_started, self.queue_cap
        )

    def settled_at(self) -> float | None:
        """Epoch seconds from which the brokers' idle ratios are trustworthy (None: unknown)."""
        return idle_meters_settled_at(self.prometheus)

    def sampler(self) -> ThreadSampler | None:
        """A started sampler of the only local broker's threads (None: no local broker, or several:
        a one-broker lab is where attribution is meaningful and cheap)."""
        if len(self.broker_pids) != 1:
            return None
        sampler = ThreadSampler.for_broker(self.broker_pids[0])
        return sampler.start() if sampler is not None else None


class Observer:
    """Progress hooks; the CLI renders them. All no-ops by default."""

    def sweep_started(self, runs: list[RunPlan], skipped: list[RunPlan]) -> None: ...

    def run_skipped(self, plan: RunPlan, record: RunRecord) -> None: ...

    def run_started(self, plan: RunPlan) -> None: ...

    def phase(self, plan: RunPlan, text: str) -> None: ...

    def run_finished(self, plan: RunPlan, record: RunRecord, path: str) -> None: ...


@dataclass(frozen=True)
class Figures:
    """What a run measured, in the record's schema, as a policy judges it."""

    client: ClientResult
    delivery: DeliveryResult
    broker: BrokerWindow | None


@dataclass
class Run:
    """One run in flight, as a policy sees it."""

    plan: RunPlan
    ids: RunIds
    topics: list[str]
    target: Target
    problems: list[str]


class RunPolicy:
    """A plain sweep run: settle, drive, measure the brokers, judge. Other runs override steps."""

    measure_brokers = True  # the brokers' window: a settle wait before the load, measured after it

    def delete_topics(self, admin: Any, topics: list[str]) -> list[str]:
        return delete_topics(admin, topics)

    def drive(self, run: Run, engine: Engine) -> DriverResult:
        return engine.run(run.plan, run.topics, run.ids.run_id, run.target)

    def finish(self, run: Run, figures: Figures, fields: dict[str, Any]) -> dict[str, Any]:
        """The record's fields after judging; a policy may add or amend (fault, degraded, stress)."""
        return fields


@dataclass(eq=False)
class RunLifecycle:
    target: Target
    engine: Engine
    measurer: Measurer | None
    store: Any
    environment: Environment
    observer: Observer
    admin: Any = None

    def run(self, plan: RunPlan, policy: RunPolicy, problems: list[str]) -> tuple[RunRecord, str]:
        """Run `plan` start to end and write its record: (record, path). Cleanup problems go to
        `problems`; an interrupt leaves no topics and no record behind."""
        ids = new_ids(plan.sweep, plan.name)
        topics = topic_names(self.target.topic_prefix, plan.workload.topics, plan.index, ids)
        run = Run(plan, ids, topics, self.target, problems)
        self.observer.run_started(plan)
        self.observer.phase(plan, "creating topics")
        ledger = self.target.topic_ledger
        client_log = self.store.client_log_path(ids.run_id)
        with (
            kept_in(client_log),  # librdkafka's lines: into a file beside the record, not the terminal
            fresh_topics(self.admin, plan.workload.topics, topics, problems, policy.delete_topics, ledger),
        ):
            if policy.measure_brokers and self.measurer is not None:
                # A run on brokers started moments ago (a fresh lab) would measure their idle ratios
                # while Kafka still pads the meters' window: wait until the measured window starts past that.
                say = partial(self.observer.phase, plan)
                wait_until_settled(self.measurer.settled_at(), plan.workload.warmup_s, say)
            self.observer.phase(plan, "producing")
            sampler = self.measurer.sampler() if self.measurer and policy.measure_brokers else None
            try:
                result = policy.drive(run, self.engine)
            finally:
                if sampler is not None:
                    sampler.stop()
            measured = self._measure(plan, result, topics) if policy.measure_brokers else None
        # the measured figures are the record's own types (tuner/core): they go into it as they are
        client, delivery, broker = result.client, result.delivery, measured
        status, notes = judge(plan, client, delivery, broker)
        if (logged := summary(client_log, shown_path(client_log))) is not None:
            notes = [*notes, logged]  # shown with the run's outcome and kept in its record
        fields = policy.finish(run, Figures(client, delivery, broker), {"status": status, "problems": notes})
        # the network threads' busy time over the run's window
        threads = sampler.figures(client.window_start, client.window_end) if sampler is not None else None
        if threads is not None:
            fields["attribution"] = attribute(threads, measured)
        record = build_record(plan, ids.run_id, self.environment, topics, client, delivery, broker, **fields)
        path = self.store.write(record)
        self.observer.run_finished(plan, record, str(path))
        return record, str(path)

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
