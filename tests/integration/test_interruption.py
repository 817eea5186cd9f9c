"""Interrupting `kbt sweep` on the real lab, checked by PID: SIGTERM to kbt alone (what a supervisor
or `kill` sends) stops it like Ctrl-C: every driver process and every sarama-engine exits, completed
records stay, the exit status is 130 and `--resume` runs only what is left. A SIGKILLed kbt cannot
clean up: its driver processes still die with it (PR_SET_PDEATHSIG) and the lab keeps running.

(Ctrl-C to the whole process group is covered in test_sweep_engine.py.) Uses the session `lab`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labhelp import busy_host_only
from tests.integration.proctree import cmdline, descendants, wait_gone
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.lab import load_state
from tuner.lab.processes import is_ours
from tuner.store import ResultsStore

pytestmark = pytest.mark.integration

LIBRDKAFKA = """\
name: {name}
workload:
  name: {name}
  topics: [{{name: {name}, partitions: 3, replication_factor: 1}}]
  producers: 4
  processes: 2
  rate_per_producer: 50
  message: {{kind: generated, bytes: 300}}
  duration_s: 12
  warmup_s: 2
profiles:
  - {{name: first, linger_ms: 5}}
  - {{name: second, linger_ms: 50}}
name_format: "{{profile}}"
"""

FILEBEAT = """\
name: {name}
workload:
  name: {name}
  topics: [{{name: {name}, partitions: 3, replication_factor: 1}}]
  producers: 4
  processes: 2
  rate_per_producer: 50
  message: {{kind: generated, bytes: 300}}
  duration_s: 12
  warmup_s: 2
profiles:
  - {{name: first, client: filebeat, filebeat: {{input.engine: {engine}}}}}
  - {{name: second, client: filebeat, filebeat: {{input.engine: {engine}, queue.mem.flush.timeout: "1s"}}}}
name_format: "{{profile}}"
"""


def _start(lab: Any, tmp_path: Path, template: str, name: str) -> tuple[subprocess.Popen[str], list[str]]:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(template.format(name=name))
    cmd = [sys.executable, "-m", "tuner", "sweep", str(spec), "--results", str(tmp_path / "results"),
           "--lab-dir", str(lab.lab_dir)]  # fmt: skip
    # Its own session: only this test's signal reaches it, never the terminal's.
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    return proc, cmd


def _wait_second_run_loading(
    proc: subprocess.Popen[str], store: ResultsStore, sweep: str, engine: str
) -> set[int]:
    """Wait (bounded) until run 1 is recorded and run 2's load processes run; return their PIDs."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if store.paths(sweep):
            loaders = {p for p in descendants(proc.pid) if engine in cmdline(p)}
            if len(loaders) >= 2:
                time.sleep(2)  # producing, not just starting
                return descendants(proc.pid)
        time.sleep(0.3)
    _out, err = proc.communicate(timeout=30) if proc.poll() is not None else ("", "")
    raise AssertionError(f"the second run's load never started: {err[-2000:]}")


@pytest.mark.parametrize(
    ("template", "engine"),
    [
        (LIBRDKAFKA, "spawn_main"),
        (FILEBEAT.replace("{engine}", "emulated"), "sarama-engine"),
        (FILEBEAT.replace("{engine}", "real"), "filebeat.yml"),  # each pod: filebeat -c .../filebeat.yml
    ],
    ids=["librdkafka", "filebeat-emulated", "filebeat-real"],
)
def test_sigterm_to_kbt_alone_leaves_no_process_and_resume_finishes(
    lab: Any, tmp_path: Path, template: str, engine: str
) -> None:
    if engine == "filebeat.yml" and not filebeat_builds():
        pytest.skip("no real Filebeat build in the kbt cache: run 'make install' (scripts/build_filebeat.sh)")
    name = f"term-{engine.split('-')[0][:5]}"
    proc, cmd = _start(lab, tmp_path, template, name)
    store = ResultsStore(tmp_path / "results")
    children = _wait_second_run_loading(proc, store, name, engine)
    assert any(engine in cmdline(p) for p in children), children

    os.kill(proc.pid, signal.SIGTERM)  # kbt alone: it must stop its own children
    _out, err = proc.communicate(timeout=120)
    left = wait_gone(children, 15)
    assert not left, f"orphans after SIGTERM: {[(p, cmdline(p)[:80]) for p in left]}"
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted: 1 of 2 runs recorded" in err and "--resume" in err
    assert "Traceback" not in err
    [first] = store.records(name)
    assert first.name == "first" and busy_host_only(first.status, first.problems), first.problems

    again = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=400)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "skip first" in again.stdout
    records = store.records(name)
    assert sorted(r.name for r in records) == ["first", "second"]
    assert [r.run_id for r in records if r.name == "first"] == [first.run_id]


def test_sigkill_of_kbt_takes_its_drivers_with_it(lab: Any, tmp_path: Path) -> None:
    proc, _cmd = _start(lab, tmp_path, LIBRDKAFKA, "killed")
    store = ResultsStore(tmp_path / "results")
    children = _wait_second_run_loading(proc, store, "killed", "spawn_main")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)  # (its pipes stay open while a child holds them)
    # A worker still starting (importing, unpickling its task) has not asked for the signal yet; it
    # exits as soon as it gets there and finds its parent gone. On a busy machine that takes a while.
    left = wait_gone(children, 90)
    assert not left, f"driver processes outlived a SIGKILLed kbt: {[(p, cmdline(p)[:80]) for p in left]}"
    state = load_state(lab.lab_dir)  # the lab itself is untouched: every process it started still runs
    assert [p.component for p in state.processes if not is_ours(p.pid, p.marker)] == []
