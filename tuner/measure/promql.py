"""Named PromQL over the broker series, shared by measurement and the dashboards.

Expressions use Grafana's `$__rate_interval` for their rate window; `promql(name, window)` swaps in
a concrete window for the measurement code, which queries Prometheus directly.
Broker-wide BrokerTopicMetrics series are selected with topic="" (the per-topic ones carry topic).
"""

from __future__ import annotations

import re

from tuner.core.errors import BadInput, did_you_mean
from tuner.measure.promql_query import RATE_INTERVAL, Query
from tuner.measure.promql_views import BREAKDOWN_QUERIES, CLIENT_QUERIES
from tuner.measure.series_names import (
    CLIENT_BYTE_RATE_SERIES,
    CLIENT_REQUEST_TIME_SERIES,
    NETWORK_IDLE_SERIES,
    NETWORK_THREAD_IDLE_SERIES,
    REQUESTS_SERIES,
)

_SELECTOR = re.compile(r"\b((?:kafka|kbt|process)_[a-z0-9_]+)(?:\{([^}]*)\})?")


def label_string(value: str) -> str:
    """`value` as a PromQL double-quoted string literal: backslash, quote and control characters
    escaped (Go's escapes, which PromQL reads), so a matcher value or job name from a target file
    (`a"} or vector(1) or up{x="`) stays one value and cannot change the query."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group(0)):04x}", escaped)
    return f'"{escaped}"'


def label_matchers(labels: dict[str, str]) -> str:
    """`k="v",...` for equality matchers, every value escaped (the one builder of matcher text)."""
    return ",".join(f"{k}={label_string(v)}" for k, v in labels.items())


def _rate(selector: str) -> str:
    return f"sum by (broker)(rate({selector}[{RATE_INTERVAL}]))"


_PRODUCE_REQS = _rate(REQUESTS_SERIES + '{request="Produce"}')
_BYTES_IN = _rate('kafka_server_bytes_in_total{topic=""}')
_MESSAGES_IN = _rate('kafka_server_messages_in_total{topic=""}')


def _time(request: str, phase: str, quantile: str) -> str:
    sel = f'kafka_network_request_time_ms{{request="{request}",phase="{phase}",quantile="{quantile}"}}'
    return f"max by (broker)({sel})"


QUERIES: tuple[Query, ...] = (
    Query(
        "NETWORK_IDLE",
        f"avg by (broker)({NETWORK_IDLE_SERIES})",
        "ratio",
        "Network thread idle fraction per broker (bottleneck below 0.3).",
    ),
    Query(
        "NETWORK_IDLE_MIN_THREAD",
        f"min by (broker)({NETWORK_THREAD_IDLE_SERIES})",
        "ratio",
        "Idle fraction of the busiest network thread per broker.",
    ),
    # Summed, not averaged: a broker has one handler meter, and a pod rescheduled within the window
    # (a new `instance`) leaves two series each covering part of it; their mean read half the idle.
    Query(
        "REQUEST_HANDLER_IDLE",
        "clamp_max(sum by (broker)(rate(kafka_server_request_handler_idle_ns_total"
        f"[{RATE_INTERVAL}])) / 1e9, 1)",
        "ratio",
        "Request handler idle fraction per broker over the window (capped at 1, see the series).",
    ),
    Query(
        "REQUEST_QUEUE_SIZE",
        "max by (broker)(kafka_network_request_queue_size)",
        "requests",
        "Requests waiting for a handler thread.",
    ),
    Query(
        "RESPONSE_QUEUE_SIZE",
        "max by (broker)(kafka_network_response_queue_size)",
        "responses",
        "Responses waiting for a network thread.",
    ),
    Query("PRODUCE_REQUESTS_RATE", _PRODUCE_REQS, "req/s", "Produce requests per second per broker."),
    Query(
        "PARTITION_APPENDS_RATE",
        _rate('kafka_server_produce_requests_total{topic=""}'),
        "appends/s",
        "Partition batches appended per second per broker (TotalProduceRequests: once per partition a"
        " produce request carries; equal to the request rate only for one-partition requests).",
    ),
    Query(
        "FETCH_REQUESTS_RATE",
        _rate('kafka_network_requests_total{request="Fetch"}'),
        "req/s",
        "Fetch requests (consumers and followers) per second per broker.",
    ),
    Query(
        "ALL_REQUESTS_RATE",
        _rate(REQUESTS_SERIES),
        "req/s",
        "Requests of every API per second per broker.",
    ),
    Query(
        "CLIENT_REQUEST_THREADS",
        f"sum by (broker, user, client_id)({CLIENT_REQUEST_TIME_SERIES}) / 100",
        "threads",
        "Network + handler thread time each client's requests use per broker, in threads (Kafka's "
        "request-time quota sensor; present once a client quota is set).",
    ),
    Query(
        "CLIENT_PRODUCE_BYTES_RATE",
        f'sum by (broker, user, client_id)({CLIENT_BYTE_RATE_SERIES}{{quota="Produce"}})',
        "B/s",
        "Produce request bytes per second of each client per broker (Kafka's produce byte-rate quota"
        " sensor; present once a client quota is set).",
    ),
    Query("BYTES_IN_RATE", _BYTES_IN, "B/s", "Bytes produced per second per broker."),
    Query(
        "BYTES_OUT_RATE",
        _rate('kafka_server_bytes_out_total{topic=""}'),
        "B/s",
        "Bytes fetched by consumers per second per broker.",
    ),
    Query("MESSAGES_IN_RATE", _MESSAGES_IN, "records/s", "Records produced per second per broker."),
    Query(
        "BYTES_PER_PRODUCE_REQUEST",
        f"{_BYTES_IN} / {_PRODUCE_REQS}",
        "B",
        "Average produce request payload per broker: the batching a broker sees.",
    ),
    Query(
        "RECORDS_PER_PRODUCE_REQUEST",
        f"{_MESSAGES_IN} / {_PRODUCE_REQS}",
        "records",
        "Average records per produce request per broker.",
    ),
    Query("PRODUCE_TOTAL_P99_MS", _time("Produce", "total", "0.99"), "ms", "Produce request time p99."),
    Query("PRODUCE_TOTAL_P999_MS", _time("Produce", "total", "0.999"), "ms", "Produce request time p99.9."),
    Query(
        "PRODUCE_REQUEST_QUEUE_P99_MS",
        _time("Produce", "request_queue", "0.99"),
        "ms",
        "Time produce requests waited for a handler thread, p99.",
    ),
    Query(
        "PRODUCE_LOCAL_P99_MS",
        _time("Produce", "local", "0.99"),
        "ms",
        "Time a handler spent on a produce request (log append), p99.",
    ),
    Query(
        "PRODUCE_REMOTE_P99_MS",
        _time("Produce", "remote", "0.99"),
        "ms",
        "Time produce requests waited for replicas (acks=all), p99.",
    ),
    Query(
        "PRODUCE_RESPONSE_QUEUE_P99_MS",
        _time("Produce", "response_queue", "0.99"),
        "ms",
        "Time produce responses waited for a network thread, p99.",
    ),
    Query(
        "FETCH_CONSUMER_TOTAL_P99_MS",
        _time("FetchConsumer", "total", "0.99"),
        "ms",
        "Consumer fetch time p99.",
    ),
    Query(
        "PRODUCE_REQUEST_BYTES_P50",
        'max by (broker)(kafka_network_request_bytes{request="Produce",quantile="0.5"})',
        "B",
        "Median produce request size.",
    ),
    Query("LOG_FLUSH_RATE", _rate("kafka_log_flush_total"), "flush/s", "Log flushes per second."),
    Query(
        "LOG_FLUSH_TIME_P99_MS",
        'max by (broker)(kafka_log_flush_time_ms{quantile="0.99"})',
        "ms",
        "Log flush time p99.",
    ),
    Query(
        "BROKER_CPU_CORES",
        _rate('process_cpu_seconds_total{job="kafka-broker"}'),
        "cores",
        "CPU cores used by each broker JVM.",
    ),
    Query(
        "REMOTE_COPY_BYTES_RATE",
        _rate('kafka_server_remote_copy_bytes_total{topic=""}'),
        "B/s",
        "Bytes copied to the remote tier per second.",
    ),
    Query(
        "REMOTE_FETCH_REQUESTS_RATE",
        _rate('kafka_server_remote_fetch_requests_total{topic=""}'),
        "req/s",
        "Fetches served from the remote tier per second.",
    ),
    Query(
        "REMOTE_COPY_LAG_BYTES",
        'max by (broker)(kafka_server_remote_copy_lag_bytes{topic=""})',
        "B",
        "Bytes waiting to be copied to the remote tier.",
    ),
    Query(
        "FETCH_CONSUMER_TOTAL_P999_MS",
        _time("FetchConsumer", "total", "0.999"),
        "ms",
        "Consumer fetch time p99.9 (includes fetch.max.wait.ms when there is nothing new).",
    ),
    Query(
        "FETCH_FOLLOWER_TOTAL_P999_MS",
        _time("FetchFollower", "total", "0.999"),
        "ms",
        "Replica (follower) fetch time p99.9 (includes replica.fetch.wait.max.ms when idle).",
    ),
    Query(
        "REMOTE_COPY_REQUESTS_RATE",
        _rate('kafka_server_remote_copy_requests_total{topic=""}'),
        "req/s",
        "Segments copied to the remote tier per second.",
    ),
    Query(
        "REMOTE_FETCH_BYTES_RATE",
        _rate('kafka_server_remote_fetch_bytes_total{topic=""}'),
        "B/s",
        "Bytes read from the remote tier per second.",
    ),
    Query(
        "REMOTE_COPY_ERRORS_RATE",
        _rate('kafka_server_remote_copy_errors_total{topic=""}'),
        "err/s",
        "Failed segment copies per second.",
    ),
    Query(
        "REMOTE_FETCH_ERRORS_RATE",
        _rate('kafka_server_remote_fetch_errors_total{topic=""}'),
        "err/s",
        "Failed remote reads per second.",
    ),
    Query(
        "REMOTE_LOG_SIZE_BYTES",
        'max by (broker)(kafka_server_remote_log_size_bytes{topic=""})',
        "B",
        "Bytes in the remote tier for the partitions each broker leads.",
    ),
    Query(
        "REMOTE_MANAGER_IDLE",
        "avg by (broker)(kafka_log_remote_manager_tasks_avg_idle_ratio)",
        "ratio",
        "Idle fraction of the threads copying segments to the remote tier.",
    ),
    Query(
        "REMOTE_READER_QUEUE_SIZE",
        "max by (broker)(kafka_storage_remote_thread_pool_reader_task_queue_size)",
        "requests",
        "Remote reads waiting for a remote log reader thread.",
    ),
    Query(
        "REMOTE_READER_IDLE",
        "avg by (broker)(kafka_storage_remote_thread_pool_reader_avg_idle_ratio)",
        "ratio",
        "Idle fraction of the remote log reader threads.",
    ),
    Query(
        "REMOTE_READER_FETCH_RATE",
        _rate("kafka_log_remote_reader_fetch_total"),
        "req/s",
        "Reads from the remote tier by the reader threads per second.",
    ),
    Query(
        "REMOTE_READER_FETCH_P99_MS",
        'max by (broker)(kafka_log_remote_reader_fetch_time_ms{quantile="0.99"})',
        "ms",
        "Remote read time p99.",
    ),
)


def query(name: str) -> Query:
    """A query of the whole catalog: QUERIES (one series per broker) or a view of promql_views."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise BadInput(f"unknown query {name!r}{did_you_mean(name, _BY_NAME)}") from None


def substitute(expr: str, window: str) -> str:
    """Replace Grafana's $__rate_interval with a concrete window such as '30s' or '1m'."""
    return expr.replace(RATE_INTERVAL, window)


def promql(name: str, window: str = "1m") -> str:
    """The named query with a concrete rate window, ready for the Prometheus HTTP API."""
    return substitute(query(name).expr, window)


def scoped(expr: str, matchers: str) -> str:
    """`expr` with `matchers` (e.g. 'cluster=~"$cluster",broker=~"$broker"') added to every series
    selector. Catalog series are named kafka_*, kbt_* or process_*; nothing else is touched."""
    if not matchers:
        return expr

    def add(m: re.Match[str]) -> str:
        inner = m.group(2)
        return f"{m.group(1)}{{{matchers},{inner}}}" if inner else f"{m.group(1)}{{{matchers}}}"

    return _SELECTOR.sub(add, expr)


def rate_window(scrape_interval_s: float) -> str:
    """A rate window that always holds several samples: 4 scrape intervals, at least 4 s."""
    return f"{max(4, round(4 * scrape_interval_s))}s"


# Breakdowns (by request, phase, topic) and the client/consumer series live in promql_views.
ALL_QUERIES = QUERIES + BREAKDOWN_QUERIES + CLIENT_QUERIES
_BY_NAME = {q.name: q for q in ALL_QUERIES}
