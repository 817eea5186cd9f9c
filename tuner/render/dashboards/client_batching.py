"""Client batching: what each producer sends, from the drivers' own exporter (kbt_client_*).

Per producer: requests/s, records per request, bytes per batch, compression ratio, time queued
before a request, round trip and delivery p99; then the client and broker counts side by side,
delivery errors and quota throttling.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from tuner.render.dashboards.common import (
    BROKER_SCOPE,
    BROKER_VAR,
    CLIENT_SCOPE,
    CLUSTER_VAR,
    RUN_VAR,
    Target,
    above_is_bad,
    below_is_bad,
    new_dashboard,
    objective_series,
    series,
)
from tuner.spec.thresholds import THRESHOLDS as lim

UID = "kbt-client-batching"
TITLE = "kbt / Client batching"
TEXT = "Per-producer batching from the kbt client exporter (job kbt-client)."
VARIABLES = [CLUSTER_VAR, RUN_VAR, BROKER_VAR]
_PRODUCER = "{{run}} {{producer}}"


def _producer(name: str) -> Target:
    return Target(name, _PRODUCER, CLIENT_SCOPE)


def dashboard() -> db.Dashboard:
    rows = {
        "Requests and batches per producer": [
            series(
                "Produce requests/s per producer",
                [_producer("CLIENT_PRODUCE_REQUESTS_RATE")],
                "Fewer requests for the same records is the whole point of batching.",
            ),
            series("Records/s acked per producer", [_producer("CLIENT_RECORDS_RATE")]),
            series(
                "Records per request",
                [_producer("CLIENT_RECORDS_PER_REQUEST")],
                "librdkafka sends one partition per request, so this is also records per batch; a Java "
                "request carries a batch of every partition its broker leads.",
                span=8,
            ),
            series(
                "Bytes per batch",
                [_producer("CLIENT_BATCH_BYTES")],
                f"Red below {lim.tiny_produce_request_bytes} B: too small to keep the broker's request "
                "rate down.",
                thresholds=below_is_bad(lim.tiny_produce_request_bytes),
                span=8,
            ),
            series(
                "Compression ratio",
                [_producer("CLIENT_COMPRESSION_RATIO")],
                "Compression works per partition batch: bigger batches compress better (up to ~50 records of "
                "1 KB for snappy).",
                span=8,
            ),
        ],
        "Latency per producer": [
            series(
                "Queue time p99",
                [_producer("CLIENT_QUEUE_LATENCY_P99_MS")],
                "Time in the producer queue: linger.ms is spent here.",
                span=8,
            ),
            series("Request round trip p99", [_producer("CLIENT_RTT_P99_MS")], span=8),
            objective_series(
                "Delivery p99", [_producer("CLIENT_DELIVERY_P99_MS")], lim.delivery_p99_slo_ms, "delivery"
            ),
        ],
        "Client and broker views": [
            series(
                "Produce requests/s per broker: clients vs broker",
                [
                    Target(
                        "CLIENT_PRODUCE_REQUESTS_RATE_BY_BROKER",
                        "{{broker}} sent by kbt clients",
                        BROKER_SCOPE,
                    ),
                    Target("PRODUCE_REQUESTS_RATE", "{{broker}} received by the broker"),
                ],
                "The broker also counts requests from clients that are not kbt drivers; with only kbt load"
                " the lines agree within a few percent.",
            ),
            series(
                "Delivery errors/s",
                [_producer("CLIENT_DELIVERY_ERRORS_RATE")],
                "Should stay at 0; anything else is a failed delivery after retries.",
                thresholds=above_is_bad(0.001),
                span=6,
            ),
            series(
                "Produce throttle max",
                [_producer("CLIENT_PRODUCE_THROTTLE_MAX_MS")],
                "Broker quotas holding the producer back; 0 without quotas.",
                thresholds=above_is_bad(0.001),
                span=6,
            ),
        ],
    }
    return new_dashboard(UID, TITLE, TEXT, VARIABLES, rows, tags=["client"])
