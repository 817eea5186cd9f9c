"""The pieces of `kbt chaos` that need no cluster: the matrix, run plans, verdicts, degraded records,
per-partition order, tc netem detection, the results table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.render.chaos_table import chaos_markdown
from tuner.runner.chaos.netem import UNKNOWN_QDISC, netem_commands, netem_status
from tuner.runner.chaos.run_matrix import (
    chaos_plans,
    degraded_reasons,
    expectation_verdict,
    missing_requirement,
)
from tuner.runner.chaos.scenarios import BY_NAME, MATRIX
from tuner.spec.loader import load_sweep
from tuner.store import ResultsStore, RunRecord, capture_environment, make_run_id
from tuner.store.fault import FaultRun
from tuner.store.figures import ClientResult, DeliveryResult

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority

CHAOS_SPEC = repo_root() / "loadtests" / "chaos.yaml"


def test_matrix_covers_the_issue_and_controls_weaken_one_thing() -> None:
    names = [s.name for s in MATRIX]
    assert len(names) == len(set(names))
    for wanted in ("leader-kill", "clean-bounce", "hard-bounce", "leader-pause", "two-down", "latency",
                   "bandwidth", "blackhole", "reset-peer", "packet-loss", "tiered-remote-unwritable",
                   "control-acks1-leader-kill", "control-no-idempotence-resets"):  # fmt: skip
        assert wanted in BY_NAME, wanted
    for s in MATRIX:
        if s.expect == "detects-loss":
            assert s.profile.get("acks") == "1" or s.profile.get("idempotence") is False, s.name
        else:
            assert s.profile == {"acks": "all", "idempotence": True}, s.name


def test_plans_force_the_no_loss_settings(tmp_path: Path) -> None:
    loaded = load_sweep(CHAOS_SPEC)
    runs = chaos_plans(loaded, [BY_NAME["leader-kill"], BY_NAME["control-acks1-leader-kill"]])
    assert [r.plan.name for r in runs] == ["leader-kill-batched-lz4", "control-acks1-leader-kill-batched-lz4"]
    positive, control = (r.plan for r in runs)
    assert positive.sweep == "chaos-chaos"
    [topic] = positive.workload.topics
    assert topic.replication_factor == 3 and topic.configs["min.insync.replicas"] == "2"
    conf = positive.profile.client_settings()
    assert conf["acks"] == "-1" and conf["enable.idempotence"] == "true"
    assert conf["linger.ms"] == "20"  # the profile's own batching knobs stay
    assert positive.workload.duration_s == BY_NAME["leader-kill"].duration_s
    assert control.profile.client_settings()["acks"] == "1"
    assert control.profile.client_settings()["enable.idempotence"] == "false"
    assert positive.spec_hash != control.spec_hash

    # A profile the spec asks for with acks 1 and idempotence off still runs no-loss in positive cases.
    weak = tmp_path / "weak.yaml"
    weak.write_text(CHAOS_SPEC.read_text().replace("acks: all", 'acks: "1"').replace(
        "idempotence: true", "idempotence: false"))  # fmt: skip
    [run] = chaos_plans(load_sweep(weak), [BY_NAME["hard-bounce"]])
    assert run.plan.profile.client_settings()["enable.idempotence"] == "true"

    with pytest.raises(BadInput, match=r'no profile named "batched-lz5".*did you mean "batched-lz4"'):
        chaos_plans(loaded, [BY_NAME["leader-kill"]], ["batched-lz5"])


def test_filebeat_profiles_are_refused_with_one_line() -> None:
    loaded = load_sweep(repo_root() / "loadtests" / "filebeat-small-logs.yaml")
    with pytest.raises(BadInput, match="kbt chaos drives librdkafka profiles"):
        chaos_plans(loaded, [BY_NAME["leader-kill"]])


def _delivery(**kw: int | bool) -> DeliveryResult:
    base: dict[str, int | bool] = {"acked": 1000, "consumed": 1000, "verified": True}
    return DeliveryResult(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expect", "delivery", "degraded", "passed"),
    [
        ("no-loss", _delivery(), False, True),
        ("no-loss", _delivery(lost=1), False, False),
        ("no-loss", _delivery(duplicates=3), False, False),
        ("no-loss", _delivery(out_of_order=1), False, False),
        ("no-loss", _delivery(indeterminate=3), True, True),  # degraded, yet nothing acked was lost
        ("no-loss", _delivery(verified=False), False, False),
        ("detects-loss", _delivery(lost=7), False, True),
        ("detects-loss", _delivery(duplicates=2), False, True),
        ("detects-loss", _delivery(), False, False),
        ("degraded", _delivery(failed=40), True, True),
        ("degraded", _delivery(failed=40, lost=1), True, False),
        ("degraded", _delivery(), False, False),
    ],
)
def test_expectation_verdicts(expect: str, delivery: DeliveryResult, degraded: bool, passed: bool) -> None:
    ok, why = expectation_verdict(expect, delivery, degraded, None)  # type: ignore[arg-type]
    assert ok is passed, why
    assert why  # a verdict always says why


def test_a_failed_script_fails_the_run() -> None:
    ok, why = expectation_verdict("no-loss", _delivery(), False, "Unreachable: toxiproxy down")
    assert not ok and "the fault script failed" in why[0]


def test_degraded_reasons() -> None:
    assert degraded_reasons(_delivery(), 0.0) == []
    assert degraded_reasons(_delivery(failed=5, indeterminate=2), 0.0) == [
        "5 sends failed, 2 with unknown outcome"
    ]
    assert degraded_reasons(_delivery(), 12.4) == ["partitions under min.insync.replicas for ~12 s"]
    ok, why = expectation_verdict("no-loss", _delivery(), True, None, degraded_reasons(_delivery(), 12.4))
    assert ok and why[-1] == "degraded: partitions under min.insync.replicas for ~12 s"  # the real reason


def _record(tmp_path: Path, degraded: bool, fault: FaultRun | None) -> RunRecord:
    plan = chaos_plans(load_sweep(CHAOS_SPEC), [BY_NAME["two-down"]])[0].plan
    client = ClientResult(engine="librdkafka", producers=4, processes=2, started_at=0.0, window_start=5.0,
                          window_end=80.0, finished_at=81.0, records_acked=60000)  # fmt: skip
    return RunRecord(
        run_id=make_run_id(plan.sweep, plan.name, 100.0),
        name=plan.name,
        sweep=plan.sweep,
        index=0,
        spec_hash=plan.spec_hash,
        plan=plan,
        environment=capture_environment(broker_count=3, kafka_version="4.1.1"),
        created_at=100.0,
        client=client,
        delivery=_delivery(failed=40),
        status="failed",
        degraded=degraded,
        fault=fault,
    )


def test_degraded_records_are_never_tuning_results(tmp_path: Path) -> None:
    fault = FaultRun(scenario="two-down", description="d", expect="degraded", verdict="pass")
    record = _record(tmp_path, True, fault)
    store = ResultsStore(tmp_path / "results")
    loaded = store.load(store.write(record))
    assert loaded.degraded and loaded.fault == fault and not loaded.tuning_result
    healthy = record.model_copy(update={"status": "ok", "degraded": False, "fault": None})
    assert healthy.tuning_result
    assert not healthy.model_copy(update={"degraded": True}).tuning_result

    # Records written before the fields existed still load (the schema change is additive).
    data = record.model_dump(mode="json")
    for key in ("degraded", "fault"):
        data.pop(key)
    data["delivery"].pop("out_of_order")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    before = store.load(old)
    assert before.degraded is False and before.fault is None and before.delivery.out_of_order == 0

    table = chaos_markdown([loaded], [("packet-loss", "batched-lz4", "skipped", "tc netem is not available")])
    assert "| two-down | batched-lz4 | degraded | pass | yes | 1000 | 0 | 0 | 0 | 40/0 |" in table
    assert "| packet-loss | batched-lz4 | - | skipped |" in table


def test_netem_detection_explains_itself() -> None:
    available, why = netem_status()
    if available:
        assert why == ""
    else:
        assert why and "\n" not in why
        assert "netem" in why or "tc" in why
    cmds = netem_commands([21801, 21802], 5)
    assert cmds[1][-2:] == ["loss", "5%"]
    filters = [c for c in cmds if c[1] == "filter"]
    assert len(filters) == 4 and {c[c.index("match") + 2] for c in filters} == {"sport", "dport"}
    assert all(c[c.index("dev") + 1] == "lo" for c in cmds)  # loopback only
    assert UNKNOWN_QDISC == "Specified qdisc kind is unknown"


def test_requirements_name_the_lab_option(tmp_path: Path) -> None:
    from tuner.lab import LabConfig
    from tuner.lab.state import new_state

    plain = new_state(LabConfig.parse({"lab_dir": tmp_path, "base_port": 21800, "tiered": False}), "c", 0)
    assert missing_requirement(BY_NAME["latency"], plain, (True, "")) == (
        "needs a lab behind Toxiproxy (kbt lab up --via-toxiproxy)"
    )
    assert "--tiered" in (missing_requirement(BY_NAME["tiered-remote-unwritable"], plain, (True, "")) or "")
    assert missing_requirement(BY_NAME["packet-loss"], plain, (False, "no netem here")) == "no netem here"
    assert missing_requirement(BY_NAME["leader-kill"], plain, (False, "no netem here")) is None


def test_a_script_cut_short_fails_the_run() -> None:
    """A fault script stopped before its end (the load reached its cap) did not do the whole fault."""
    from tuner.runner.chaos.faults import Stopped
    from tuner.runner.chaos.run_matrix import _run_script
    from tuner.runner.chaos.scenarios import Scenario

    class Hands:  # the three calls _run_script makes around the script
        def __init__(self) -> None:
            self.notes: list[str] = []

        def wait_for_load(self, timeout_s: float, duration_s: float) -> None: ...

        def note(self, what: str) -> None:
            self.notes.append(what)

        def restore(self) -> list[str]:
            return []

    def script(ctx: object) -> None:
        raise Stopped("cut short: the load is about to end")

    errors: list[str] = []
    _run_script(Scenario("x", "x", "no-loss", 10, script), Hands(), [], errors)  # type: ignore[arg-type]
    assert errors == ["cut short: the load is about to end"]
    passed, why = expectation_verdict("no-loss", DeliveryResult(verified=True, acked=10), False, errors[0])
    assert not passed and "the fault script failed: cut short" in why[0]


class _Shared:  # stands in for the multiprocessing double the engine shares with its workers
    def __init__(self, value: float) -> None:
        self.value = value


def test_the_load_is_held_until_released() -> None:
    """The engine keeps the load going past its window while hold() says so, then ends it at once."""
    import time

    from tuner.driver.librdkafka_engine import _LoadEnd

    now = time.time()
    assert _LoadEnd(now + 60, None, None).at() == now + 60  # no hold: the window's end, as before

    holding = [True]
    shared = _Shared(float("inf"))
    end = _LoadEnd(now - 5, lambda: holding[0], shared)
    assert end.at() >= now and shared.value == float("inf")  # past the window, still held
    holding[0] = False
    released = end.at()
    assert released >= now and shared.value == released
    holding[0] = True
    assert end.at() == released  # released once, for good

    early = _LoadEnd(now + 60, lambda: False, _Shared(float("inf")))
    assert early.at() == now + 60  # released before the window ends: the window still runs in full


def test_a_worker_ends_at_the_window_or_the_hold(tmp_path: Path) -> None:
    from tuner.driver.rdkafka_worker import Worker, WorkerTask

    [run] = chaos_plans(load_sweep(CHAOS_SPEC), [BY_NAME["leader-kill"]])
    task = WorkerTask(0, run.plan, ["t"], "127.0.0.1:1", "r", [0, 1], None, str(tmp_path))
    worker = Worker(task)
    assert worker._end(100.0, 100.0) == 100.0
    worker.hold_until = _Shared(250.0)
    assert worker._end(100.0, 100.0) == 250.0
    worker.hold_until = _Shared(90.0)  # released before the window's end
    assert worker._end(100.0, 100.0) == 100.0


@pytest.mark.timeout(30)
@pytest.mark.parametrize("rate", [250, "max"])
def test_a_held_worker_produces_until_released(tmp_path: Path, rate: int | str) -> None:
    """Past the window the worker re-reads the shared end on every turn: held, it keeps producing;
    released, it stops at once (not at the end it saw when it first passed the window)."""
    import threading
    import time

    from tuner.driver.rdkafka_worker import Worker, WorkerTask

    class Quiet:  # a producer that takes everything
        def produce(self, *args: object) -> None: ...

        def poll(self, timeout: float) -> int:
            return 0

    [run] = chaos_plans(load_sweep(CHAOS_SPEC), [BY_NAME["leader-kill"]])
    plan = run.plan.model_copy(update={"workload": run.plan.workload.model_copy(
        update={"rate_per_producer": rate})})  # fmt: skip
    task = WorkerTask(0, plan, ["t"], "127.0.0.1:1", "r", [0, 1], None, str(tmp_path))
    worker = Worker(task)
    for pod in worker.pods:
        pod.producer = Quiet()  # type: ignore[assignment]
    worker.hold_until = _Shared(float("inf"))
    t0 = time.time()
    t_end = t0 + 0.3
    worker.t0, worker.window = t0, (t0, t_end)
    threading.Timer(0.8, lambda: setattr(worker.hold_until, "value", time.time())).start()
    if rate == "max":
        worker._closed_loop(t_end)
    else:
        worker._open_loop(t0, t_end)
    took = time.time() - t0
    assert 0.75 < took < 1.5, took
    if rate != "max":  # ~250 records a second per producer, past the window too
        assert sum(pod.seq for pod in worker.pods) >= 2 * 250 * 0.7


def test_indeterminate_means_records_without_a_delivery_report(tmp_path: Path) -> None:
    """A statistics event still waiting for poll() is not a record with an unknown outcome."""
    from tuner.driver.rdkafka_worker import Worker, WorkerTask

    class Flushed:  # a producer whose queue holds only a statistics event after the flush
        def flush(self, timeout: float) -> int:
            return 1

        def __len__(self) -> int:
            return 1

    [run] = chaos_plans(load_sweep(CHAOS_SPEC), [BY_NAME["leader-kill"]])
    task = WorkerTask(0, run.plan, ["t"], "127.0.0.1:1", "r", [0, 1], None, str(tmp_path))
    worker = Worker(task)
    for pod in worker.pods:
        pod.producer = Flushed()  # type: ignore[assignment]
        pod.seq = 5
    for rid in range(9):
        worker.log.add_acked(rid, 0, rid)
    worker.log.add_failed(9, "_MSG_TIMED_OUT")
    worker._drain()
    assert worker.result.indeterminate == 0  # 10 produced, 10 reports
    worker.pods[0].seq = 7
    worker._drain()
    assert worker.result.indeterminate == 2


def test_the_chaos_hold_follows_the_fault_script() -> None:
    """kbt chaos holds the load while the script runs, SCRIPT_MARGIN_S after it is done, never past
    the script's deadline + RESTORE_WAIT_S; the record says when the load went past its duration."""
    import threading
    import time

    from tuner.runner.chaos.run_matrix import RESTORE_WAIT_S, SCRIPT_MARGIN_S, LoadHold, load_cap_s

    class Ctx:
        def __init__(self) -> None:
            self.deadline = float("inf")
            self.at = 0.0
            self.notes: list[str] = []

        def now(self) -> float:
            return self.at

        def note(self, what: str) -> None:
            self.notes.append(what)

    scenario = BY_NAME["leader-kill"]
    assert load_cap_s(scenario) == scenario.duration_s + 120
    assert load_cap_s(BY_NAME["clean-bounce"]) == 3 * BY_NAME["clean-bounce"].duration_s
    ctx, done = Ctx(), threading.Event()
    hold = LoadHold(ctx, scenario, done)  # type: ignore[arg-type]
    assert hold()  # records not flowing yet
    ctx.deadline, ctx.at = time.time() + 100, scenario.duration_s + 20
    assert hold() and ctx.notes == [f"the load goes on past its {scenario.duration_s:g} s until the fault"
                                    f" script is done (at most {load_cap_s(scenario):g} s)"]  # fmt: skip
    done.set()
    assert hold()  # the margin after the script
    assert hold.done_at is not None
    hold.done_at -= SCRIPT_MARGIN_S + 0.1
    assert not hold() and ctx.notes[-1] == f"load ended after {scenario.duration_s + 20:.0f} s"

    stuck = LoadHold(ctx, scenario, threading.Event())  # type: ignore[arg-type]
    ctx.deadline = time.time() - RESTORE_WAIT_S - 1
    assert not stuck()  # a script that never ends does not hold the load for ever


def test_the_silent_logger_keeps_one_handler_however_often_it_is_asked() -> None:
    """A chaos run builds a consumer with it each half second while it waits for load: each call
    added one more NullHandler to the same shared logger, for as long as the run lasted."""
    import logging

    from tuner.lab.health import silent_logger

    for name in ("kbt.chaos.client", "kbt.lab.admin"):
        loggers = {id(silent_logger(name)) for _ in range(500)}
        logger = logging.getLogger(name)
        assert loggers == {id(logger)}
        assert [type(h) for h in logger.handlers] == [logging.NullHandler]
        assert logger.propagate is False  # nothing it gets reaches the terminal


def test_the_fault_scripts_admin_client_hands_its_lines_over_at_each_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault script's admin client has a logger, whose lines librdkafka hands over only on poll:
    never polled, they queued for the whole chaos run (a broker down logs a line at each reconnect).
    Now each look at the partitions (the ISR watch's, once a second) serves them. A real admin
    client against a stopped lab's brokers (a bound port that refuses)."""
    import logging
    import socket
    import threading

    from tuner.lab.config import LabConfig
    from tuner.lab.health import silent_logger
    from tuner.lab.state import new_state
    from tuner.runner.chaos import faults
    from tuner.runner.chaos.faults import FaultContext

    monkeypatch.setattr(faults, "METADATA_TIMEOUT_S", 1.0)

    class Counted(logging.Handler):
        lines = 0

        def emit(self, record: logging.LogRecord) -> None:
            self.lines += 1

    counted = Counted()
    logger = silent_logger("kbt.chaos.client")
    logger.addHandler(counted)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bound:
            bound.bind(("127.0.0.1", 0))
            state = json.loads(new_state(LabConfig(lab_dir=tmp_path), "abc", 1.8e9).model_dump_json())
            for broker in state["brokers"]:
                broker.update(port=bound.getsockname()[1], proxy_port=None, internal_port=None)
            (tmp_path / "state.json").write_text(json.dumps({**state, "phase": "up"}))
            ctx = FaultContext(tmp_path, ["kbt-t"], 2, threading.Event())
            for _ in range(3):  # each look: no metadata (None), and what the client logged meanwhile
                assert ctx.under_min_isr() is None
            assert counted.lines > 0  # served, not queued
    finally:
        logger.removeHandler(counted)
