"""Target kind `file`: any Kafka cluster named by a target file (see docs/targets.md)."""

from __future__ import annotations

from pathlib import Path

from tuner.core.errors import BadInput
from tuner.target.base import Target


def file_target(path: Path) -> Target:
    raise BadInput(f"{path}: target files are not supported by this kbt yet")
