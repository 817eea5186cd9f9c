"""What a real-Filebeat pod runs besides the profile's own file: the lab's side of the config and
the environment a deployment sets.

A pod starts Filebeat with two config files, `-c filebeat.yml -c kbt-pod.yml`, merged by Filebeat
in that order (checked with the real 7.17 build: nested sections merge key by key):

- `filebeat.yml` is the kind's rendered artifact (tuner/spec/clients/filebeat.py), byte for byte
  the file a user receives, with its `${KAFKA_HOSTS}` and `${KAFKA_TOPIC}` references;
- `kbt-pod.yml` is the lab's own part, what a deployment writes beside the profile: the input on
  the pod's log file (with the profile's input options), the loopback monitoring endpoint, paths,
  logging, and for a secure target the connection's output.kafka keys (username, a `${NAME}`
  password, sasl.mechanism, ssl.*) as a user would add them.

The environment gives KAFKA_HOSTS (every bootstrap server, comma-separated) and KAFKA_TOPIC, as a
DaemonSet's would (tuner/driver/tailed/pods.py, deployment_env). Nothing else of the output is
set, so the file's settings are the run's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tuner.spec.filebeat import FilebeatConfig

# The record value is the event as JSON; Filebeat adds @timestamp, @metadata, log.offset,
# log.file.path, input, ecs, host and agent: this many bytes besides the message and the path.
EVENT_OVERHEAD_BYTES = 440
SIDE_FILE = "kbt-pod.yml"


def pod_side(
    config: FilebeatConfig,
    *,
    pod: int,
    log_file: Path,
    http_port: int,
    workdir: Path,
    output_security: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The lab's config file beside the artifact. `output_security`: the connection's output.kafka
    keys (tuner/target/engine_security.py), written as given."""
    inp = config.input
    section: dict[str, Any] = {"type": inp.type, "paths": [str(log_file)]}  # the pod's input
    if inp.type == "filestream":
        section["id"] = f"kbt-pod-{pod}"  # 7.17 warns without one; the registry keys on it
    section.update(inp.input_options())
    out: dict[str, Any] = {
        "filebeat.inputs": [section],
        "http": {"enabled": True, "host": "127.0.0.1", "port": http_port},
        "path": {"home": str(workdir), "data": str(workdir / "data"), "logs": str(workdir / "logs")},
        "logging": {"level": "warning", "to_stderr": False, "to_files": True, "metrics": {"enabled": False}},
        "monitoring.enabled": False,
    }
    if output_security:
        out["output.kafka"] = dict(output_security)
    return out
