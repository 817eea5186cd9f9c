"""The parts of a distributed stress test that need no network: the lab's listen address, the
worker command and its `--master` input, the worker's profile loop, the plan carrying client
security as references only, and a run whose remote workers never join stopping in one line with
its topics deleted."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_stress_runner import SPEC, FakePool
from tuner.core.errors import BadInput, Unreachable
from tuner.driver.stress.plan import StressPlan
from tuner.lab.config import LabConfig
from tuner.lab.layout import LabLayout
from tuner.lab.node_config import broker_properties
from tuner.lab.state import new_state
from tuner.runner import lifecycle
from tuner.runner.stress import run_stages as runner_module
from tuner.runner.stress import worker as stress_worker
from tuner.runner.stress.intermission import Intermission
from tuner.runner.stress.locust_processes import LocustOptions, check_master_host, remote_worker_command
from tuner.runner.stress.run_stages import StressRunner, _ProfileRun
from tuner.runner.stress.worker import WorkerSummary, parse_master, serve
from tuner.spec.stress_load import load_stress
from tuner.store.environment import capture_environment
from tuner.store.results import ResultsStore
from tuner.target.base import Target

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority


# ---- the lab's listen address ----------------------------------------------------------------
def test_a_listen_address_adds_an_advertised_plaintext_listener(tmp_path: Path) -> None:
    cfg = LabConfig.parse({"lab_dir": tmp_path, "base_port": 30000, "listen_address": "10.231.0.1"})
    props = broker_properties(cfg, LabLayout(cfg.lab_dir), 2)
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:30002,EXTERNAL://10.231.0.1:30062"
    assert props["advertised.listeners"] == props["listeners"]
    assert props["listener.security.protocol.map"].endswith(",EXTERNAL:PLAINTEXT")
    assert props["inter.broker.listener.name"] == "PLAINTEXT"  # replication stays on loopback
    assert ("broker 2 listener on 10.231.0.1", 30062) in cfg.named_ports()
    assert cfg.host_of(30062) == "10.231.0.1" and cfg.host_of(30002) == "127.0.0.1"
    state = new_state(cfg, "cluster", 0.0)
    assert state.external_bootstrap_servers == "10.231.0.1:30061,10.231.0.1:30062,10.231.0.1:30063"
    assert state.bootstrap_servers.startswith("127.0.0.1:30001")  # loopback clients unchanged


def test_without_a_listen_address_the_lab_stays_on_loopback(tmp_path: Path) -> None:
    cfg = LabConfig.parse({"lab_dir": tmp_path, "base_port": 30000})
    assert "EXTERNAL" not in broker_properties(cfg, LabLayout(cfg.lab_dir), 1)["listeners"]
    assert new_state(cfg, "cluster", 0.0).external_bootstrap_servers == ""


@pytest.mark.parametrize(
    ("value", "why"),
    [("kafka.example", "IPv4 address"), ("0.0.0.0", "cannot be advertised"), ("::1", "IPv4 address")],
)
def test_a_bad_listen_address_is_one_line(tmp_path: Path, value: str, why: str) -> None:
    with pytest.raises(BadInput, match=why) as err:
        LabConfig.parse({"lab_dir": tmp_path, "listen_address": value})
    assert "\n" not in err.value.message and "listen_address" in err.value.message


# ---- the worker command ----------------------------------------------------------------------
def test_master_addresses() -> None:
    assert parse_master("10.0.0.5:24780") == ("10.0.0.5", 24780)
    assert parse_master("[fd00::5]:5557") == ("fd00::5", 5557)
    assert parse_master("stress-master.example:5557") == ("stress-master.example", 5557)
    # a host with blanks, an IPv6 address not closed, two ports: locust's traceback was printed
    for bad in (
        "10.0.0.5",
        ":5557",
        "host:",
        "host:0",
        "host:70000",
        "host:port",
        "a b:1",
        "[::1:1",
        "h:1:2",
    ):
        with pytest.raises(BadInput, match="HOST:PORT"):
            parse_master(bad)


@given(st.text(max_size=60))
def test_any_master_text_parses_or_is_bad_input(text: str) -> None:
    try:
        host, port = parse_master(text)
    except BadInput as exc:
        assert "\n" not in exc.message or "\n" in text
        return
    assert host and 0 < port < 65536


def test_the_printed_command_names_the_master() -> None:
    options = LocustOptions(remote_workers=2, master_host="10.231.0.1", master_port=24980)
    assert remote_worker_command(options) == "kbt stress-worker --master 10.231.0.1:24980"
    for everywhere in ("0.0.0.0", "::", "*"):  # locust's own `*` too
        anywhere = LocustOptions(remote_workers=2, master_host=everywhere, master_port=5557)
        assert remote_worker_command(anywhere) == "kbt stress-worker --master <this machine's address>:5557"
    for here in ("0.0.0.0", "*", "localhost", "127.0.0.1"):  # addresses of every machine (none raises)
        check_master_host(here)


def _summary(profile: str, after: int) -> WorkerSummary:
    return WorkerSummary(profile=profile, profiles_after=after, worker_index=1, sent=10, acked=10, failed=0)


def _master_there(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The master's port taking connections at once (what each profile's worker waited for)."""
    waited: list[str] = []
    monkeypatch.setattr(stress_worker, "await_master", lambda host, port, wait_s, say: waited.append(host))
    monkeypatch.setattr(stress_worker, "_master_gone", lambda host, port: None)
    return waited


def test_a_worker_serves_every_profile_then_exits(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = iter([(0, _summary("current", 1)), (1, _summary("recommended", 0))])
    monkeypatch.setattr(stress_worker, "run_one", lambda host, port: next(runs))
    said: list[str] = []
    waited = _master_there(monkeypatch)
    done = serve("10.0.0.5", 5557, said.append)
    assert [s.profile for s in done] == ["current", "recommended"]
    assert waited == ["10.0.0.5", "10.0.0.5"]  # each profile's master waited for
    assert "profile recommended: worker 1 sent 10, acked 10, failed 0 (shipped to the master)" in said


def test_a_worker_without_a_plan_says_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stress_worker, "run_one", lambda host, port: (1, None))
    _master_there(monkeypatch)
    with pytest.raises(Unreachable, match=r"no stress plan from the master at 10\.0\.0\.5:5557"):
        serve("10.0.0.5", 5557, lambda _: None)


@pytest.fixture
def no_master() -> Iterator[tuple[str, int]]:
    """A port bound but not listening: a master that has not started (every connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield "127.0.0.1", sock.getsockname()[1]


def test_a_worker_before_its_master_waits_the_bound_then_says_so_in_one_line(
    no_master: tuple[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    host, port = no_master
    monkeypatch.setattr(stress_worker, "run_one", lambda host, port: pytest.fail("no master: no locust"))
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(Unreachable) as caught:
        serve(host, port, said.append, wait_s=1.5)
    took = time.monotonic() - started
    assert 1.4 <= took < 5, took  # the bound given, not locust's 300 s
    assert caught.value.message == (
        f"no kbt stress master at {host}:{port} after 1.5 s (Connection refused); is 'kbt stress"
        " --remote-workers N' running with --master-host reachable from here? (--master-wait waits longer)"
    )
    assert said == [
        f"joining the kbt stress master at {host}:{port}",
        f"waiting up to 1.5 s for the master at {host}:{port} (Connection refused)",
    ]


def test_a_master_that_has_gone_is_not_waited_for(no_master: tuple[str, int]) -> None:
    started = time.monotonic()
    stress_worker._master_gone(*no_master)
    assert time.monotonic() - started < stress_worker.STOP_GRACE_S / 2


HELD_PORT = 19643  # the master's address kbt holds between profiles (this module's fixed port)


def _held_for(seconds: float) -> Intermission:
    """kbt preparing the next profile for `seconds`, then gone (its address let go)."""
    held = Intermission("127.0.0.1", HELD_PORT)
    held.hold()
    assert held.holding
    threading.Timer(seconds, held.release).start()
    return held


def test_a_worker_waits_while_kbt_prepares_the_next_profile_then_for_its_master_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --master-wait 1 with a 3 s gap between two profiles' masters: the worker gave up in the gap
    monkeypatch.setattr(stress_worker, "MASTER_START_S", 2.0)
    _held_for(3.0)
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(Unreachable, match=r"no kbt stress master at 127\.0\.0\.1:19643 after 2 s"):
        stress_worker.await_master("127.0.0.1", HELD_PORT, 1.0, said.append)
    took = time.monotonic() - started
    assert 4.5 <= took < 9, took  # the held 3 s, then a master's start (2 s, over its own 1 s): no master
    assert said == [
        "kbt stress at 127.0.0.1:19643 is preparing the next profile: waiting for its master",
        "waiting up to 2 s for the master at 127.0.0.1:19643 (Connection refused)",
    ]


def test_a_master_gone_is_seen_while_kbt_holds_its_address() -> None:
    held = _held_for(3.0)
    started = time.monotonic()
    stress_worker._master_gone("127.0.0.1", HELD_PORT)
    assert time.monotonic() - started < 1.5
    held.release()


def test_a_worker_summary_file_is_read_or_ignored(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"profile": "p", "profiles_after": 0, "worker_index": 3, "sent": 5,
                                "acked": 4, "failed": 1, "run_id": "r"}))  # fmt: skip
    assert stress_worker._read_summary(path) == WorkerSummary("p", 0, 3, 5, 4, 1)
    path.write_text("{")
    assert stress_worker._read_summary(path) is None
    assert stress_worker._read_summary(tmp_path / "absent.json") is None


# ---- client security travels as references -----------------------------------------------------
def test_the_plan_carries_references_and_each_process_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "fast.yaml"
    spec.write_text(SPEC)
    loaded = load_stress(spec)
    props = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required"
        ' username="svc" password="${KBT_UNIT_STRESS_PASSWORD}";',
        "ssl.ca.location": "/etc/kbt/ca.pem",
    }
    plan = StressPlan(
        run_id="r", stress="fast", profile_label="current", profile=loaded.spec.profiles["current"],
        workload=loaded.spec.topics_with_configs(), topics=["t"], bootstrap_servers="10.0.0.5:9093",
        rate_per_producer=10, stages=loaded.stages, t0=0.0, client_properties=props,
    )  # fmt: skip
    monkeypatch.setenv("KBT_UNIT_STRESS_PASSWORD", "unit-secret-4f3e2d")
    text = plan.model_dump_json()
    assert "unit-secret-4f3e2d" not in text and "${KBT_UNIT_STRESS_PASSWORD}" in text
    config = StressPlan.model_validate_json(text).security_config()
    assert config["sasl.password"] == "unit-secret-4f3e2d" and config["sasl.username"] == "svc"
    assert config["sasl.mechanisms"] == "SCRAM-SHA-512" and config["ssl.ca.location"] == "/etc/kbt/ca.pem"
    monkeypatch.delenv("KBT_UNIT_STRESS_PASSWORD")
    with pytest.raises(BadInput, match="KBT_UNIT_STRESS_PASSWORD"):
        plan.security_config()
    assert plan.model_copy(update={"client_properties": {}}).security_config() == {}
    # The producers' flush and an aborted ramp end within the drain: the last stage, or the spec's
    # default drain when a plan has no stages.
    assert loaded.stages[-1].kind == "drain" and plan.drain_s == loaded.stages[-1].duration_s
    assert plan.model_copy(update={"stages": []}).drain_s == 10.0


# ---- remote workers that never come ------------------------------------------------------------
class SilentLocust:
    """A master whose workers never join: it never starts the shape, so it writes no status."""

    stopped = False

    def __init__(self, options: LocustOptions, plan: StressPlan, out_dir: Path) -> None:
        self.master = type("P", (), {"returncode": None})()

    def start(self) -> None: ...

    def running(self) -> bool:
        return True

    def wait(self, timeout_s: float) -> bool:
        return False

    def stop(self) -> None:
        SilentLocust.stopped = True

    def log_tail(self) -> str:
        return ""


def test_remote_workers_that_never_join_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deleted: list[Any] = []
    monkeypatch.setattr(runner_module, "LEAD_S", 0.0)
    monkeypatch.setattr(runner_module, "JOIN_GRACE_S", 0.2)
    monkeypatch.setattr(runner_module, "TICK_S", 0.05)
    monkeypatch.setattr(runner_module, "ConsumerPool", FakePool)
    monkeypatch.setattr(runner_module, "LocustProcesses", SilentLocust)
    monkeypatch.setattr(lifecycle, "create_topics", lambda *a: None)
    monkeypatch.setattr(runner_module, "delete_topics", lambda admin, topics: deleted.append(topics) or [])
    spec = tmp_path / "fast.yaml"
    spec.write_text(SPEC)
    monkeypatch.setenv("KBT_CACHE", str(tmp_path))
    target = Target(name="remote", kind="file", bootstrap_servers="10.0.0.5:9092", scrape_interval_s=1.0)
    ledger = target.topic_ledger
    assert ledger is not None
    options = LocustOptions(remote_workers=2, master_host="10.0.0.1", master_port=24980, join_timeout_s=0.0)
    runner = StressRunner(target, ResultsStore(tmp_path / "results"), options)
    run = _ProfileRun(runner, load_stress(spec), "current", 0, capture_environment(1), admin=None)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(Unreachable, match=r"not all 2 locust workers joined") as err:
        run.run()
    assert "kbt stress-worker --master 10.0.0.1:24980" in err.value.message
    assert time.monotonic() - started < 10
    assert SilentLocust.stopped and deleted, "locust stopped and the topics deleted"
    assert json.loads(ledger.read_text()) == {}, "a target's ledger forgets topics once deleted"
