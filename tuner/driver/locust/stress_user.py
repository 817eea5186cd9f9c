"""The locust side of `kbt stress`: the producer user, the load shape and the status plumbing.

Imported only inside locust processes (importing locust monkey-patches the process for gevent);
`loadtests/stress_locustfile.py` re-exports it. Every process reads the run's plan from the
`--kbt-plan` option (JSON text, or @path); the master forwards it to its workers, so a worker on
another machine needs only kbt installed and `kbt stress-worker --master HOST:PORT` (which runs
`locust -f - --worker`).

- `StressProducer`: one producer ("pod") per locust user, with the profile's librdkafka settings.
  Open loop at the plan's rate from its own start (tuner.driver.locust.producer); latency is
  measured from the intended send time, and how late each produce() call was (send lag: the
  generator behind its own schedule); only `poll(0)` on the hot path. Each delivery fires a locust
  request event named after the stage (so locust's own statistics split by stage) and is tallied
  for kbt (tuner.driver.stress.tally).
- `StressShape`: the plan's stages as a locust LoadTestShape (users = producers), on the wall
  clock from the plan's t0; a file `abort` in the master's out dir ends the ramp early (drain).
- Workers ship their tally deltas with every locust report; the master (or a local runner) merges
  them and writes `status.json` in the out dir every second.
- A worker started by `kbt stress-worker` (KBT_STRESS_WORKER_REPORT set) writes, when it quits,
  what it shipped to the master (sent, acked, failed) and how many profiles follow.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import gevent
from confluent_kafka import KafkaError, Message
from locust import LoadTestShape, events
from locust.env import Environment
from locust.runners import LocalRunner, MasterRunner, WorkerRunner

from tuner.core.kafka_clients import Connection, new_producer
from tuner.core.writes import atomic_write
from tuner.driver.client_exporter import ClientExporter
from tuner.driver.locust.producer import OpenLoopProducer, ProcessShare, drain
from tuner.driver.payload import SEQ_MASK
from tuner.driver.rdkafka_stats import Emission
from tuner.driver.stress.plan import ABORT_FILE, STATUS_FILE, WORKER_REPORT_ENV, StressPlan
from tuner.driver.stress.tally import Tally
from tuner.spec.stress_spec import users_at

STATS_INTERVAL_MS = 2000
STATUS_EVERY_S = 1.0
SPAWN_RATE = 100.0
LEAD_USERS_S = 3.0  # spawn the first stage's producers this long before t0 (connections warm)
FLUSH_LIMIT_S = 30.0
FLUSH_MARGIN_S = 4.0  # a locust report (every 3 s) must still fit between the flush and the end
STATUS_KEY = "kbt_stress"
COUNTS = ("sent", "acked", "failed")


class _Process(ProcessShare):
    """This locust process's share of the run: plan, tally, exporter, pool, producer numbering."""

    def __init__(self) -> None:
        super().__init__()
        self.plan: StressPlan | None = None
        self.tally = Tally()  # worker: since the last report; local/master: everything
        self.merged = Tally()  # master: everything received
        self.exporter: ClientExporter | None = None
        self.writer: Any = None
        self.last_report: dict[str, float] = {}
        self.shipped = dict.fromkeys(COUNTS, 0)  # worker: totals reported to the master so far

    def plan_of(self, environment: Environment) -> StressPlan:
        if self.plan is None:
            raw = getattr(environment.parsed_options, "kbt_plan", "") or os.environ.get("KBT_STRESS_PLAN", "")
            if raw.startswith("@"):
                raw = Path(raw[1:]).read_text(encoding="utf-8")
            if not raw:
                raise RuntimeError("no stress plan: run through 'kbt stress' (option --kbt-plan)")
            self.plan = StressPlan.model_validate_json(raw)
        return self.plan

    def exporter_for(self, plan: StressPlan, worker: int) -> ClientExporter | None:
        if self.exporter is None and worker < len(plan.producer_ports):
            self.exporter = ClientExporter(plan.run_id, "librdkafka").served(plan.producer_ports[worker])
        return self.exporter


STATE = _Process()


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument(
        "--kbt-plan", type=str, default="", help="kbt stress plan (JSON or @file)", include_in_web_ui=False
    )


class StressProducer(OpenLoopProducer):
    """One producer ("pod") offering the plan's per-producer rate."""

    def on_start(self) -> None:
        plan = self.plan = STATE.plan_of(self.environment)
        interval = 1.0 / plan.rate_per_producer
        start_at = max(plan.t0, time.time()) + random.random() * interval
        worker, pid, pool = STATE.slot(self.environment, plan.source_workload())
        self.name = f"p{pid}"
        self.exporter = STATE.exporter_for(plan, worker)
        self.last_requests: dict[str, int] = {}
        self.last_stats_at = time.time()
        self.unexported = [0, 0, 0, 0]
        settings: dict[str, Any] = {
            "client.id": f"kbt-stress-{plan.profile_label}-{pid}",
            "statistics.interval.ms": STATS_INTERVAL_MS,
            **plan.profile.client_settings(),
            "stats_cb": self._on_stats,
            "on_delivery": self._on_delivery,
        }
        producer = new_producer(Connection(plan.bootstrap_servers, plan.security_config()), settings)
        self.schedule(producer, pid, pool, plan.workload, plan.topics, interval, start_at)

    # ---- callbacks (from poll(0) on this greenlet) -------------------------------------------------

    def _on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        record = self.record_of(msg)
        if record is None:
            return
        rid, intended = record
        now = time.time()
        stage = self.plan.stage_index_at(intended)
        tally = STATE.tally.stage(stage)
        size = len(msg.value() or b"")
        self.fire(self.plan.stages[stage].label, now - intended, size, err)
        if err is not None:
            tally.failed += 1
            self.unexported[2] += 1
            return
        tally.acked += 1
        tally.bytes_acked += size
        tally.latency.add_s(now - intended)
        STATE.tally.record_ack(
            self.pid, stage, rid & SEQ_MASK, msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        )
        self.unexported[0] += 1
        self.unexported[1] += size

    def _on_stats(self, raw: str) -> None:
        now = time.time()
        emission = Emission.parse(raw)
        stage = self.plan.stage_index_at((now + self.last_stats_at) / 2)
        tally = STATE.tally.stage(stage)
        for node, delta in emission.new_requests(self.last_requests).items():
            tally.requests[node] = tally.requests.get(node, 0) + delta
        for topic in emission.topics:
            if topic.batches:
                tally.batches += topic.batches
                tally.batch_records += topic.records
                tally.batch_bytes += topic.bytes
        self.last_stats_at = now
        if self.exporter is not None:
            self.exporter.on_stats(self.name, emission)
            self.exporter.on_delivery(self.name, *self.unexported)
            self.unexported = [0, 0, 0, 0]

    def on_sent(self, due: float, now: float) -> None:
        stage = STATE.tally.stage(self.plan.stage_index_at(due))
        stage.sent += 1
        stage.send_lag.add_s(now - due)  # how far behind its schedule this process is
        if due > stage.last_due:  # the latest intended send time in this stage
            stage.last_due = due
        self.unexported[3] += 1

    def on_stop(self) -> None:
        """Flush without blocking the other greenlets (poll(0) + sleep), bounded so that it ends
        inside the drain stage (whose last seconds carry the final reports to the master)."""
        producer = getattr(self, "producer", None)
        if producer is None:
            return
        deadline = time.time() + min(FLUSH_LIMIT_S, max(1.0, self.plan.drain_s - FLUSH_MARGIN_S))
        drain([producer], lambda: len(producer), deadline)
        producer.poll(0)


class StressShape(LoadTestShape):
    """Producers over time from the plan's stages (wall clock from t0); ends after the last stage,
    or `drain_s` after the orchestrator asked to abort."""

    abort_seen: float | None = None

    def tick(self) -> tuple[int, float] | None:
        plan = STATE.plan_of(self.runner.environment) if self.runner else None
        if plan is None:
            return None
        now = time.time()
        if self.abort_seen is None and plan.out_dir and (Path(plan.out_dir) / ABORT_FILE).exists():
            self.abort_seen = now
        if self.abort_seen is not None:
            return None if now >= self.abort_seen + plan.drain_s else (0, SPAWN_RATE)
        if now >= plan.end:
            return None
        if now < plan.t0:
            first = plan.stages[0].users if plan.stages else 0
            return (first, SPAWN_RATE) if now >= plan.t0 - LEAD_USERS_S else (0, SPAWN_RATE)
        stage = plan.stage_at(now)
        if stage is None:
            return None
        return (users_at(stage, now - plan.t0 - stage.start_s), SPAWN_RATE)


# ---- status plumbing ---------------------------------------------------------------------------


@events.report_to_master.add_listener
def _report(client_id: str, data: dict[str, Any]) -> None:
    delta = STATE.tally.take_delta()
    for stage in delta.get("stages", {}).values():
        for key in COUNTS:
            STATE.shipped[key] += int(stage.get(key, 0))
    data[STATUS_KEY] = delta


@events.worker_report.add_listener
def _worker_report(client_id: str, data: dict[str, Any]) -> None:
    wire = data.get(STATUS_KEY)
    if wire:
        STATE.merged.merge_wire(wire)
        STATE.last_report[client_id] = time.time()


def _status(environment: Environment, done: bool) -> None:
    plan = STATE.plan
    if plan is None or not plan.out_dir:
        return
    runner = environment.runner
    tally = STATE.merged
    if isinstance(runner, LocalRunner):
        tally.merge(STATE.tally)
        STATE.tally = Tally()
    workers = len(runner.clients) if isinstance(runner, MasterRunner) else 1
    status = {
        "run_id": plan.run_id,
        "t0": plan.t0,
        "written_at": time.time(),
        "done": done,
        "workers": workers,
        "users": runner.user_count if runner is not None else 0,
        "tally": tally.to_wire(),
    }
    path = Path(plan.out_dir) / STATUS_FILE
    atomic_write(path, json.dumps(status), "stress status")


def _status_loop(environment: Environment) -> None:
    while True:
        try:
            _status(environment, done=False)
        except Exception as exc:  # a status write must never stop the load
            print(f"kbt stress: status not written: {exc}")
        gevent.sleep(STATUS_EVERY_S)


@events.test_start.add_listener
def _started(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, MasterRunner | LocalRunner) and STATE.writer is None:
        STATE.plan_of(environment)
        STATE.writer = gevent.spawn(_status_loop, environment)


@events.quitting.add_listener
def _quitting(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, MasterRunner | LocalRunner):
        if STATE.writer is not None:
            STATE.writer.kill(block=False)
        _status(environment, done=True)
    elif isinstance(environment.runner, WorkerRunner):
        _write_worker_summary(environment)


def _write_worker_summary(environment: Environment) -> None:
    """What this worker shipped to the master (its last report went out before quitting), for
    `kbt stress-worker`: its summary line, and whether another profile follows."""
    path = os.environ.get(WORKER_REPORT_ENV)
    plan = STATE.plan
    if not path or plan is None:
        return
    report = {
        "run_id": plan.run_id,
        "profile": plan.profile_label,
        "profiles_after": plan.profiles_after,
        "worker_index": STATE.worker_index(environment),
        **STATE.shipped,
    }
    atomic_write(Path(path), json.dumps(report), "stress worker report")
