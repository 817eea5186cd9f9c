"""exporters/prometheus/kafka-broker.rules.yml: recording rules from the PromQL catalog, alerts on them.

Each recording rule is a named catalog query with a 1m rate window, grouped by (cluster, broker)
instead of (broker) so one Prometheus can watch several clusters. The alerts compare those
recordings with tuner/render/dashboards/limits.py, the numbers the dashboards draw as thresholds.
exporters/prometheus/kafka-broker.rules_test.yml holds the promtool unit tests (each alert firing
and not firing).
"""

from __future__ import annotations

import re
from typing import Any

from tuner.core.yaml_block import yaml_document
from tuner.measure.dialects import BROKER_LABELS, with_broker_label
from tuner.measure.promql import promql
from tuner.spec.thresholds import THRESHOLDS as lim

RULES_PATH = "exporters/prometheus/kafka-broker.rules.yml"
WINDOW = "1m"
RUNBOOK = "docs/dashboards.md#alerts"


def per_cluster_broker(name: str) -> str:
    """The catalog query with a concrete window, grouped by (cluster, broker). Where a series has
    no broker label (a Kubernetes scrape names pods: BROKER_LABELS), each aggregation first groups
    by the pod labels too and takes the broker from them, so pods are never averaged together."""
    expr = promql(name, WINDOW)
    if "by (broker)" not in expr:
        raise ValueError(f"{name} is not a per-broker query: {expr}")
    return _by_broker_or_pod(expr)


_AGGREGATION = re.compile(r"\b(sum|avg|max|min) by \(broker\)\(")


def _by_broker_or_pod(expr: str) -> str:
    """`AGG by (broker)(X)` -> `AGG by (cluster, broker)(broker-labelled AGG by (cluster, <labels>)(X))`."""
    out, pos = [], 0
    for m in _AGGREGATION.finditer(expr):
        if m.start() < pos:
            continue
        depth, end = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(expr[end], 0)
            end += 1
        inner = expr[m.end() : end - 1]
        agg = m.group(1)
        grouped = f"{agg} by (cluster, {', '.join(BROKER_LABELS)})({inner})"
        out.append(expr[pos : m.start()] + f"{agg} by (cluster, broker)({with_broker_label(grouped)})")
        pos = end
    return "".join(out) + expr[pos:]


NET_IDLE = "cluster_broker:kafka_network_processor_avg_idle_ratio:avg"
HANDLER_IDLE = "cluster_broker:kafka_server_request_handler_idle_ratio:avg1m"
REQUEST_QUEUE = "cluster_broker:kafka_network_request_queue_size:max"
PRODUCE_RATE = "cluster_broker:kafka_network_produce_requests:rate1m"
BYTES_IN = "cluster_broker:kafka_server_bytes_in:rate1m"
BYTES_PER_REQUEST = "cluster_broker:kafka_produce_request_bytes:avg1m"
PRODUCE_P999 = "cluster_broker:kafka_produce_total_time_ms:p999"
FLUSH_P99 = "cluster_broker:kafka_log_flush_time_ms:p99"
COPY_LAG = "cluster_broker:kafka_server_remote_copy_lag_bytes:max"

RECORDINGS = {  # recording rule: catalog name
    NET_IDLE: "NETWORK_IDLE",
    HANDLER_IDLE: "REQUEST_HANDLER_IDLE",
    REQUEST_QUEUE: "REQUEST_QUEUE_SIZE",
    PRODUCE_RATE: "PRODUCE_REQUESTS_RATE",
    BYTES_IN: "BYTES_IN_RATE",
    BYTES_PER_REQUEST: "BYTES_PER_PRODUCE_REQUEST",
    PRODUCE_P999: "PRODUCE_TOTAL_P999_MS",
    FLUSH_P99: "LOG_FLUSH_TIME_P99_MS",
    COPY_LAG: "REMOTE_COPY_LAG_BYTES",
}

_ON = "broker {{ $labels.broker }} ({{ $labels.cluster }})"


def _alert(name: str, expr: str, for_: str, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": description, "runbook": RUNBOOK},
    }


def alerts() -> list[dict[str, Any]]:
    queue_near = int(lim.queued_max_requests * lim.request_queue_near_fraction)
    return [
        _alert(
            "KafkaNetworkThreadsSaturated",
            f"{NET_IDLE} < {lim.network_idle_critical}",
            "5m",
            "critical",
            f"Network threads saturated on {_ON}",
            "Network threads are {{ $value | humanizePercentage }} idle (below "
            f"{lim.network_idle_critical:.0%}): they are the bottleneck. Check requests per second and "
            "bytes per produce request; batch more on the clients.",
        ),
        _alert(
            "KafkaNetworkThreadsBusy",
            f"{NET_IDLE} < {lim.network_idle_warning}",
            "5m",
            "warning",
            f"Network threads busy on {_ON}",
            "Network threads are {{ $value | humanizePercentage }} idle (below "
            f"{lim.network_idle_warning:.0%}).",
        ),
        _alert(
            "KafkaRequestQueueNearLimit",
            f"{REQUEST_QUEUE} >= {queue_near}",
            "2m",
            "warning",
            f"Request queue near queued.max.requests on {_ON}",
            "{{ $value }} requests wait for a handler thread; at "
            f"{lim.queued_max_requests} (queued.max.requests) the network threads stop reading.",
        ),
        _alert(
            "KafkaProduceP999AboveSLO",
            f"{PRODUCE_P999} > {lim.produce_p999_slo_ms:g}",
            "5m",
            "warning",
            f"Produce p99.9 above {lim.produce_p999_slo_ms:g} ms on {_ON}",
            "Produce TotalTimeMs p99.9 is {{ $value }} ms; see the phase breakdown on the Broker "
            "pressure dashboard.",
        ),
        _alert(
            "KafkaTinyProduceRequests",
            f"{BYTES_PER_REQUEST} < {lim.tiny_produce_request_bytes} "
            f"and on (cluster, broker) {PRODUCE_RATE} > {lim.busy_produce_requests_per_s:g}",
            "10m",
            "warning",
            f"Tiny produce requests on {_ON}",
            "Produce requests carry {{ $value | humanize1024 }}B each at more than "
            f"{lim.busy_produce_requests_per_s:g} requests/s: producers barely batch (linger.ms, "
            "batch size, sticky partitioning; Filebeat bulk_flush_frequency).",
        ),
        _alert(
            "KafkaRemoteCopyLagGrowing",
            f"deriv({COPY_LAG}[15m]) > 0 and on (cluster, broker) {COPY_LAG} > "
            f"{lim.remote_copy_lag_floor_bytes}",
            "15m",
            "warning",
            f"Remote copy lag growing on {_ON}",
            "Segments wait longer and longer for the copy to the remote tier (growing by "
            "{{ $value | humanize1024 }}B/s): the remote tier or the copier threads fall behind.",
        ),
        _alert(
            "KafkaLogFlushTimeSpike",
            f"{FLUSH_P99} > {lim.flush_spike_min_ms:g} "
            f"and {FLUSH_P99} > {lim.flush_spike_factor:g} * avg_over_time({FLUSH_P99}[1h])",
            "2m",
            "warning",
            f"Log flush time spike on {_ON}",
            "Log flush p99 is {{ $value }} ms, over "
            f"{lim.flush_spike_factor:g}x its hourly mean: the disk is slow or shared.",
        ),
    ]


def rules_yaml() -> str:
    recordings = [{"record": r, "expr": per_cluster_broker(q)} for r, q in RECORDINGS.items()]
    groups = [
        {"name": "kbt-kafka-broker.recording", "rules": recordings},
        {"name": "kbt-kafka-broker.alerts", "rules": alerts()},
    ]
    header = [
        "Code generated by `make generate` from tuner/render/dashboards/alert_rules.py. DO NOT EDIT.",
        "Thresholds: tuner/render/dashboards/limits.py. Tests: kafka-broker.rules_test.yml (promtool).",
    ]
    return yaml_document({"groups": groups}, header)
