"""A Kafka producer as a locust User for a plain locust run of a kbt spec (the open loop of
tuner.driver.locust.producer, the librdkafka driver's delivery check).

Import it only inside locust processes (importing locust monkey-patches the process for gevent);
`loadtests/locustfile.py` subclasses it. The API, for locust files and tools built on it:

- `KafkaProducerUser` (abstract): one confluent-kafka producer ("pod") per locust user, with the
  run's profile settings. Open loop at the workload's `rate_per_producer` (own pacing, from a
  start time shared by every process, or for users added later their own start; a random
  phase), or bursts when the rate is `max`; with --run-time the schedule ends 2 s before it. Each
  record's value ends with its id (`producer << 40 | sequence`, as in the sweep driver); the
  delivery callback, run from `poll(0)` on the user's greenlet (never a blocking poll), fires one
  locust request event per record: type `produce`, name `<profile>/<topic>`, response time from
  the *intended* send time (no coordinated omission), the value's length, the Kafka error as the
  exception.
  Override `request_name(topic_index)` to name requests differently.
- Options (locust custom arguments, each with an environment variable): `--kbt-spec`
  (`KBT_LOCUST_SPEC`, a sweep spec or a workload spec), `--kbt-run` (`KBT_LOCUST_RUN`, the sweep
  run's name; default the first run), `--kbt-bootstrap` (`KBT_LOCUST_BOOTSTRAP`; default the
  running lab's, `--kbt-lab-dir` / `KBT_LAB_DIR`) or `--kbt-target` (`KBT_LOCUST_TARGET`, a kbt
  target file: its brokers, its client security with secrets as `${VAR}` references that every
  process, workers too, resolves from its own environment, and its caps against the users' rate),
  `--kbt-out` (`KBT_LOCUST_OUT`, where the delivery summary `delivery.json` goes).
- Lifecycle: the master (or the single local process) loads the spec and creates fresh topics
  `<topic>-locust-<run id>` at test start, and hands the resolved load (`LocustLoad`, JSON) to the
  workers with the spawn message. At test stop every producing process drains its producers
  (poll(0) + gevent sleeps, bounded), verifies delivery of its own acked records by reading the
  topics back (tuner.driver.librdkafka_engine.verify_delivery, in a native thread so locust's
  heartbeats go on) and reports the counts; the master (at its own test stop) waits for every
  worker's report, logs and writes the verdict, sets exit code 1 when a record was lost, a check
  failed or a report is missing, and deletes the topics.
"""

from __future__ import annotations

import json
import logging
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import gevent
from confluent_kafka import KafkaError, Message, Producer
from locust import events
from locust.env import Environment
from locust.exception import StopUser
from locust.runners import STATE_INIT, STATE_STOPPED, STATE_STOPPING, LocalRunner, MasterRunner, WorkerRunner

from tuner.core.errors import KbtError
from tuner.core.kafka_clients import new_producer
from tuner.driver.delivery_log import DeliveryLog
from tuner.driver.librdkafka_engine import verify_delivery
from tuner.driver.locust.producer import OpenLoopProducer, ProcessShare, drain
from tuner.driver.locust.spec_load import (
    LocustLoad,
    create_load_topics,
    delete_load_topics,
    load_from_spec,
    summarize,
)
from tuner.driver.payload import SEQ_MASK
from tuner.driver.rdkafka_worker import WorkerResult

log = logging.getLogger("kbt.locust")

DRAIN_S = 30.0
# Schedules start LEAD_S after the test starts (the topics exist, the first users are spawned) and,
# with --run-time, end END_MARGIN_S before it, so the last records are acked (and their request
# events counted) before locust stops the users.
LEAD_S = 3.0
END_MARGIN_S = 2.0
REPORT_WAIT_S = 180.0
REFUSED_WAIT_S = 30.0  # a user spawned after a refused start waits this long at most for the quit
MSG_HELLO, MSG_FINISH, MSG_DELIVERY = "kbt_locust_hello", "kbt_locust_finish", "kbt_locust_delivery"


class _Process(ProcessShare):
    """This locust process's share: the load, its producers, the delivery log, the reports."""

    def __init__(self) -> None:
        super().__init__()
        self.load: LocustLoad | None = None
        self.log = DeliveryLog("open")
        self.producers: list[Producer] = []
        self.sent = 0
        self.workers: set[str] = set()  # master: workers that started the test
        self.reports: dict[str, dict[str, Any]] = {}
        self.refused = False  # the test's start failed (said in one line): its users stop at once

    def load_of(self, environment: Environment) -> LocustLoad:
        if self.load is None:
            raw = getattr(environment.parsed_options, "kbt_load", "") or ""
            if not raw:
                raise RuntimeError("no kbt load: start locust with --kbt-spec (or KBT_LOCUST_SPEC)")
            self.load = LocustLoad.model_validate_json(raw)
        return self.load


STATE = _Process()


@events.init_command_line_parser.add_listener
def _options(parser: Any) -> None:
    parser.add_argument("--kbt-spec", env_var="KBT_LOCUST_SPEC", default="", help="sweep or workload spec")
    parser.add_argument("--kbt-run", env_var="KBT_LOCUST_RUN", default="", help="run name (default first)")
    parser.add_argument("--kbt-bootstrap", env_var="KBT_LOCUST_BOOTSTRAP", default="", help="brokers")
    parser.add_argument("--kbt-lab-dir", env_var="KBT_LAB_DIR", default="", help="lab whose brokers to use")
    parser.add_argument(
        "--kbt-target", env_var="KBT_LOCUST_TARGET", default="", help="kbt target file (brokers, security)"
    )
    parser.add_argument("--kbt-out", env_var="KBT_LOCUST_OUT", default="", help="dir for delivery.json")
    parser.add_argument("--kbt-load", default="", help="(set by the master)", include_in_web_ui=False)


class KafkaProducerUser(OpenLoopProducer):
    """One producer ("pod") offering the workload's per-producer rate."""

    abstract = True

    def on_start(self) -> None:
        if STATE.refused:  # the start said why in one line and locust is quitting: the quit ends
            gevent.sleep(REFUSED_WAIT_S)  # this user quietly (locust logs any on_start exception whole)
            raise StopUser
        load = self.load = STATE.load_of(self.environment)
        _, pid, pool = STATE.slot(self.environment, load.source_workload())
        rate = load.plan.workload.rate_per_producer
        interval = 0.0 if rate == "max" else 1.0 / float(rate)
        now = time.time()
        # The first users (spawned by t0 + LEAD_S) keep the shared schedule, catching up when late
        # (the delay shows as latency); users added later start from their own start.
        start = load.t0 if now < load.t0 + LEAD_S else now
        self.names = [self.request_name(i) for i in range(len(load.topics))]
        settings: dict[str, Any] = {
            "client.id": f"kbt-locust-{load.plan.profile.name}-{pid}",
            **load.plan.profile.client_settings(),
            "on_delivery": self._delivered,
        }
        producer = new_producer(load.connection(), settings)
        STATE.producers.append(producer)
        self.schedule(
            producer, pid, pool, load.plan.workload, load.topics, interval,
            start + random.random() * interval, load.t_end or float("inf"),
        )  # fmt: skip

    def request_name(self, topic_index: int) -> str:
        """The locust request name of records sent to the load's `topic_index`th topic."""
        return f"{self.load.plan.profile.name}/{self.load.plan.workload.topics[topic_index].name}"

    def on_sent(self, due: float, now: float) -> None:
        STATE.sent += 1

    def _delivered(self, err: KafkaError | None, msg: Message) -> None:
        record = self.record_of(msg)
        if record is None:
            return
        rid, intended = record
        latency = time.time() - intended if self.interval > 0 else (msg.latency() or 0.0)
        if err is None:
            offset = msg.offset()
            STATE.log.add_acked(rid, msg.partition() or 0, -1 if offset is None else offset)
        else:
            STATE.log.add_failed(rid, err.name())
        self.fire(self.names[(rid & SEQ_MASK) % len(self.names)], latency, len(msg.value() or b""), err)


# ---- lifecycle -----------------------------------------------------------------------------------
#
# A headless master that reaches --run-time quits without a "stop" round: it fires test_stop, sends
# "quit" and stops listening half a second later. So the master's test_stop asks every worker that
# has not reported yet to finish (MSG_FINISH: stop the users, drain, verify, send the locust stats,
# then the delivery report) and waits for the reports before it lets the quit go on.


def _in_thread(fn: Any, *args: Any) -> Any:
    """Run a blocking Kafka admin/consumer call in a native thread: locust's greenlets go on. What it
    raises is raised here, in the caller's greenlet (the pool printed a failed call's traceback)."""

    def run() -> tuple[Any, BaseException | None]:
        try:
            return fn(*args), None
        except Exception as exc:
            return None, exc

    result, error = gevent.get_hub().threadpool.spawn(run).get()
    if error is not None:
        raise error
    return result


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    # Start the hub's thread pool now: created lazily from a test_start handler, it made locust's
    # --run-time timer fire at once (gevent 26.9, locust 2.47).
    gevent.get_hub().threadpool.spawn(lambda: None).get()
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        runner.register_message(MSG_HELLO, lambda msg, **_kw: STATE.workers.add(msg.node_id))
        runner.register_message(
            MSG_DELIVERY, lambda msg, **_kw: STATE.reports.__setitem__(msg.node_id, msg.data)
        )
    elif isinstance(runner, WorkerRunner):
        runner.register_message(MSG_FINISH, lambda msg, **_kw: runner.stop())  # test_stop reports


@events.test_start.add_listener
def _test_start(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    options = environment.parsed_options
    STATE.reports, STATE.workers, STATE.refused = {}, set(), False
    if isinstance(runner, MasterRunner | LocalRunner) and options is not None:
        started = time.time()  # --run-time counts from about now
        try:
            load = load_from_spec(
                options.kbt_spec, options.kbt_run, options.kbt_bootstrap, options.kbt_lab_dir,
                options.kbt_target, int(getattr(options, "num_users", 0) or 0),
            )  # fmt: skip
            _in_thread(create_load_topics, load)
        except KbtError as exc:  # a bad spec or target, a cluster not there: one line and its exit code
            log.error("kbt: %s", exc.message)
            STATE.refused = True
            environment.process_exit_code = int(exc.status)
            gevent.spawn(runner.quit)
            return
        t0 = max(started + LEAD_S, time.time() + 0.5)
        t_end = started + options.run_time - END_MARGIN_S if options.run_time else None
        load = load.model_copy(update={"t0": t0, "t_end": t_end})
        STATE.load = load
        options.kbt_load = load.model_dump_json()  # forwarded to the workers with the spawn message
        log.info("kbt: producing to %s at %s", ", ".join(load.topics), load.bootstrap_servers)
    elif isinstance(runner, WorkerRunner):
        STATE.load = None  # a new test: the master's load
        STATE.load_of(environment)
        runner.send_message(MSG_HELLO, {"index": runner.worker_index})


@events.test_stop.add_listener
def _test_stop(environment: Environment, **_: Any) -> None:
    runner, load = environment.runner, STATE.load
    if load is None or runner is None:
        return
    STATE.load = None  # concluded once per test
    if isinstance(runner, MasterRunner):
        _conclude(environment, runner, load, STATE.workers)
        return
    report = _finish(load)
    if isinstance(runner, WorkerRunner):
        send_stats = getattr(runner, "_send_stats", None)
        if send_stats is not None:  # the drain's request events reach the master before the report
            send_stats()
        runner.send_message(MSG_DELIVERY, report)
    else:
        STATE.reports["local"] = report
        _conclude(environment, runner, load, {"local"})


def _conclude(environment: Environment, runner: Any, load: LocustLoad, expected: set[str]) -> None:
    """Collect every process's delivery report, write the verdict, delete the topics."""
    if isinstance(runner, MasterRunner):
        for node in expected - set(STATE.reports):
            runner.send_message(MSG_FINISH, None, client_id=node)
    deadline = time.time() + REPORT_WAIT_S
    while not expected <= set(STATE.reports) and time.time() < deadline:
        gevent.sleep(0.2)
    summary = summarize(STATE.reports, expected, load.topics)
    options = environment.parsed_options
    if options is not None and options.kbt_out:
        out = Path(options.kbt_out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "delivery.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    log.info("kbt: %s", summary["line"])
    if not summary["ok"]:
        environment.process_exit_code = 1
    for problem in _in_thread(delete_load_topics, load, load.topics):
        log.warning("kbt: %s", problem)


def _finish(load: LocustLoad) -> dict[str, Any]:
    """Drain this process's producers, verify what they acked, and reset for a next test."""
    producers = STATE.producers
    deadline = time.time() + DRAIN_S

    def unreported() -> int:
        # Records sent without a delivery report yet. Not len(producer): that also counts
        # statistics events waiting for poll(), which would mark a clean run indeterminate.
        return max(0, STATE.sent - STATE.log.acked_total - STATE.log.failed_total)

    drain(producers, unreported, deadline)
    indeterminate = unreported()
    for producer in producers:
        producer.purge()
        producer.poll(0)
    delivery_log, sent = STATE.log, STATE.sent
    STATE.producers, STATE.log, STATE.sent = [], DeliveryLog("open"), 0
    report: dict[str, Any] = {"producers": len(producers), "sent": sent}
    with tempfile.TemporaryDirectory(prefix="kbt-locust-acked-") as tmp:
        topics = load.topics
        files = delivery_log.write_acked(Path(tmp), 0, lambda rid: topics[(rid & SEQ_MASK) % len(topics)])
        out = WorkerResult(
            index=0, producers=len(producers), acked_files=files, indeterminate=indeterminate,
            acked_total=delivery_log.acked_total, failed_total=delivery_log.failed_total,
        )  # fmt: skip
        try:
            security = load.connection().properties
            delivery = _in_thread(verify_delivery, load.bootstrap_servers, topics, [out], security)
            report.update(delivery.model_dump())
        except Exception as exc:  # reported, never raised into locust
            report.update(error=f"{type(exc).__name__}: {exc}", verified=False)
    report["errors"] = dict(delivery_log.failed_errors)
    return report


@events.quitting.add_listener
def _quitting(environment: Environment, **_: Any) -> None:
    """Quitting mid-test (Ctrl-C, SIGTERM): stop first, so the verdict and its exit code are in."""
    runner = environment.runner
    running = runner is not None and runner.state not in (STATE_INIT, STATE_STOPPED, STATE_STOPPING)
    if isinstance(runner, MasterRunner | LocalRunner) and STATE.load is not None and running:
        runner.stop()
