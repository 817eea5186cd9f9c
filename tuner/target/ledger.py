"""The topics kbt created on a target and has not deleted yet, in a ledger file per target.

A run writes its topics here before creating them and removes them once deleted. A run that
crashed (kill -9, a lost machine) leaves its entries behind: the next run against the same target
deletes them first, and only them, never another live run's topics (an entry whose process is
still running on this host is left alone). Topic names carry the run's stamp, so an entry names
exactly one run's topic.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, Unreachable
from tuner.core.inputs import read_json
from tuner.core.kafka_clients import metadata
from tuner.core.writes import atomic_write

LIST_TIMEOUT_S = 10.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TopicLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        try:
            data = read_json(self.path, "topic ledger")
        except BadInput:
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, entries: dict[str, dict[str, Any]]) -> None:
        atomic_write(self.path, json.dumps(entries, indent=1, sort_keys=True), "topic ledger")

    def add(self, names: Sequence[str]) -> None:
        entries = self._read()
        for name in names:
            entries[name] = {"pid": os.getpid(), "host": socket.gethostname()}
        self._write(entries)

    def remove(self, names: Sequence[str]) -> None:
        entries = self._read()
        for name in names:
            entries.pop(name, None)
        self._write(entries)

    def leftovers(self) -> list[str]:
        """Entries of runs that are gone (their process no longer runs on this host)."""
        host = socket.gethostname()
        return sorted(
            name
            for name, owner in self._read().items()
            if owner.get("host") != host or not _alive(int(owner.get("pid", 0)))
        )

    def clean(self, admin: Any, prefix: str, delete: Callable[[Any, list[str]], list[str]]) -> list[str]:
        """Delete the leftovers under `prefix` that still exist; returns the problems (a cluster
        whose metadata does not come is one: the entries are kept for the next run)."""
        stale = [n for n in self.leftovers() if n.startswith(prefix)]
        if not stale:
            return []
        try:
            existing = set(metadata(admin, LIST_TIMEOUT_S).topics)
        except Unreachable as exc:
            return [f"leftover topics not deleted: {exc.message}"]
        problems = delete(admin, [n for n in stale if n in existing])
        self.remove(stale)
        return problems
