"""Tiered storage (KIP-405): copies to the remote tier, its size, reads back, and the threads doing it."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from tuner.render.dashboards.common import (
    BROKER_VAR,
    CLUSTER_VAR,
    NETWORK_IDLE_BANDS,
    TOPIC_SCOPE,
    TOPIC_VAR,
    Target,
    above_is_bad,
    idle_series,
    new_dashboard,
    series,
)
from tuner.spec.thresholds import THRESHOLDS as lim

UID = "kbt-tiered-storage"
TITLE = "kbt / Tiered storage"
TEXT = "KIP-405 tiered storage: copies, lag, remote size, remote reads and the remote storage threads."
VARIABLES = [CLUSTER_VAR, BROKER_VAR, TOPIC_VAR]


def _topic(name: str) -> Target:
    return Target(name, "{{topic}}", TOPIC_SCOPE)


def dashboard() -> db.Dashboard:
    rows = {
        "Copy to the remote tier": [
            series("Remote copy bytes/s", [Target("REMOTE_COPY_BYTES_RATE")], span=8),
            series(
                "Remote copy requests/s",
                [Target("REMOTE_COPY_REQUESTS_RATE")],
                "One request per rolled segment copied.",
                span=8,
            ),
            series(
                "Remote copy lag",
                [Target("REMOTE_COPY_LAG_BYTES")],
                "Rolled segments not copied yet. A sawtooth is normal; a rising floor means the copier"
                " falls behind (alert KafkaRemoteCopyLagGrowing above"
                f" {lim.remote_copy_lag_floor_bytes >> 20} MiB).",
                thresholds=above_is_bad(lim.remote_copy_lag_floor_bytes),
                span=8,
            ),
            series("Remote copy lag by topic", [_topic("REMOTE_COPY_LAG_BYTES_BY_TOPIC")]),
            series("Remote copy bytes/s by topic", [_topic("REMOTE_COPY_BYTES_RATE_BY_TOPIC")]),
        ],
        "Remote log size": [
            series("Remote log size", [Target("REMOTE_LOG_SIZE_BYTES")]),
            series("Remote log size by topic", [_topic("REMOTE_LOG_SIZE_BYTES_BY_TOPIC")]),
        ],
        "Reads from the remote tier": [
            series(
                "Remote fetch bytes/s",
                [Target("REMOTE_FETCH_BYTES_RATE")],
                "Consumers reading data older than local.retention: lagging readers.",
                span=8,
            ),
            series("Remote fetch requests/s", [Target("REMOTE_FETCH_REQUESTS_RATE")], span=8),
            series("Remote fetch bytes/s by topic", [_topic("REMOTE_FETCH_BYTES_RATE_BY_TOPIC")], span=8),
        ],
        "Remote storage threads and errors": [
            idle_series(
                "RemoteLogManager tasks idle",
                [Target("REMOTE_MANAGER_IDLE")],
                NETWORK_IDLE_BANDS,
                "The copier/expiration threads; low idle means copies queue behind each other.",
                span=8,
            ),
            idle_series(
                "Remote reader thread idle", [Target("REMOTE_READER_IDLE")], NETWORK_IDLE_BANDS, span=8
            ),
            series(
                "Remote reader queue",
                [Target("REMOTE_READER_QUEUE_SIZE")],
                "Remote reads waiting for a reader thread (remote.log.reader.max.pending.tasks bounds it).",
                span=8,
            ),
            series("Remote reads/s (reader threads)", [Target("REMOTE_READER_FETCH_RATE")], span=8),
            series("Remote read time p99", [Target("REMOTE_READER_FETCH_P99_MS")], span=8),
            series(
                "Remote copy and fetch errors/s",
                [
                    Target("REMOTE_COPY_ERRORS_RATE", "{{broker}} copy"),
                    Target("REMOTE_FETCH_ERRORS_RATE", "{{broker}} fetch"),
                ],
                "Should stay at 0.",
                thresholds=above_is_bad(0.001),
                span=8,
            ),
        ],
    }
    return new_dashboard(UID, TITLE, TEXT, VARIABLES, rows, tags=["tiered"])
