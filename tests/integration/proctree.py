"""Processes by PID for interruption tests: a process's live descendants, which of them still run."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    try:
        text = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def descendants(root: int) -> set[int]:
    """Every live process below `root` (engines may start their workers in a new session)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return alive(found)


def alive(pids: Iterable[int]) -> set[int]:
    """The PIDs that still run (zombies do not count)."""
    out = set()
    for pid in pids:
        fields = _stat(pid)
        if fields is not None and fields[0] not in ("Z", "X"):
            out.add(pid)
    return out


def state(pid: int) -> str:
    fields = _stat(pid)
    return fields[0] if fields else "-"


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    """Wait (bounded) for every PID to end; returns the ones still alive."""
    deadline = time.monotonic() + timeout_s
    left = alive(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = alive(left)
    return left
