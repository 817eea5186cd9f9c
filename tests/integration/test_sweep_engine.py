"""The sweep engine against the real lab: measurement truth, Ctrl-C, --resume.

Uses the session `lab` fixture (tests/integration/conftest.py): a running lab's LabState.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labhelp import busy_host_only
from tuner.runner.verdict import request_count_mismatch
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep
from tuner.store import ResultsStore

pytestmark = pytest.mark.integration

SPEC = """\
name: {name}
workload:
  name: {name}
  topics: [{{name: {name}, partitions: 6, replication_factor: 1}}]
  producers: 4
  processes: 2
  rate_per_producer: 50
  message: {{kind: generated, bytes: 500}}
  duration_s: {duration}
  warmup_s: 3
profiles:
  - {{name: unbatched, linger_ms: 0, partitioner: random, compression: gzip}}
  - {{name: batched, linger_ms: 100, partitioner: sticky, compression: zstd}}
  - {{name: batched-more, linger_ms: 300, partitioner: sticky, compression: lz4}}
name_format: "{{profile}}"
"""


def _spec(tmp_path: Path, name: str, duration: int) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(SPEC.format(name=name, duration=duration))
    return path


def test_client_and_broker_request_counts_agree(lab: Any, tmp_path: Path) -> None:
    """Measurement truth: client ProduceRequests vs the broker's TotalProduceRequests, within 3%."""
    loaded = load_sweep(_spec(tmp_path, "truth", duration=15))
    single = type(loaded)(path=loaded.path, spec=loaded.spec, runs=loaded.runs[:1])
    runner = sweep_runner(lab_dir=lab.lab_dir, results=tmp_path / "results")
    outcome = runner.run(single)
    [record] = outcome.records
    # On a shared machine the client may fall behind its schedule ("unclean" for that reason alone);
    # the request counts must agree either way.
    assert busy_host_only(record.status, record.problems), record.problems
    assert record.delivery.verified and record.delivery.lost == 0
    assert record.broker is not None
    client, broker = record.client, record.broker
    assert client.produce_requests > 100  # enough requests for 3% to mean something
    whole_run = request_count_mismatch(client.produce_requests_total, broker.topic_produce_requests_total)
    window = request_count_mismatch(client.produce_requests, broker.topic_produce_requests)
    assert whole_run is not None and whole_run <= 0.03, (client.produce_requests_total, broker)
    assert window is not None and window <= 0.03, (client.produce_requests, broker.topic_produce_requests)
    assert broker.network_idle_ratio is not None and 0 < broker.network_idle_ratio <= 1
    assert len(broker.brokers) == len(lab.brokers)


def _descendants(root: int) -> set[int]:
    """Every live process below `root` (engines may start their workers in a new session)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def test_ctrl_c_keeps_completed_records_and_resume_finishes(lab: Any, tmp_path: Path) -> None:
    spec = _spec(tmp_path, "resume", duration=10)
    results = tmp_path / "results"
    cmd = [
        sys.executable,
        "-m",
        "tuner",
        "sweep",
        str(spec),
        "--results",
        str(results),
        "--lab-dir",
        str(lab.lab_dir),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    store = ResultsStore(results)
    deadline = time.monotonic() + 120
    while not store.paths("resume") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
    assert len(store.paths("resume")) == 1, proc.communicate(timeout=5)
    time.sleep(6)  # well inside the second run: its driver processes are producing
    drivers = _descendants(proc.pid)
    assert drivers, "the second run's driver processes should be running"
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    interrupted_at = time.monotonic()
    while (_alive(drivers) or proc.poll() is None) and time.monotonic() - interrupted_at < 10:
        time.sleep(0.2)
    assert not _alive(drivers), "driver processes survived Ctrl-C by 10 s"
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted: 1 of 3 runs recorded" in err
    [first] = store.records("resume")
    assert first.name == "unbatched"

    proc2 = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert proc2.returncode == 0, proc2.stderr
    assert "skip unbatched" in proc2.stdout
    # Piped, the live figures are plain lines every 5 s while a run produces.
    live = re.findall(r"^live (\S+)  t=\d+s  client .* req/s  broker .* acked ([\d,]+|-)  lost (\d+|-)$",
                      proc2.stdout, re.M)  # fmt: skip
    assert {name for name, _, _ in live} >= {"batched", "batched-more"}, proc2.stdout
    assert all(lost in ("0", "-") for _, _, lost in live)
    assert any(acked not in ("0", "-") for _, acked, _ in live), proc2.stdout
    records = store.records("resume")
    assert sorted(r.name for r in records) == ["batched", "batched-more", "unbatched"]
    assert [r.run_id for r in records if r.name == "unbatched"] == [first.run_id]
    assert all(busy_host_only(r.status, r.problems) for r in records), [r.problems for r in records]
