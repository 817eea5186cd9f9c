"""The target registry: a target kind is one module and one line in `resolve_target`."""

from __future__ import annotations

from pathlib import Path

from tuner.target.base import ClusterFlags, Target, TargetSource


def resolve_target(lab_dir: Path | None = None, target_file: TargetSource | None = None) -> Target:
    """The target a command runs against: a target file (or the same target from Kafka-tool
    flags) when given, else the running lab."""
    if isinstance(target_file, ClusterFlags):
        from tuner.target.file import flags_target

        return flags_target(target_file)
    if target_file is not None:
        from tuner.target.file import file_target

        return file_target(target_file)
    from tuner.target.lab import lab_target

    return lab_target(lab_dir)
