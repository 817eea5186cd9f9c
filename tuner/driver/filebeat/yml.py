"""filebeat.yml for one real-Filebeat pod: its input, and output.kafka / queue.mem from the profile.

Only what the profile sets is written: everything else stays at the running Filebeat's own defaults
(7.17: queue 4096 / 2048 / 1s), so "shipped defaults" means Filebeat's, not kbt's model of them.
Two exceptions: `output.kafka.version` is always written (7.17 defaults to 1.0.0, which Kafka 4.x
brokers refuse), and the hosts and topic are the run's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tuner.spec.filebeat import FilebeatConfig

# The record value is the event as JSON; Filebeat adds @timestamp, @metadata, log.offset,
# log.file.path, input, ecs, host and agent: this many bytes besides the message and the path.
EVENT_OVERHEAD_BYTES = 440


def input_section(config: FilebeatConfig, pod: int, log_file: Path) -> dict[str, Any]:
    inp = config.input
    section: dict[str, Any] = {"type": inp.type, "paths": [str(log_file)]}
    if inp.type == "filestream":
        section["id"] = f"kbt-pod-{pod}"  # 7.17 warns without one; the registry keys on it
    section.update(inp.input_options())
    return section


def pod_config(
    config: FilebeatConfig,
    *,
    pod: int,
    log_file: Path,
    hosts: list[str],
    topic: str,
    http_port: int,
    workdir: Path,
    output_security: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`output_security`: the connection's output.kafka keys (username, `${NAME}` password,
    sasl.mechanism, ssl.*; tuner/target/engine_security.py), written as given."""
    # JSON mode writes durations as Filebeat spells them ("500ms").
    kafka = config.kafka.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    kafka.update(hosts=hosts, topic=topic, version=config.kafka.version)
    kafka.update(output_security or {})
    queue = config.mem.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    out: dict[str, Any] = {
        "filebeat.inputs": [input_section(config, pod, log_file)],
        "output.kafka": kafka,
        "http": {"enabled": True, "host": "127.0.0.1", "port": http_port},
        "path": {"home": str(workdir), "data": str(workdir / "data"), "logs": str(workdir / "logs")},
        "logging": {"level": "warning", "to_stderr": False, "to_files": True, "metrics": {"enabled": False}},
        "monitoring.enabled": False,
    }
    if queue:
        out["queue.mem"] = queue
    return out
