"""The stress runner's timeline with locust, the consumers and the cluster faked: an aborted ramp
ends the profile without waiting out the rest of the timeline, and the stage it left part way is
recorded over the part that ran; with remote workers, the master's address is held from one
profile's master to the next (tuner/runner/stress/intermission.py), and let go for the master."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tuner.driver.stress.plan import StressPlan
from tuner.driver.stress.verify import StressDelivery
from tuner.runner import lifecycle
from tuner.runner.stress import run_stages as runner_module
from tuner.runner.stress.locust_processes import LocustOptions
from tuner.runner.stress.run_stages import StressRunner, _ProfileRun
from tuner.runner.stress.worker import _master_there
from tuner.spec.stress_load import load_stress
from tuner.store.environment import capture_environment
from tuner.store.results import ResultsStore
from tuner.target.base import LabSide, Target

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority

SPEC = """\
name: fast
workload:
  name: w
  topics: [{name: logs, partitions: 1, replication_factor: 1}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 10
profiles:
  current: {name: filebeat-like, linger_ms: 0}
shape: {steps: [1, 2, 3], step_s: 4, drain_s: 30, settle_s: 0}
gates: {network_idle_min: 0.3, on_fail: abort}
"""


class FakePool:
    waits: ClassVar[list[float]] = []

    def __init__(self, plan: StressPlan) -> None:
        self.tallies: dict[str, Any] = {}

    def start(self) -> None: ...

    def poll(self) -> None: ...

    def wait(self, timeout_s: float) -> bool:
        FakePool.waits.append(timeout_s)
        return True

    def stop(self) -> None: ...


class FakeLocust:
    """Runs until the runner asks for an abort; its status says step1 had a failed delivery."""

    def __init__(self, options: LocustOptions, plan: StressPlan, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.t0 = plan.t0
        self.master = type("P", (), {"returncode": 0})()

    def start(self) -> None:
        step1 = {"sent": 10, "acked": 9, "failed": 1, "latency_us": [[1000, 9]]}
        # step3 (8-12 s) is where the abort lands (step1 judged at 4 + 4.5 s); its last record was due at 9 s
        step3 = {"sent": 5, "acked": 5, "latency_us": [[1000, 5]], "last_due": self.t0 + 9.0}
        tally = {"stages": {"0": step1, "2": step3}}
        (self.out_dir / "status.json").write_text(json.dumps({"tally": tally}))

    def running(self) -> bool:
        return not (self.out_dir / "abort").exists()

    def wait(self, timeout_s: float) -> bool:
        return True

    def stop(self) -> None: ...

    def log_tail(self) -> str:
        return ""


def test_an_aborted_ramp_does_not_wait_for_the_rest_of_the_timeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module, "LEAD_S", 0.0)
    monkeypatch.setattr(runner_module, "TICK_S", 0.05)
    monkeypatch.setattr(runner_module, "ConsumerPool", FakePool)
    monkeypatch.setattr(runner_module, "LocustProcesses", FakeLocust)
    monkeypatch.setattr(lifecycle, "create_topics", lambda *a: None)
    monkeypatch.setattr(runner_module, "delete_topics", lambda *a: [])
    delivery = StressDelivery(verified=True, acked=9, consumed=9, acked_by_stage={0: 9})
    monkeypatch.setattr(runner_module, "verify_stress", lambda *a, **k: delivery)
    FakePool.waits = []
    spec = tmp_path / "fast.yaml"
    spec.write_text(SPEC)
    target = Target(
        name="lab", kind="lab", bootstrap_servers="127.0.0.1:1", scrape_interval_s=1.0, lab=LabSide(tmp_path)
    )
    runner = StressRunner(target, ResultsStore(tmp_path / "results"), LocustOptions())
    run = _ProfileRun(runner, load_stress(spec), "current", 0, capture_environment(1), admin=None)  # type: ignore[arg-type]

    started = time.monotonic()
    outcome = run.run()
    took = time.monotonic() - started

    assert outcome.aborted_at is not None and outcome.aborted_at.name == "step1-x1"
    steps = [s.record.stress for s in outcome.stages if s.record.stress]
    assert [s.verdict for s in steps] == ["failed", "held", "aborted"]  # step2 ran while step1 was judged
    t0 = steps[0].t0
    assert steps[2].end == outcome.records[2].client.window_end == t0 + 9.0
    assert outcome.records[2].client.offered_records == 6 * 10 * 1  # 6 producers (x3) x 10 msgs/s x 1 s
    assert FakePool.waits == []  # no "consumers finishing" until the plan's end (33 s away)
    assert took < 20, took


INTERMISSION_PORT = 19645  # the address a remote worker would join (this module's fixed port)


class FinishedLocust(FakeLocust):
    """A master that has run its timeline: it exits as soon as started. When it starts, the address
    it binds must be free (kbt let go of it)."""

    seen_at_start: ClassVar[list[str]] = []

    def start(self) -> None:
        super().start()
        FinishedLocust.seen_at_start.append(_probe())

    def running(self) -> bool:
        return False


def _probe() -> str:
    """What a remote worker finds at the master's address."""
    try:
        return "master" if _master_there("127.0.0.1", INTERMISSION_PORT, 1.0) else "next profile coming"
    except OSError:
        return "nothing"


@pytest.mark.parametrize(("after", "during_read_back"), [(1, "next profile coming"), (0, "nothing")])
def test_remote_workers_are_told_the_next_profile_is_coming_until_its_master_binds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int, during_read_back: str
) -> None:
    # A worker's --master-wait ran out while kbt read the last profile back: nothing was at the address
    monkeypatch.setattr(runner_module, "LEAD_S", 0.0)
    monkeypatch.setattr(runner_module, "ConsumerPool", FakePool)
    monkeypatch.setattr(runner_module, "LocustProcesses", FinishedLocust)
    monkeypatch.setattr(lifecycle, "create_topics", lambda *a: None)
    monkeypatch.setattr(runner_module, "delete_topics", lambda *a: [])
    seen: list[str] = []
    delivery = StressDelivery(verified=True, acked=9, consumed=9, acked_by_stage={0: 9})
    monkeypatch.setattr(runner_module, "verify_stress", lambda *a, **k: seen.append(_probe()) or delivery)
    FinishedLocust.seen_at_start = []
    spec = tmp_path / "fast.yaml"
    spec.write_text(SPEC)
    target = Target(
        name="lab", kind="lab", bootstrap_servers="127.0.0.1:1", scrape_interval_s=1.0, lab=LabSide(tmp_path)
    )
    options = LocustOptions(
        remote_workers=1, master_host="127.0.0.1", master_port=INTERMISSION_PORT, join_timeout_s=0.0
    )
    runner = StressRunner(target, ResultsStore(tmp_path / "results"), options)
    assert runner.intermission is not None
    runner.intermission.hold()  # as the run holds it before the first profile
    assert _probe() == "next profile coming"
    run = _ProfileRun(runner, load_stress(spec), "current", 0, capture_environment(1), None, after)  # type: ignore[arg-type]
    try:
        run.run()
        assert FinishedLocust.seen_at_start == ["nothing"]  # let go for the master to bind
        assert seen == [during_read_back]
    finally:
        runner.intermission.release()
    assert _probe() == "nothing"
