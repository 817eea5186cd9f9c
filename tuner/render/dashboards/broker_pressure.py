"""Broker pressure: the Qunar view. Are the network threads the bottleneck, and is it the request count?

Read top to bottom: idle ratios and queues (is a broker saturated?), requests by broker, type and
topic with bytes per request (is it many small requests?), request time by phase (where do they
wait?), then flushes, CPU and bytes (the things Qunar found were *not* the cause).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from tuner.render.dashboards.common import (
    BROKER_VAR,
    CLUSTER_VAR,
    HANDLER_IDLE_BANDS,
    NETWORK_IDLE_BANDS,
    REQUEST_QUEUE_BANDS,
    TOPIC_SCOPE,
    TOPIC_VAR,
    Panel,
    Target,
    above_is_bad,
    below_is_bad,
    idle_series,
    new_dashboard,
    series,
    single_stat,
)
from tuner.spec.thresholds import THRESHOLDS as lim

UID = "kbt-broker-pressure"
TITLE = "kbt / Broker pressure"
TEXT = "Network and request-handler threads, queues, request counts and sizes, request time by phase."
VARIABLES = [CLUSTER_VAR, BROKER_VAR, TOPIC_VAR]

_TINY = below_is_bad(lim.tiny_produce_request_bytes)
_PRODUCE_SLO = above_is_bad(lim.produce_p999_slo_ms / 2, lim.produce_p999_slo_ms)


def dashboard() -> db.Dashboard:
    rows: dict[str, list[Panel]] = {
        "Overview": [
            single_stat(
                "Network thread idle",
                Target("NETWORK_IDLE"),
                "Per broker, now. Red below 0.3: the network threads are the bottleneck.",
                thresholds=NETWORK_IDLE_BANDS,
            ),
            single_stat("Produce requests/s", Target("PRODUCE_REQUESTS_RATE"), "Per broker, now."),
            single_stat(
                "Bytes per produce request",
                Target("BYTES_PER_PRODUCE_REQUEST"),
                f"Per broker, now. Red below {lim.tiny_produce_request_bytes} B: producers barely batch.",
                thresholds=_TINY,
            ),
            single_stat(
                "Produce p99.9",
                Target("PRODUCE_TOTAL_P999_MS"),
                f"Per broker, now. Red above the {lim.produce_p999_slo_ms:g} ms objective.",
                thresholds=_PRODUCE_SLO,
            ),
        ],
        "Threads and queues": [
            idle_series(
                "Network thread idle (NetworkProcessorAvgIdlePercent)",
                [Target("NETWORK_IDLE"), Target("NETWORK_IDLE_MIN_THREAD", "{{broker}} busiest thread")],
                NETWORK_IDLE_BANDS,
                f"Below {lim.network_idle_critical} (red line) the network threads are the bottleneck; below "
                f"{lim.network_idle_warning} (orange) they are busy. Many small produce requests drive it"
                " down.",
            ),
            idle_series(
                "Request handler idle (RequestHandlerAvgIdlePercent)",
                [Target("REQUEST_HANDLER_IDLE")],
                HANDLER_IDLE_BANDS,
                "From the idle-time counter over the panel's rate window (not the Meter's lifetime"
                " MeanRate).",
            ),
            series(
                "Request and response queues",
                [
                    Target("REQUEST_QUEUE_SIZE", "{{broker}} request queue"),
                    Target("RESPONSE_QUEUE_SIZE", "{{broker}} response queue"),
                ],
                f"RequestQueueSize at queued.max.requests ({lim.queued_max_requests}) stops the network"
                " threads reading sockets; a growing queue means the handlers cannot keep up.",
                unit="short",
                thresholds=REQUEST_QUEUE_BANDS,
            ),
            series(
                "Broker CPU",
                [Target("BROKER_CPU_CORES")],
                "Cores each broker JVM keeps busy. Qunar's brokers were not CPU-bound while the network "
                "threads were saturated.",
            ),
        ],
        "Requests and batching": [
            series(
                "Produce and fetch requests/s by broker",
                [
                    Target("PRODUCE_REQUESTS_RATE", "{{broker}} produce"),
                    Target("FETCH_REQUESTS_RATE", "{{broker}} fetch"),
                ],
                "The request count is what loads the network threads, not the bytes.",
            ),
            series(
                "Requests/s by type",
                [Target("REQUESTS_RATE_BY_TYPE", "{{request}}")],
                "Every API the brokers answer (selected brokers summed).",
            ),
            series(
                "Bytes per produce request",
                [
                    Target("BYTES_PER_PRODUCE_REQUEST", "{{broker}} mean"),
                    Target("PRODUCE_REQUEST_BYTES_P50", "{{broker}} median request"),
                ],
                f"Red below {lim.tiny_produce_request_bytes} B per request: batch more (linger, batch size, "
                "sticky partitioning) to cut the request count.",
                thresholds=_TINY,
                span=8,
            ),
            series(
                "Records per produce request",
                [Target("RECORDS_PER_PRODUCE_REQUEST")],
                "Qunar's Filebeat sent about one record per request before the fix.",
                span=8,
            ),
            series(
                "Partition appends/s by topic",
                [Target("PRODUCE_REQUESTS_RATE_BY_TOPIC", "{{topic}}", TOPIC_SCOPE)],
                "Which topics' producers send the requests (topic variable): counted once per partition"
                " batch a request carries, not once per request.",
                span=8,
            ),
        ],
        "Request time p99.9 (TotalTimeMs and its phases)": [
            series(
                "Produce total time p99.9",
                [Target("PRODUCE_TOTAL_P999_MS")],
                f"Red line: the {lim.produce_p999_slo_ms:g} ms objective (alert KafkaProduceP999AboveSLO).",
                thresholds=_PRODUCE_SLO,
            ),
            series(
                "Fetch total time p99.9",
                [
                    Target("FETCH_CONSUMER_TOTAL_P999_MS", "{{broker}} FetchConsumer"),
                    Target("FETCH_FOLLOWER_TOTAL_P999_MS", "{{broker}} FetchFollower"),
                ],
                "An idle fetch waits up to fetch.max.wait.ms (500 ms) in purgatory: a flat line there is"
                " normal.",
            ),
            *(
                series(
                    f"{request} time p99.9 by phase",
                    [Target(name, "{{phase}}")],
                    "request_queue high: handlers busy; response_queue high: network threads busy; remote: "
                    "waiting for replicas (produce) or for data (fetch). Worst selected broker per phase.",
                    span=8,
                )
                for name, request in (
                    ("PRODUCE_PHASES_P999_MS", "Produce"),
                    ("FETCH_CONSUMER_PHASES_P999_MS", "FetchConsumer"),
                    ("FETCH_FOLLOWER_PHASES_P999_MS", "FetchFollower"),
                )
            ),
        ],
        "Log flush and bytes": [
            series("Log flushes/s", [Target("LOG_FLUSH_RATE")], "Segment rolls and forced flushes.", span=6),
            series(
                "Log flush time p99",
                [Target("LOG_FLUSH_TIME_P99_MS")],
                f"Spikes above {lim.flush_spike_min_ms:g} ms (and {lim.flush_spike_factor:g}x the hourly"
                " mean) raise KafkaLogFlushTimeSpike.",
                thresholds=above_is_bad(lim.flush_spike_min_ms),
                span=6,
            ),
            series(
                "Bytes in / out",
                [Target("BYTES_IN_RATE", "{{broker}} in"), Target("BYTES_OUT_RATE", "{{broker}} out")],
                "Produced (after compression) and fetched by consumers.",
            ),
            series(
                "Bytes in by topic",
                [Target("BYTES_IN_RATE_BY_TOPIC", "{{topic}}", TOPIC_SCOPE)],
                "Produced bytes per topic (topic variable).",
                span=24,
            ),
        ],
    }
    return new_dashboard(UID, TITLE, TEXT, VARIABLES, rows, tags=["broker"])
