"""Stress test: offered vs achieved load, the objectives, broker headroom and consumer lag.

The view to keep open during `kbt stress`: does the cluster keep up with the ramp and the spike,
do the producers and real-time consumers stay inside their objectives, and what do lagging
(replaying) consumers do to everyone else.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from tuner.render.dashboards.common import (
    BROKER_VAR,
    CLIENT_SCOPE,
    CLUSTER_VAR,
    HANDLER_IDLE_BANDS,
    NETWORK_IDLE_BANDS,
    REQUEST_QUEUE_BANDS,
    RUN_VAR,
    Target,
    idle_series,
    new_dashboard,
    objective_series,
    series,
)
from tuner.spec.thresholds import THRESHOLDS as lim

UID = "kbt-stress-test"
TITLE = "kbt / Stress test"
TEXT = "Offered vs achieved load, objectives, broker headroom and consumer lag during kbt stress."
VARIABLES = [CLUSTER_VAR, RUN_VAR, BROKER_VAR]
_GROUP = "{{run}} {{group}}"


def dashboard() -> db.Dashboard:
    rows = {
        "Load": [
            series(
                "Offered vs achieved records/s",
                [
                    Target("OFFERED_RECORDS_RATE", "{{run}} offered", CLIENT_SCOPE),
                    Target("ACKED_RECORDS_RATE", "{{run}} achieved (acked)", CLIENT_SCOPE),
                ],
                "The schedule's offer against what the brokers acked; a gap that grows is the cluster "
                "falling behind.",
            ),
            series(
                "Produce requests/s by broker",
                [Target("PRODUCE_REQUESTS_RATE")],
                "More producers at each step: the request count rises with them unless they batch.",
            ),
        ],
        "Objectives": [
            objective_series(
                "Delivery p99 (slowest producer)",
                [Target("DELIVERY_P99_MS_WORST", "{{run}}", CLIENT_SCOPE)],
                lim.delivery_p99_slo_ms,
                "delivery",
            ),
            objective_series(
                "Broker produce time p99.9",
                [Target("PRODUCE_TOTAL_P999_MS")],
                lim.produce_p999_slo_ms,
                "broker",
            ),
            objective_series(
                "Real-time consumers: end-to-end p99",
                [Target("CONSUMER_E2E_P99_MS", _GROUP, CLIENT_SCOPE)],
                lim.e2e_p99_slo_ms,
                "end-to-end",
            ),
        ],
        "Broker headroom": [
            idle_series(
                "Network thread idle",
                [Target("NETWORK_IDLE")],
                NETWORK_IDLE_BANDS,
                f"The stress gate: below {lim.network_idle_critical} the stage fails.",
                span=8,
            ),
            idle_series("Request handler idle", [Target("REQUEST_HANDLER_IDLE")], HANDLER_IDLE_BANDS, span=8),
            series(
                "Request queue",
                [Target("REQUEST_QUEUE_SIZE")],
                f"queued.max.requests is {lim.queued_max_requests}.",
                thresholds=REQUEST_QUEUE_BANDS,
                span=8,
            ),
        ],
        "Consumers": [
            series(
                "Real-time groups: lag",
                [Target("CONSUMER_LAG_REALTIME", _GROUP, CLIENT_SCOPE)],
                "Records behind the high watermark; should stay near 0 through the spike.",
                span=8,
            ),
            series(
                "Lagging groups: lag",
                [Target("CONSUMER_LAG_LAGGING", _GROUP, CLIENT_SCOPE)],
                "Replaying readers are behind on purpose; what matters is their effect on the rest.",
                span=8,
            ),
            series(
                "Lagging groups: age of data read",
                [Target("CONSUMER_DATA_AGE_S", _GROUP, CLIENT_SCOPE)],
                "Minutes-old data comes from the remote tier (or cold page cache).",
                span=8,
            ),
            series(
                "Records/s consumed by group",
                [Target("CONSUMER_RECORDS_RATE", "{{run}} {{group}} ({{mode}})", CLIENT_SCOPE)],
            ),
            series(
                "Remote fetch bytes/s",
                [Target("REMOTE_FETCH_BYTES_RATE")],
                "Lagging readers served from the remote tier.",
            ),
        ],
    }
    return new_dashboard(UID, TITLE, TEXT, VARIABLES, rows, tags=["stress"])
