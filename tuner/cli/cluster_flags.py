"""Kafka-tool flags beside `--target`: `--bootstrap-server`, `--command-config FILE` (Kafka's client
properties) and `--prometheus URL` build the same target a target file holding those three would
(tuner/target/file.py), on every command that takes `--target`. The flags are declared in
tuner/cli/options.py; this is their one check."""

from __future__ import annotations

from pathlib import Path

from tuner.core.errors import BadInput
from tuner.target.base import ClusterFlags, TargetSource
from tuner.target.registry import resolve_target


def target_source(
    target_file: Path | None,
    bootstrap: str | None,
    command_config: Path | None,
    prometheus: str | None,
    *,
    lab_dir: Path | None = None,
    prometheus_alone: bool = False,
) -> TargetSource | None:
    """The target file, or the flags as a target (checked now: one line for anything wrong), or
    None (the lab; or, with `prometheus_alone`, a bare Prometheus the command reads itself)."""
    if target_file is not None:
        given = [f for f, v in (("--bootstrap-server", bootstrap), ("--command-config", command_config)) if v]
        if prometheus is not None and not prometheus_alone:
            given.append("--prometheus")
        if given:
            raise BadInput(f"--target names the cluster already: give --target or {given[0]}, not both")
        return target_file
    if bootstrap is None:
        if command_config is not None:
            raise BadInput("--command-config needs --bootstrap-server (the cluster it logs in to)")
        if prometheus is not None and not prometheus_alone:
            raise BadInput("--prometheus needs --bootstrap-server (the cluster it scrapes)")
        return None
    if lab_dir is not None:
        raise BadInput("--lab-dir names kbt's lab: give --lab-dir or --bootstrap-server, not both")
    flags = ClusterFlags(bootstrap.strip(" \t"), command_config, prometheus)  # a line break is refused
    resolve_target(None, flags)  # a bad server list, properties file or URL: one line, before any work
    return flags
