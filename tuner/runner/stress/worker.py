"""`kbt stress-worker`: a load machine's side of a distributed stress test.

It knows only the master's address. For each profile of the master's run it starts one locust
worker that fetches the locust file from the master (`-f -`) and gets the run's plan with its spawn
message (topics, rates, timeline, the target's bootstrap servers and client security as
references), produces to the target directly, and ships its tallies to the master with every
locust report. When the worker quits it leaves a summary (what it shipped; whether another
profile follows, for which a fresh worker joins the next master on the same address).

Workers may start before their master, as locust's do. kbt waits for the master's port itself,
bounded by `--master-wait` (locust's own 300 s by default), and says in one line when no master
came: locust's worker, started once the master listens, would otherwise ask for its locust file 60
times 5 s apart, print its own lines and leave kbt only its exit status. Between profiles the worker
first lets the last profile's master go, so that it does not take the closing master for the next.
While kbt prepares a profile (between two, or before the first) it holds the master's address and
says so (tuner/runner/stress/intermission.py): the worker waits on, and `--master-wait` counts only
the time nothing is there at all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tuner.core.errors import BadInput, Unreachable
from tuner.driver.stress.plan import WORKER_REPORT_ENV
from tuner.runner.stress.intermission import told_next
from tuner.runner.stress.locust_processes import worker_command

STOP_GRACE_S = 15.0
MASTER_WAIT_S = 300.0  # locust's own wait for its master: 60 tries of its locust file, 5 s apart
MAX_MASTER_WAIT_S = 86_400.0
PROBE_EVERY_S = 1.0  # how often the master's port is tried while waiting for it
MASTER_START_S = 30.0  # from kbt letting the held address go to its locust master listening
ANSWER_WAIT_S = 1.0  # for kbt's word between profiles once connected (a master says nothing kbt reads)


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


def _master_there(host: str, port: int, timeout_s: float) -> bool:
    """True: a master takes connections at host:port; False: kbt is there preparing a profile (it
    said so). OSError: nothing takes the connection."""
    with socket.create_connection((host, port), timeout=timeout_s) as conn:
        return not told_next(conn, ANSWER_WAIT_S)


def await_master(host: str, port: int, wait_s: float, say: Callable[[str], None]) -> None:
    """Return once the master's port takes a connection; Unreachable in one line after `wait_s`
    with nothing there. While kbt says another profile's master is coming, the wait starts over."""
    bound = wait_s
    deadline = time.monotonic() + bound
    said: set[bool] = set()
    while True:
        try:
            if _master_there(host, port, max(0.1, min(5.0, deadline - time.monotonic()))):
                return
            # kbt is at work on the next profile: not gone. Once it lets the address go, its master
            # takes a moment to bind it (locust starting), a --master-wait of 1 s or not.
            bound = max(wait_s, MASTER_START_S)
            deadline = time.monotonic() + bound
            why = ""
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
        left = deadline - time.monotonic()
        if left <= 0:
            raise Unreachable(
                f"no kbt stress master at {host}:{port} after {bound:g} s ({why}); is 'kbt stress"
                " --remote-workers N' running with --master-host reachable from here? (--master-wait"
                " waits longer)"
            )
        between = not why
        if between not in said:  # each state said once
            said.add(between)
            say(
                f"kbt stress at {host}:{port} is preparing the next profile: waiting for its master"
                if between
                else f"waiting up to {bound:g} s for the master at {host}:{port} ({why})"
            )
        time.sleep(min(PROBE_EVERY_S, left))


def _master_gone(host: str, port: int, wait_s: float = STOP_GRACE_S) -> None:
    """Wait (at most `wait_s`) until the last profile's master no longer takes connections: its
    port refuses them, or kbt holds it between profiles."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if not _master_there(host, port, 1.0):
                return
        except OSError:
            return
        time.sleep(0.2)


def serve(
    host: str, port: int, say: Callable[[str], None], wait_s: float = MASTER_WAIT_S
) -> list[WorkerSummary]:
    """Work every profile of the master's stress test, one locust worker each, until the last;
    each master waited for at most `wait_s`."""
    done: list[WorkerSummary] = []
    while True:
        say(f"joining the kbt stress master at {host}:{port}")
        await_master(host, port, wait_s, say)
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
        _master_gone(host, port)
