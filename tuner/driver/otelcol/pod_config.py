"""The collector config of one pod: the filelog receiver on the pod's file, the kafka exporter to the
run's brokers and topic, with exactly what the profile sets and nothing else (so "shipped defaults"
means the collector's own). Its telemetry answers on a loopback port of its own (the pod's readiness
and counters) and its log goes to the pod's directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.spec.otelcol import OtelcolConfig

LOG_NAME = "collector.log"


def pod_config(
    config: OtelcolConfig,
    *,
    log_file: Path,
    brokers: list[str],
    topic: str,
    metrics_port: int,
    workdir: Path,
    client: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The pod's config; `client` adds the exporter's connection settings (e.g. auth, tls)."""
    settings = config.compact()
    kafka: dict[str, Any] = dict(settings.get("kafka", {}))
    logs = dict(kafka.pop("logs", {}))
    logs["topic"] = topic
    exporter = {"brokers": brokers, "logs": logs, **kafka, **(client or {})}
    # The file exists (empty) before the pod starts: read it from its first line.
    receiver = {"include": [str(log_file)], "start_at": "beginning", **settings.get("filelog", {})}
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
