"""The fault matrix on a real lab: every scenario of `kbt chaos` run as the CLI runs it (a subprocess,
loadtests/chaos.yaml's load beside the fault), then its record checked here on its own terms:

- the fault really happened, in full (the events name each kill, failover, pause, toxic or locked
  directory; the load goes on past its duration until the fault script is done, and a script cut
  short at the load's cap, three times its duration, fails the run);
- positive cases: 0 acked records lost, 0 duplicates, per-partition order kept (acks all,
  idempotence on, RF 3, min.insync.replicas 2);
- 2 of 3 brokers down and a blackhole past the delivery timeout: the run is marked degraded (never a
  tuning result) and still 0 acked records are lost;
- negative controls: acks=1 + leader SIGKILL must show lost records, idempotence off + retries +
  connection resets must show duplicates; if the verification missed them it proves nothing;
- afterwards the cluster is whole again: every broker registered, no toxic, no paused broker or
  locked directory left in the lab's fault journal.

Slow (20-25 min): `make test-chaos`, not part of `make test`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tuner.core.paths import repo_root
from tuner.lab import LabState, load_state
from tuner.lab.faults import JOURNAL
from tuner.lab.toxiproxy import Toxiproxy, proxies
from tuner.runner.chaos.netem import netem_status
from tuner.runner.chaos.run_matrix import READY_WAIT_S, load_cap_s, wait_cluster_ready
from tuner.runner.chaos.scenarios import BY_NAME, CLEAN_BOUNCES, HARD_BOUNCES, MATRIX, Scenario
from tuner.store import ResultsStore, RunRecord

# A test may take its load's cap, the wait for a whole cluster before it, driver start and read-back.
TEST_TIMEOUT_S = int(max(load_cap_s(s) for s in MATRIX) + 2 * READY_WAIT_S + 300)
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(TEST_TIMEOUT_S)]

SPEC = repo_root() / "loadtests" / "chaos.yaml"

# What the events of each scenario must show: (text, at least how many times).
FAULT_DONE: dict[str, list[tuple[str, int]]] = {
    "leader-kill": [("SIGKILL broker", 1), ("started again", 1)],
    "clean-bounce": [
        (what, CLEAN_BOUNCES) for what in ("shut down cleanly", "partition 0 led by broker", "started again")
    ],
    "hard-bounce": [
        (what, HARD_BOUNCES) for what in ("SIGKILL broker", "partition 0 led by broker", "started again")
    ],
    "leader-pause": [("SIGSTOP broker", 1), ("replica.lag.time.max.ms", 1), ("SIGCONT broker", 1)],
    "two-down": [("SIGKILL broker", 2), ("started again", 2)],
    "latency": [("toxic latency", 1), ("toxics removed", 1)],
    "bandwidth": [("toxic bandwidth", 1), ("toxics removed", 1)],
    "blackhole": [("toxic timeout", 1), ("toxics removed", 1)],
    "reset-peer": [("reset pulses done", 1)],
    "packet-loss": [("tc netem removed", 1)],
    "tiered-remote-unwritable": [
        ("segments in the remote tier", 1),
        ("remote tier made unwritable", 1),
        ("reading offset 0 during the fault", 1),
        ("remote tier writable again", 1),
    ],
    "control-acks1-leader-kill": [("SIGSTOP broker", 2), ("SIGKILL broker", 1), ("started again", 1)],
    "control-no-idempotence-resets": [("reset pulses done", 1)],
}


def test_every_scenario_is_checked() -> None:
    assert set(FAULT_DONE) == set(BY_NAME)


def _run_chaos(lab: LabState, results: Path, scenario: Scenario) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "tuner", "chaos", str(SPEC), "--faults", scenario.name,
           "--lab-dir", str(lab.lab_dir), "--results", str(results)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBT_")}
    env["COLUMNS"] = "200"
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=env, cwd=repo_root(),
        timeout=load_cap_s(scenario) + 2 * READY_WAIT_S + 240,
    )  # fmt: skip
    logs = results / "output"
    logs.mkdir(exist_ok=True)
    (logs / f"{scenario.name}.txt").write_text(
        f"$ kbt chaos {SPEC.name} --faults {scenario.name}\nexit {proc.returncode}\n"
        f"---- stdout\n{proc.stdout}\n---- stderr\n{proc.stderr}"
    )
    return proc


def _record(results: Path, scenario: Scenario, since: float) -> RunRecord:
    found = [
        r for r in ResultsStore(results).records()
        if r.fault is not None and r.fault.scenario == scenario.name and r.created_at >= since
    ]  # fmt: skip
    assert found, f"kbt chaos wrote no record for {scenario.name}"
    return found[-1]


def _count(record: RunRecord, text: str) -> int:
    assert record.fault is not None
    return sum(1 for e in record.fault.events if text in e.what)


def _assert_cluster_whole(lab: LabState) -> None:
    problems = wait_cluster_ready(load_state(lab.lab_dir), READY_WAIT_S)
    assert problems == [], problems
    assert not (lab.lab_dir / JOURNAL).exists(), (lab.lab_dir / JOURNAL).read_text()
    proxy = Toxiproxy(lab.config.toxiproxy_api_port)
    names = [p["name"] for p in proxies(lab.config)]  # the proxies the lab configured
    left = {name: proxy.toxics(name) for name in names if proxy.toxics(name)}
    assert left == {}, f"toxics left on the proxies: {left}"
    remote = lab.remote_storage_dir
    assert os.access(remote, os.W_OK), f"remote tier {remote} still unwritable"


@pytest.mark.parametrize("scenario", MATRIX, ids=[s.name for s in MATRIX])
def test_fault(chaos_lab: LabState, chaos_results: Path, scenario: Scenario) -> None:
    if "netem" in scenario.needs:
        available, why = netem_status()
        if not available:
            pytest.skip(why)
    since = time.time()
    proc = _run_chaos(chaos_lab, chaos_results, scenario)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    record = _record(chaos_results, scenario, since)
    fault, delivery = record.fault, record.delivery
    assert fault is not None
    summary = f"{scenario.name}: {delivery}; events: {[e.what for e in fault.events]}"

    # The fault really happened, inside the load.
    assert fault.events and fault.events[0].what == "records are flowing", summary
    assert _count(record, "fault script done") == 1, f"the fault script did not finish: {summary}"
    for text, times in FAULT_DONE[scenario.name]:
        assert _count(record, text) >= times, f"expected {times}x {text!r}: {summary}"
    assert delivery.verified and delivery.acked > 0, summary
    assert record.client is not None and record.client.records_per_s > 0, summary
    assert not record.tuning_result, "a chaos record must never count as a tuning result"

    if scenario.expect == "no-loss":
        assert delivery.lost == 0, f"acked records lost: {summary}"
        assert delivery.duplicates == 0 and delivery.out_of_order == 0, summary
        assert fault.verdict == "pass" and proc.returncode == 0, summary
    elif scenario.expect == "degraded":
        assert delivery.lost == 0, f"acked records lost: {summary}"
        assert record.degraded, f"the cluster could not take every write, yet not degraded: {summary}"
        assert delivery.failed + delivery.indeterminate > 0, summary
        assert fault.verdict == "pass" and proc.returncode == 0, summary
    else:  # a negative control: the verification must catch what the weakened setting lets through
        if scenario.profile.get("acks") == "1":
            assert delivery.lost > 0, f"acks=1 + leader kill, yet no loss seen: {summary}"
        else:
            assert delivery.duplicates > 0, f"idempotence off + resets, yet no duplicate seen: {summary}"
        assert fault.verdict == "pass" and proc.returncode == 0, summary

    _assert_cluster_whole(chaos_lab)
