"""`kbt stress-worker`: a load machine's side of a distributed stress test.

It knows only the master's address. For each profile of the master's run it starts one locust
worker that fetches the locust file from the master (`-f -`) and gets the run's plan with its spawn
message (topics, rates, timeline, the target's bootstrap servers and client security as
references), produces to the target directly, and ships its tallies to the master with every
locust report. When the worker quits it leaves a summary (what it shipped; whether another
profile follows, for which a fresh worker joins the next master on the same address).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tuner.core.errors import BadInput, Unreachable
from tuner.driver.stress.plan import WORKER_REPORT_ENV
from tuner.runner.stress.locust_processes import worker_command

STOP_GRACE_S = 15.0


@dataclass(frozen=True)
class WorkerSummary:
    profile: str
    profiles_after: int
    worker_index: int
    sent: int
    acked: int
    failed: int

    def line(self) -> str:
        return (
            f"profile {self.profile}: worker {self.worker_index} sent {self.sent}, acked {self.acked},"
            f" failed {self.failed} (shipped to the master)"
        )


def parse_master(text: str) -> tuple[str, int]:
    """`HOST:PORT` (an IPv6 host in brackets) -> (host, port); BadInput otherwise."""
    from tuner.target.file import host_port

    parsed = host_port(text.strip())
    if parsed is None:  # a host with blanks reached locust, whose traceback was printed
        raise BadInput(
            f"--master {text!r}: give HOST:PORT (the kbt stress run's --master-host and --master-port)"
        )
    return parsed


def _read_summary(path: Path) -> WorkerSummary | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        counts = {f.name: int(data[f.name]) for f in dataclasses.fields(WorkerSummary) if f.name != "profile"}
        return WorkerSummary(profile=str(data["profile"]), **counts)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_one(host: str, port: int) -> tuple[int, WorkerSummary | None]:
    """One locust worker for one profile: its exit status and summary (None: it got no plan)."""
    with tempfile.TemporaryDirectory(prefix="kbt-stress-worker-") as tmp:
        report = Path(tmp) / "report.json"
        # TMPDIR: the locust file fetched from the master lands here, not shared with other workers.
        env = {**os.environ, WORKER_REPORT_ENV: str(report), "TMPDIR": tmp, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(worker_command("-", host, port), env=env, stdin=subprocess.DEVNULL)
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            _stop(proc)
            raise
        return code, _read_summary(report)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """A Ctrl-C reached the worker too (same terminal); SIGTERM covers a kbt stopped by SIGTERM."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def serve(host: str, port: int, say: Callable[[str], None]) -> list[WorkerSummary]:
    """Work every profile of the master's stress test, one locust worker each, until the last."""
    done: list[WorkerSummary] = []
    while True:
        say(f"joining the kbt stress master at {host}:{port}")
        code, summary = run_one(host, port)
        if summary is None:
            raise Unreachable(
                f"no stress plan from the master at {host}:{port} (locust worker exited with {code});"
                " is 'kbt stress --remote-workers N' running with --master-host reachable from here?"
            )
        say(summary.line())
        done.append(summary)
        if summary.profiles_after <= 0:
            return done
