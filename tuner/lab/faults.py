"""Faults on the lab's own processes and files, for `kbt chaos`: signal a broker, make a directory
unwritable. Every fault that outlives its process (a SIGSTOPped broker, a locked directory) is noted
in a journal in the lab directory first, so `kbt lab down` / `kbt lab up` undo it even when the
`kbt` that caused it was killed.

Only processes the lab recorded are signalled (by PID, guarded by the marker in their command line).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.inputs import read_json
from tuner.core.writes import atomic_write_json
from tuner.lab.layout import broker_component
from tuner.lab.processes import is_alive, is_ours
from tuner.lab.state import LabState

JOURNAL = "faults.json"


def _journal_path(lab_dir: Path) -> Path:
    return Path(lab_dir) / JOURNAL


def _read(lab_dir: Path) -> dict[str, list[dict[str, Any]]]:
    try:
        data = read_json(_journal_path(lab_dir), "fault journal")
    except BadInput:
        data = None
    data = data if isinstance(data, dict) else {}  # none yet, or unreadable: nothing to undo
    return {"paused": list(data.get("paused", [])), "locked": list(data.get("locked", []))}


def _write(lab_dir: Path, data: dict[str, list[dict[str, Any]]]) -> None:
    path = _journal_path(lab_dir)
    if not data["paused"] and not data["locked"]:
        path.unlink(missing_ok=True)
        return
    atomic_write_json(path, data, "fault journal")


# ---- brokers ---------------------------------------------------------------------------------


def broker_pid(state: LabState, node: int) -> int | None:
    """The PID of broker `node` when it is running (and still the process the lab started)."""
    rec = state.process(broker_component(node))
    if rec is None or not is_ours(rec.pid, rec.marker):
        return None
    return rec.pid


def signal_broker(state: LabState, node: int, sig: signal.Signals) -> int:
    """Send `sig` to broker `node`; returns its PID. SIGSTOP is journaled until SIGCONT."""
    rec = state.process(broker_component(node))
    pid = broker_pid(state, node)
    if rec is None or pid is None:
        raise EnvironmentProblem(f"broker {node} is not running")
    data = _read(state.lab_dir)
    if sig == signal.SIGSTOP:
        data["paused"].append({"pid": pid, "marker": rec.marker})
        _write(state.lab_dir, data)  # noted before the broker freezes
    os.kill(pid, sig)
    if sig in (signal.SIGCONT, signal.SIGKILL, signal.SIGTERM):
        if sig != signal.SIGCONT:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # a stopped broker must run to act on SIGTERM
        data["paused"] = [p for p in data["paused"] if p["pid"] != pid]
        _write(state.lab_dir, data)
    return pid


def wait_exited(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while is_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


# ---- directories ------------------------------------------------------------------------------


def _dirs(root: Path) -> list[Path]:
    return [root, *sorted(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]


def lock_dir(lab_dir: Path, root: Path) -> int:
    """Make `root` and every directory below it refuse new files; returns how many were locked.

    root ignores permission bits, so as root the directories get the immutable attribute
    (chattr +i); otherwise their write bits are cleared."""
    data = _read(lab_dir)
    immutable = os.geteuid() == 0
    dirs = _dirs(root)
    data["locked"].append({"path": str(root), "immutable": immutable})
    _write(lab_dir, data)  # noted first: a kill half-way is still undone
    if immutable:
        _chattr("+i", dirs)
    else:
        for path in dirs:
            path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
    return len(dirs)


def unlock_dir(lab_dir: Path, root: Path) -> None:
    data = _read(lab_dir)
    entries = [e for e in data["locked"] if e["path"] == str(root)]
    _unlock(root, immutable=any(e["immutable"] for e in entries) or os.geteuid() == 0)
    data["locked"] = [e for e in data["locked"] if e["path"] != str(root)]
    _write(lab_dir, data)


def _unlock(root: Path, immutable: bool) -> None:
    if not root.is_dir():
        return
    if immutable:
        _chattr("-i", [root])  # the children are only listable once the parent is writable again
        _chattr("-i", _dirs(root))
    for path in _dirs(root):
        path.chmod(stat.S_IMODE(path.stat().st_mode) | 0o200)


def _chattr(flag: str, paths: list[Path]) -> None:
    for start in range(0, len(paths), 200):
        chunk = [str(p) for p in paths[start : start + 200]]
        out = subprocess.run(["chattr", flag, *chunk], capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise EnvironmentProblem(f"chattr {flag} failed: {out.stderr.strip()[:200]}")


# ---- undo --------------------------------------------------------------------------------------


def undo_faults(lab_dir: Path) -> list[str]:
    """Resume paused brokers and unlock directories a fault left behind; returns what was undone."""
    data = _read(lab_dir)
    done: list[str] = []
    for entry in data["paused"]:
        if is_ours(entry["pid"], entry["marker"]):
            with contextlib.suppress(ProcessLookupError):
                os.kill(entry["pid"], signal.SIGCONT)
            done.append(f"resumed pid {entry['pid']}")
    for entry in data["locked"]:
        _unlock(Path(entry["path"]), entry["immutable"])
        done.append(f"unlocked {entry['path']}")
    _write(lab_dir, {"paused": [], "locked": []})
    return done
