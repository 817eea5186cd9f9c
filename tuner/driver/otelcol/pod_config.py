"""The lab's side of one collector pod's config; the profile's own settings come from the kind's
rendered fragment (`otelcol.yaml`, tuner/spec/clients/otelcol.py), the file a user receives.

A pod runs `--config base.yaml --config otelcol.yaml`: the collector merges the files in that order,
map by map (checked with the real build), so the fragment's exporter and receiver options land on
the base's components. The base is what a deployment already has: the filelog receiver on the pod's
file, the kafka exporter to the brokers and topic of the environment (`KAFKA_HOSTS`, every broker
comma-separated, and `KAFKA_TOPIC`), the connection's security settings, one logs pipeline, and the
pod's telemetry on a loopback port of its own (its readiness and counters), its log in the pod's
directory. Nothing of the profile is written here, so the fragment's settings are the run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

LOG_NAME = "collector.log"
BASE_NAME = "base.yaml"


def base_config(
    *, log_file: Path, metrics_port: int, workdir: Path, client: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The pod's base config; `client` adds the exporter's connection settings (e.g. auth, tls)."""
    # The collector reads a comma-separated variable into the brokers list itself.
    exporter = {"brokers": "${env:KAFKA_HOSTS}", "logs": {"topic": "${env:KAFKA_TOPIC}"}, **(client or {})}
    # The file exists (empty) before the pod starts: read it from its first line.
    receiver = {"include": [str(log_file)], "start_at": "beginning"}
    log = str(workdir / LOG_NAME)
    return {
        "receivers": {"file_log": receiver},
        "exporters": {"kafka": exporter},
        "service": {
            "pipelines": {"logs": {"receivers": ["file_log"], "exporters": ["kafka"]}},
            "telemetry": {
                "logs": {"level": "warn", "output_paths": [log], "error_output_paths": [log]},
                "metrics": {
                    "level": "basic",
                    "readers": [
                        {"pull": {"exporter": {"prometheus": {"host": "127.0.0.1", "port": metrics_port}}}}
                    ],
                },
            },
        },
    }
