"""`kbt stress` on the real lab: locust producers, real-time and lagging consumers on a tiered topic,
gates per stage, one record per stage, clean processes and topics.

Bounded: each run is a short timeline (about a minute) that stops by itself. Nothing here asserts a
timing or a verdict that depends on how busy the machine is; the gates are set loose so that the
stages hold on a healthy lab, and what is asserted is what the run must always produce.

`pytest -s` prints the 1-process vs 2-local-worker totals (docs/benchmarks.md, ## Stress test).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from tuner.lab import LabState
from tuner.runner.stress.locust_processes import LocustOptions
from tuner.runner.stress.run_stages import StressObserver
from tuner.runner.stress.target_wiring import stress_runner
from tuner.spec.stress_load import load_stress
from tuner.store.results import ResultsStore

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SPEC = """\
name: it-stress
workload:
  name: it
  topics: [{name: it-stress, partitions: 4, replication_factor: 1}]
  producers: 2
  rate_per_producer: 20
  message: {kind: generated, bytes: 400}
  duration_s: 10
topic_configs:
  remote.storage.enable: true
  segment.ms: 2000
  local.retention.ms: 2000
profiles:
  current: {name: filebeat-like, linger_ms: 0, compression: gzip, acks: "1", partitioner: random}
shape: {prefill_s: 24, steps: [1, 2], step_s: 14, spike: {multiplier: 3, duration_s: 8}, ramp_down_s: 4,
        drain_s: 8, settle_s: 2}
consumer_groups:
  - {name: rt, mode: realtime}
  - {name: replay, mode: lagging, lag_s: 12}
gates: {network_idle_min: 0.01, request_queue_max: 1000, p99_ms: 60000, on_fail: continue}
"""

TOTALS_SPEC = """\
name: it-totals
workload:
  name: it
  topics: [{name: it-totals, partitions: 4, replication_factor: 1}]
  producers: 4
  rate_per_producer: 25
  message: {kind: generated, bytes: 300}
  duration_s: 10
profiles:
  batched: {name: batched, linger_ms: 20, compression: lz4, acks: "1"}
shape: {steps: [1], step_s: 12, drain_s: 8, settle_s: 2}
gates: {network_idle_min: 0.01, on_fail: continue}
"""


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "stress.yaml"
    path.write_text(text)
    return path


def _topics_with(admin: AdminClient, prefix: str) -> list[str]:
    return [t for t in admin.list_topics(timeout=10).topics if t.startswith(prefix)]


def _locust_procs(marker: str) -> list[int]:
    """Live processes whose command line mentions `marker` (the run's own results directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "locust" in cmdline:
            found.append(int(entry.name))
    return found


def test_stress_run_records_every_stage(lab: LabState, admin: AdminClient, tmp_path: Path) -> None:
    if not lab.tiered:
        pytest.skip("the lab runs without tiered storage (kbt lab up --no-tiered)")
    loaded = load_stress(_spec(tmp_path, SPEC))
    results = tmp_path / "results"
    runner = stress_runner(lab_dir=lab.lab_dir, results=results)
    outcome = runner.run(loaded, ["current"])

    profile = outcome.profiles[0]
    assert not profile.interrupted and profile.aborted_at is None
    assert profile.delivery is not None and profile.delivery.verified, profile.delivery
    assert profile.delivery.lost == 0 and profile.delivery.acked > 0
    records = ResultsStore(results).records("it-stress")
    kinds = [r.stress.stage.kind for r in records if r.stress is not None]
    assert kinds == ["prefill", "step", "step", "spike", "ramp_down"]  # every stage but the drain
    for record in records:
        step = record.stress
        assert step is not None
        assert record.client.records_acked > 0, record.name
        assert record.delivery.verified and record.delivery.lost == 0
        assert record.broker is not None and record.broker.brokers, record.name
        assert step.verdict in (("held", "failed") if step.stage.judged else ("not judged",))
        gates = {c.gate for c in step.gates}
        if step.stage.judged:
            assert {"network_idle", "request_queue", "p99", "failed", "lost"} <= gates
    steps = [r.stress for r in records if r.stress is not None and r.stress.stage.kind == "step"]
    for step in steps:
        # the real-time group measured end-to-end latency without and with the lagging readers
        assert step.realtime_e2e_p99_ms(with_lagging=False) is not None
        assert step.realtime_e2e_p99_ms(with_lagging=True) is not None
    replays = [
        c.second_half
        for r in records
        if r.stress is not None
        for c in r.stress.consumers
        if c.group == "replay"
    ]
    assert sum(h.records for h in replays) > 0, "the lagging group never read"
    assert any(h.mean_age_s is not None and h.mean_age_s >= 6 for h in replays), replays
    fetched = [r.stress.remote.fetch_requests_per_s or 0 for r in records if r.stress and r.stress.remote]
    assert max(fetched) > 0, "no fetch was served from the remote tier"
    assert _topics_with(admin, "it-stress-s0-") == []
    assert _locust_procs(str(results)) == []


ENGINE_SPEC = """\
name: it-engines
workload:
  name: it
  topics: [{name: it-engines, partitions: 4, replication_factor: 1}]
  producers: 2
  rate_per_producer: 20
  message: {kind: generated, bytes: 300}
  duration_s: 10
profiles:
  java: {name: java-batched, client: java, linger_ms: 20, compression: lz4}
  filebeat: {name: fb, client: filebeat}
shape: {steps: [1, 2], step_s: 8, drain_s: 4, settle_s: 2}
consumer_groups: [{name: rt, mode: realtime}]
gates: {network_idle_min: 0.01, request_queue_max: 1000, p99_ms: 60000, e2e_p99_ms: 60000, on_fail: continue}
"""


def test_a_teams_own_shipper_is_ramped_through_its_engine(
    lab: LabState, admin: AdminClient, tmp_path: Path
) -> None:
    """The Java producer and real Filebeat pods (a build is installed) ramped stage by stage, each
    stage a run of the kind's own engine: its records counted by that client, every acked (or
    written) record read back, a real-time group reading beside it, the brokers measured, the gates
    judged, no topic left."""
    loaded = load_stress(_spec(tmp_path, ENGINE_SPEC))
    results = tmp_path / "results"
    started: list[str] = []

    class Started(StressObserver):
        def engine_profile_started(self, label: str) -> None:
            started.append(label)  # where the CLI starts the profile's live figures

    runner = stress_runner(lab_dir=lab.lab_dir, results=results, observer=Started())
    outcome = runner.run(loaded, ["java", "filebeat"])
    assert started == ["java", "filebeat"]
    engines = {"java": "java", "filebeat": "filebeat"}
    for profile in outcome.profiles:
        assert not profile.interrupted and profile.aborted_at is None
        assert profile.delivery is not None and profile.delivery.verified, profile.delivery
        assert profile.delivery.lost == 0 and profile.delivery.acked > 0
        assert [s.stage.name for s in profile.stages] == ["step1-x1", "step2-x2"]
        for outcome_stage in profile.stages:
            record, stage = outcome_stage.record, outcome_stage.stage
            step = record.stress
            assert step is not None and step.stage == stage and step.verdict == "held", record.problems
            assert record.client.engine.startswith(engines[profile.label]), record.client.engine
            assert record.client.producers == stage.users
            # the stage's offered load reached the brokers (loosely: real Filebeat tails its files)
            offered = stage.users * 20 * (record.client.window_end - record.client.window_start)
            assert record.client.records_acked > 0.5 * offered, (record.client.records_acked, offered)
            assert record.delivery.verified and record.delivery.lost == 0
            assert record.broker is not None and record.broker.brokers, record.name
            assert {"network_idle", "request_queue", "p99", "e2e_p99", "failed", "lost"} <= {
                c.gate for c in step.gates
            }
            (reader,) = step.consumers  # the real-time group read the stage's records as they came
            assert reader.whole.records >= record.client.records_acked, (reader, record.client)
            assert step.realtime_e2e_p99_ms(with_lagging=False) is not None
    stored = ResultsStore(results).records("it-engines")
    assert len(stored) == 4 and all(r.stress is not None for r in stored)
    assert _topics_with(admin, "kbt-it-engines") == [] and _topics_with(admin, "it-engines") == []


def test_two_local_workers_produce_the_same_totals(lab: LabState, tmp_path: Path) -> None:
    loaded = load_stress(_spec(tmp_path, TOTALS_SPEC))
    offered = 4 * 25 * 12  # producers x msgs/s x the one step's seconds
    totals = {}
    for workers in (0, 2):
        results = tmp_path / f"results-{workers}"
        runner = stress_runner(lab_dir=lab.lab_dir, results=results, flags=LocustOptions(workers=workers))
        outcome = runner.run(loaded, ["batched"])
        records = outcome.profiles[0].records
        assert [r.stress.stage.name for r in records if r.stress] == ["step1-x1"]
        assert records[0].stress is not None and records[0].stress.locust_workers == max(1, workers)
        sent = sum(r.client.records_sent for r in records)
        acked = sum(r.client.records_acked for r in records)
        assert outcome.profiles[0].delivery is not None and outcome.profiles[0].delivery.lost == 0
        totals[workers] = (sent, acked)
        assert _locust_procs(str(results)) == []
    (sent_1, acked_1), (sent_2, acked_2) = totals[0], totals[2]
    print(
        f"\nkbt stress, 4 producers x 25 msgs/s for 12 s (offered {offered}):"
        f"\n  1 locust process: sent {sent_1}, acked {acked_1}"
        f"\n  master + 2 local workers: sent {sent_2}, acked {acked_2}"
        f"\n  sent {abs(sent_2 - sent_1) / sent_1:.2%} apart,"
        f" acked {abs(acked_2 - acked_1) / acked_1:.2%} apart"
    )
    assert abs(sent_1 - offered) / offered < 0.05, totals
    assert abs(sent_2 - sent_1) / sent_1 < 0.05, totals
    assert abs(acked_2 - acked_1) / acked_1 < 0.05, totals


def test_ctrl_c_stops_everything_and_keeps_judged_stages(
    lab: LabState, admin: AdminClient, tmp_path: Path
) -> None:
    text = SPEC.replace("prefill_s: 24", "prefill_s: 4").replace("steps: [1, 2]", "steps: [1, 2, 3, 4]")
    text = text.replace("p99_ms: 60000", "p99_ms: 5000")  # judged 6 s after its end
    spec = _spec(tmp_path, text)
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tuner", "stress", str(spec), "--lab-dir", str(lab.lab_dir),
         "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    children: set[int] = set()
    try:
        deadline = time.monotonic() + 180
        judged = False
        while time.monotonic() < deadline and proc.poll() is None:
            children |= _children(proc.pid)
            status = list(results.glob("it-stress/*.locust/status.json"))
            if status and time.time() > _first_judged_at(status[0].parent):
                judged = True
                break
            time.sleep(0.5)
        assert judged, "the first step was never judged"
        children |= _children(proc.pid) | set(_locust_procs(str(results)))
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("kbt: error: interrupted:"), err
    records = ResultsStore(results).records("it-stress")
    verdicts = [r.stress.verdict for r in records if r.stress is not None]
    assert verdicts and set(verdicts) <= {"interrupted", "failed"}, verdicts
    assert all(not r.delivery.verified for r in records)
    assert _topics_with(admin, "it-stress-s0-") == []
    alive = [pid for pid in children if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
    assert alive == [], alive


def _first_judged_at(out_dir: Path) -> float:
    """Epoch time after which the first step has surely been judged (its end + a grace)."""
    import json

    plan = json.loads((out_dir / "plan.json").read_text())
    first = next(s for s in plan["stages"] if s["kind"] == "step")
    return float(plan["t0"]) + first["start_s"] + first["duration_s"] + 15  # p99 SLO 5 s + scrape


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.add(int(entry.name))
    return out


def _zombie(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False
