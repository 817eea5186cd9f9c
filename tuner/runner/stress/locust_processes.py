"""The locust processes of one stress run: one process (locust's local runner), or a master and
local workers; more workers may join from other machines (`--expect-workers` counts them).

Each process runs in its own session, so a Ctrl-C in the terminal reaches kbt only: kbt stops
locust itself (SIGTERM: locust quits cleanly; SIGKILL after a grace), and nothing outlives it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.numbers import cut_value
from tuner.core.paths import repo_root
from tuner.driver.engine_process import stop
from tuner.driver.stress.plan import StressPlan

LOCUSTFILE = Path("loadtests") / "stress_locustfile.py"
STOP_GRACE_S = 10.0
LOOPBACK = "127.0.0.1"
ALL_INTERFACES = ("0.0.0.0", "::", "*")  # --master-host values that listen on every address


@dataclass(frozen=True)
class LocustOptions:
    """Where locust runs, as `kbt stress` was told; a port not given (None) is taken from the
    target's local port block (target_wiring.stress_runner), as are the exporter ports."""

    workers: int = 0  # 0: one locust process; N: a master and N local workers
    remote_workers: int = 0  # more workers expected from other machines
    master_host: str = LOOPBACK  # the master binds here (0.0.0.0 to accept other machines)
    master_port: int | None = None
    web_ui: bool = False
    web_port: int | None = None
    join_timeout_s: float = 60.0  # remote workers: from start to the first stage, to join
    # Client exporter ports (scraped as job kbt-client): one per locust process, one per consumer group.
    producer_ports: Sequence[int] = ()
    consumer_ports: Sequence[int] = ()

    @property
    def total_workers(self) -> int:
        return self.workers + self.remote_workers


def locustfile_path() -> Path:
    path = repo_root() / LOCUSTFILE
    if not path.is_file():
        raise EnvironmentProblem(f"locust file {path} not found (kbt stress runs from a kbt checkout)")
    return path


def master_command(options: LocustOptions, plan: StressPlan, out_dir: Path) -> list[str]:
    cmd = [
        sys.executable, "-m", "locust", "-f", str(locustfile_path()),
        "--kbt-plan", plan.model_dump_json(), "--loglevel", "WARNING", "--csv", str(out_dir / "locust"),
    ]  # fmt: skip
    if options.web_ui:
        cmd += ["--autostart", "--autoquit", "2", "--web-host", LOOPBACK, "--web-port", str(options.web_port)]
    else:
        cmd += ["--headless"]
    if options.total_workers:  # a master, its workers local or remote
        cmd += [
            "--master", "--master-bind-host", options.master_host,
            "--master-bind-port", str(options.master_port), "--expect-workers", str(options.total_workers),
        ]  # fmt: skip
    return cmd


def remote_worker_command(options: LocustOptions) -> str:
    """The one command a load machine runs to join (docs/targets.md, "Distributed stress")."""
    host = options.master_host
    if host in (*ALL_INTERFACES, ""):
        host = "<this machine's address>"
    return f"kbt stress-worker --master {host}:{options.master_port}"


def bind_address(host: str) -> str:
    """The address a socket binds for `--master-host` (locust's `*` is every IPv4 interface)."""
    return "0.0.0.0" if host == "*" else host


def check_master_host(host: str, workers: int = 1) -> None:
    """--master-host names an address of this machine (or all of them: 0.0.0.0, ::, locust's `*`)
    when there is a master to bind it (`workers`, local and remote; one locust process binds
    nothing); BadInput in one line otherwise. The master's bind failed in locust's log and the run
    went on without a master."""
    if workers <= 0:
        return
    try:
        infos = socket.getaddrinfo(bind_address(host), None, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.bind((infos[0][4][0], 0))  # any free port: only the address is asked
    except UnicodeError:  # a label past 63 characters
        raise BadInput(f"--master-host {cut_value(host)}: not a host name") from None
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise BadInput(
            f"--master-host {cut_value(host)}: not an address of this machine the locust master can"
            f" listen on ({why}); 0.0.0.0 listens on every one"
        ) from None


def check_locust_flags(
    host: str, workers: int, master_port: int | None, web_ui: bool, web_port: int | None
) -> None:
    """`kbt stress`'s locust flags, before anything starts: --master-host as above, and a master
    port that is not also the web UI's (one of the two binds failed only when the master started)."""
    check_master_host(host, workers)
    if workers > 0 and web_ui and master_port is not None and master_port == web_port:
        raise BadInput(f"--master-port and --web-port are both {master_port}: give each its own port")


def worker_command(locustfile: str, host: str, port: int) -> list[str]:
    """A locust worker of `locustfile` (`-`: fetched from the master) joining the master at host:port;
    it gets the plan from the master, a local worker as one on another machine does."""
    return [
        sys.executable, "-m", "locust", "-f", locustfile, "--worker",
        "--master-host", host, "--master-port", str(port), "--loglevel", "WARNING",
    ]  # fmt: skip


class LocustProcesses:
    def __init__(self, options: LocustOptions, plan: StressPlan, out_dir: Path) -> None:
        self.options = options
        self.plan = plan
        self.out_dir = out_dir
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        commands = [("master", master_command(self.options, self.plan, self.out_dir))]
        port = self.options.master_port
        assert port is not None  # stress_runner gives the target's when none was
        local = worker_command(str(locustfile_path()), LOOPBACK, port)
        commands += [(f"worker-{i}", local) for i in range(self.options.workers)]
        for name, cmd in commands:
            with (self.out_dir / f"locust-{name}.log").open("wb") as log:  # the process keeps its own
                proc = subprocess.Popen(
                    cmd,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                )
            self.procs.append((name, proc))

    @property
    def master(self) -> subprocess.Popen[bytes]:
        return self.procs[0][1]

    def running(self) -> bool:
        return self.master.poll() is None

    def wait(self, timeout_s: float) -> bool:
        """Wait for every process to exit by itself; True when they all did."""
        deadline = time.monotonic() + timeout_s
        for _, proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                return False
        return True

    def stop(self) -> None:
        """SIGTERM (locust quits and reports), then SIGKILL whatever is left after a grace."""
        stop([proc for _, proc in self.procs], STOP_GRACE_S)

    def log_tail(self, name: str = "master", lines: int = 3) -> str:
        path = self.out_dir / f"locust-{name}.log"
        try:
            raw = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        # a traceback's frames and source lines are indented: its exception lines say what failed
        text = [line.strip() for line in raw if line.strip() and not line[:1].isspace()]
        text = [line for line in text if not line.startswith("Traceback (most recent call last)")]
        interesting = [line for line in text if "Error" in line or "error" in line] or text
        return " | ".join(interesting[-lines:])
