"""The target registry: a target kind is one module and one line in `resolve_target`."""

from __future__ import annotations

from pathlib import Path

from tuner.target.base import Target


def resolve_target(lab_dir: Path | None = None, target_file: Path | None = None) -> Target:
    """The target a command runs against: a target file when given, else the running lab."""
    if target_file is not None:
        from tuner.target.file import file_target

        return file_target(target_file)
    from tuner.target.lab import lab_target

    return lab_target(lab_dir)
