"""Start and stop lab processes by recorded PID, never by name, and check loopback ports.

A PID is only signalled while /proc/<pid>/cmdline still contains the record's marker (a path inside
the lab directory), so a PID reused by an unrelated process is never touched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from tuner.lab.config import LOOPBACK

# Popen objects of children started by this interpreter: kept so they can be reaped (no zombies,
# no "still running" warnings when a long-lived process such as pytest starts a lab).
_children: dict[int, subprocess.Popen[bytes]] = {}


def spawn(command: Sequence[str], log_file: Path, cwd: Path | None = None) -> int:
    """Start a detached process (own session, stdin closed, stdout+stderr to `log_file`)."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "ab") as out:
        proc = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    _children[proc.pid] = proc
    return proc.pid


def is_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as dead)."""
    proc = _children.get(pid)
    if proc is not None and proc.poll() is not None:  # a child of ours that ended: reaped
        _children.pop(pid, None)
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        return True
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X")


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def is_ours(pid: int, marker: str) -> bool:
    """The recorded process is still running and is still the one we started.

    A child of this interpreter that has not been reaped cannot have had its PID reused, so it is
    ours without looking; any other PID must still show the marker in its command line (read twice:
    /proc/<pid>/cmdline can come back empty while a process is busy mapping memory)."""
    child = _children.get(pid)
    if child is not None and child.poll() is None:
        return True
    if not is_alive(pid):
        return False
    for attempt in range(3):
        text = cmdline(pid)
        if text:
            return marker in text
        time.sleep(0.05 * (attempt + 1))
    return False


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def stop(pids: Iterable[tuple[int, str]], timeout_s: float = 30.0) -> list[int]:
    """SIGTERM every (pid, marker) still ours, SIGKILL what is left after `timeout_s`.

    Returns the PIDs that had to be killed."""
    targets = [pid for pid, marker in pids if is_ours(pid, marker)]
    for pid in targets:
        _signal(pid, signal.SIGTERM)
        _signal(pid, signal.SIGCONT)  # a stopped (SIGSTOP) process acts on SIGTERM only once resumed
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(is_alive(p) for p in targets):
        time.sleep(0.2)
    killed = [p for p in targets if is_alive(p)]
    for pid in killed:
        _signal(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(is_alive(p) for p in killed):
        time.sleep(0.1)
    for pid in targets:
        proc = _children.pop(pid, None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)
    return killed


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    """True when something listens on host:port (or the port cannot be bound for another reason)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno in (errno.EADDRINUSE, errno.EACCES)
    return False


def port_listening(port: int, host: str = LOOPBACK, timeout_s: float = 0.5) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        return sock.connect_ex((host, port)) == 0


TAIL_BYTES = 256 * 1024


def tail(path: Path, lines: int) -> str:
    """The last `lines` lines of a log file ('' when it does not exist). A log that is not a regular
    file is one BadInput line: a FIFO would block the reader, /dev/zero never end."""
    from tuner.core.inputs import check_regular

    if not path.exists() and not path.is_symlink():
        return ""
    check_regular(path, "lab log", None)
    try:
        # O_NONBLOCK: a path swapped for a FIFO since the check does not block the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read(TAIL_BYTES).decode(errors="replace")  # at most TAIL_BYTES, whatever it is
    except FileNotFoundError:
        return ""
    return "\n".join(data.splitlines()[-lines:]) if lines > 0 else ""
