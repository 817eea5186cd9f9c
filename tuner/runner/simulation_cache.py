"""Simulations kept on disk between runs of kbt (tuner.model.predict.keep_simulations).

An offline `kbt recommend` over the same records runs the same simulations every time (the
calibration's fits, then the search): ~20 s of CPU over the committed held-out records, nearly all
of it simulating. A simulation is a pure function of its inputs, so its result is kept under
KBT_CACHE (~/.cache/kbt)/simulations/<code>/, where <code> is a hash of the model's and the client
rules' source: a change to either starts an empty directory (and removes the older ones). A file
that cannot be read back exactly (torn, edited, another key) is a miss, never an error.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import shutil
from array import array
from pathlib import Path
from typing import Any

import tuner.model
import tuner.spec.clients
from tuner.core.errors import KbtError
from tuner.core.inputs import read_bytes
from tuner.core.paths import cache_dir
from tuner.core.writes import atomic_write
from tuner.model.predict import keep_simulations
from tuner.model.recommend import Request
from tuner.model.simulate import SimResult
from tuner.runner import recommend_inputs

# a result's file (the batch waits it keeps, 8 bytes each) stays well under this
_MAX_BYTES = 64 * 1024 * 1024


def code_version() -> str:
    """A hash of every source file the simulations depend on."""
    digest = hashlib.sha256()
    for package in (tuner.model, tuner.spec.clients):
        for path in sorted(Path(package.__file__ or "").parent.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class DiskSimulations:
    """tuner.model.predict.SimulationStore on disk, one JSON file per simulation."""

    def __init__(self, root: Path | None = None) -> None:
        base = root if root is not None else cache_dir() / "simulations"
        self.dir = base / code_version()
        self._pruned = False

    def _path(self, key: str) -> Path:
        return self.dir / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    def get(self, key: str) -> SimResult | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            data = json.loads(read_bytes(path, "kept simulation", max_bytes=_MAX_BYTES))
            if not isinstance(data, dict) or data.get("key") != key:
                return None
            fields = dict(data["result"])
            waits = array("d")
            waits.frombytes(base64.b64decode(fields["waits_s"], validate=True))
            fields["waits_s"] = list(waits)
            return SimResult(**fields)
        except (KbtError, OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, key: str, result: SimResult) -> None:
        self._prune()
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.init}
        # the batch waits as the doubles they are: exact, and a tenth of their JSON's size and time
        fields["waits_s"] = base64.b64encode(array("d", result.waits_s).tobytes()).decode()
        text = json.dumps({"key": key, "result": fields})
        with contextlib.suppress(KbtError, OSError):  # a cache that cannot be written is no cache
            atomic_write(self._path(key), text, "kept simulation")

    def _prune(self) -> None:
        """Directories of other code versions go when this one gets its first file."""
        if self._pruned:
            return
        self._pruned = True
        if self.dir.exists() or not self.dir.parent.is_dir():
            return
        for other in self.dir.parent.iterdir():
            if other.is_dir() and not other.is_symlink() and len(other.name) == 16:
                shutil.rmtree(other, ignore_errors=True)


def gather(**options: Any) -> Request:
    """kbt recommend's inputs (tuner.runner.recommend_inputs.gather), its search's simulations kept
    on disk."""
    keep_simulations(DiskSimulations())
    return recommend_inputs.gather(**options)
