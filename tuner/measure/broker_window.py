"""The broker side of one run: Prometheus range queries over the measured window.

Every query comes from the shared PromQL catalog (tuner.measure.catalog), so dashboards and records
read the same expressions.
"""

from __future__ import annotations

import itertools
import math
import re

from tuner.core.broker_figures import BrokerStats, BrokerWindow
from tuner.measure import catalog
from tuner.measure.prometheus import Prometheus
from tuner.measure.promql import promql
from tuner.measure.series_names import BROKER_JOB, REQUESTS_SERIES, TOPIC_PRODUCE_REQUESTS_SERIES

# ---- measuring ----------------------------------------------------------------------------------


# Each broker's figures over a window, as a diagnosis snapshot names them (tuner.store.snapshot
# BrokerSnapshot) -> (named query in tuner.measure.promql, how the window aggregates it).
# "rate": the query's own rate window becomes the whole measured window (evaluated at its end);
# "avg"/"min"/"max": <agg>_over_time of the query over the window (a subquery at scrape resolution).
BROKER_FIELDS: dict[str, tuple[str, str]] = {
    "produce_requests_per_s": ("PRODUCE_REQUESTS_RATE", "rate"),
    "partition_appends_per_s": ("PARTITION_APPENDS_RATE", "rate"),
    "bytes_in_per_s": ("BYTES_IN_RATE", "rate"),
    "messages_in_per_s": ("MESSAGES_IN_RATE", "rate"),
    "network_idle_ratio": ("NETWORK_IDLE", "avg"),
    "network_idle_ratio_min": ("NETWORK_IDLE", "min"),
    "busiest_network_thread_idle_ratio": ("NETWORK_IDLE_MIN_THREAD", "avg"),
    "request_handler_idle_ratio": ("REQUEST_HANDLER_IDLE", "rate"),
    "request_queue_size": ("REQUEST_QUEUE_SIZE", "avg"),
    "request_queue_size_max": ("REQUEST_QUEUE_SIZE", "max"),
    "response_queue_size_max": ("RESPONSE_QUEUE_SIZE", "max"),
    # Yammer histograms decay over ~5 minutes: the window's max is the closest bound we have.
    "produce_total_p999_ms": ("PRODUCE_TOTAL_P999_MS", "max"),
    "produce_request_queue_p99_ms": ("PRODUCE_REQUEST_QUEUE_P99_MS", "avg"),
    "produce_local_p99_ms": ("PRODUCE_LOCAL_P99_MS", "max"),
    "produce_response_queue_p99_ms": ("PRODUCE_RESPONSE_QUEUE_P99_MS", "max"),
    "produce_request_bytes_p50": ("PRODUCE_REQUEST_BYTES_P50", "avg"),
    "log_flush_per_s": ("LOG_FLUSH_RATE", "rate"),
    "log_flush_time_p99_ms": ("LOG_FLUSH_TIME_P99_MS", "max"),
    "fetch_requests_per_s": ("FETCH_REQUESTS_RATE", "rate"),
    "bytes_out_per_s": ("BYTES_OUT_RATE", "rate"),
    "fetch_consumer_p99_ms": ("FETCH_CONSUMER_TOTAL_P99_MS", "max"),
    "cpu_cores": ("BROKER_CPU_CORES", "rate"),
}
# A run record's BrokerStats: the figures it shares with the snapshot (its p99.9 under its own name).
_RECORD_NAMES = {"produce_total_p999_ms": "produce_total_time_p999_ms"}
WINDOW_FIELDS: dict[str, tuple[str, str]] = {
    _RECORD_NAMES.get(f, f): q
    for f, q in BROKER_FIELDS.items()
    if _RECORD_NAMES.get(f, f) in BrokerStats.model_fields
}

_NODE_ID = re.compile(r"[0-9]{1,9}", re.ASCII)


def topic_regex(topics: list[str]) -> str:
    """An RE2 alternation matching exactly these topic names, escaped for a PromQL string."""
    return "|".join(re.escape(t) for t in topics).replace("\\", "\\\\")


def duration(seconds: float) -> str:
    """A PromQL range of `seconds`, in whole milliseconds, at least 1 s."""
    return f"{max(int(seconds * 1000), 1000)}ms"


def window_queries(
    window_s: float, topics: list[str], step_s: float, queue_cap: int | None = None
) -> dict[str, str]:
    """BrokerStats field -> PromQL evaluated at the window's end, aggregating over the window. With
    the request queue's cap known, also the share of the window the queue sat at it."""
    out = {field: window_query(name, agg, window_s, step_s) for field, (name, agg) in WINDOW_FIELDS.items()}
    if queue_cap is not None:
        out["request_queue_at_cap_share"] = window_query(
            "REQUEST_QUEUE_SIZE", "avg", window_s, step_s, f" >= bool {queue_cap}"
        )
    out["topic_produce_requests_per_s"] = (
        f"sum by (broker)(rate({topic_selector(topics)}[{duration(window_s)}]))"
    )
    return out


def window_query(name: str, agg: str, window_s: float, step_s: float, compare: str = "") -> str:
    """The named catalog query aggregated over a window ending at the evaluation time: "rate" widens
    its rate window to the whole window; "avg"/"min"/"max" take <agg>_over_time of it (with
    `compare` appended, e.g. " >= bool 16": the share of time at a level), sampled every `step_s` (a
    subquery; its own rate window spans 4 steps)."""
    w = duration(window_s)
    if agg == "rate":
        return promql(name, w)
    # A window shorter than a few scrape steps (a 10 s run window on a target scraped every 15 s)
    # must still hold evaluation points: a [10s:15s] subquery often holds none, and the field is lost.
    sample = min(step_s, window_s / 4)
    step = duration(sample) if sample >= 1 else f"{max(int(sample * 1000), 100)}ms"
    return f"{agg}_over_time(({promql(name, duration(4 * step_s))}{compare})[{w}:{step}])"


def topic_selector(topics: list[str], series: str = TOPIC_PRODUCE_REQUESTS_SERIES) -> str:
    """A per-topic broker series of the run's own topics (fresh per run). By default
    TotalProduceRequestsPerSec{topic}, marked once per partition batch a request carries: for
    librdkafka (one partition per request) that is exactly the client's request count."""
    return f'{series}{{job="{BROKER_JOB}",topic=~"{topic_regex(topics)}"}}'


# The remote tier's per-topic counters a stress stage reads (tuner.runner.stress.records).
REMOTE_FETCH_REQUESTS = catalog.series("kafka_server_remote_fetch_requests_total").name
REMOTE_FETCH_BYTES = catalog.series("kafka_server_remote_fetch_bytes_total").name
REMOTE_COPY_BYTES = catalog.series("kafka_server_remote_copy_bytes_total").name


def topic_rate(prom: Prometheus, name: str, topics: list[str], start: float, end: float) -> float | None:
    """Per-second rate of a per-topic counter summed over the run's topics and brokers, taken over
    exactly [start, end] and evaluated at its end."""
    if end <= start:
        return None
    expr = f"sum(rate({topic_selector(topics, name)}[{duration(end - start)}]))"
    samples = prom.instant(expr, end)
    values = [s.value for s in samples if math.isfinite(s.value)]
    return sum(values) if values else None


def interpolate(points: list[tuple[float, float]], t: float) -> float:
    """A counter at time t, linear between the samples around it (flat after the last)."""
    if not points or t <= points[0][0]:
        return points[0][1] if points else 0.0
    for (t1, v1), (t2, v2) in itertools.pairwise(points):
        if t <= t2:
            return v1 + (v2 - v1) * (t - t1) / (t2 - t1) if t2 > t1 else v2
    return points[-1][1]


def without_resets(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """A counter's samples, in time order, with each reset added back as Prometheus' rate() reads it
    (a broker restarted: its count starts again from 0): from the first sample, only ever up."""
    out, offset, previous = [], 0.0, -math.inf
    for t, v in points:
        if v < previous:
            offset += previous
        out.append((t, v + offset))
        previous = v
    return out


def measure_window(
    prom: Prometheus,
    start: float,
    end: float,
    topics: list[str],
    step_s: float,
    now: float,
    run_started: float,
    queue_cap: int | None = None,
) -> BrokerWindow:
    """Every BrokerStats field over [start, end]. The run's topic counters come from their raw
    samples: interpolated at the window's start and end, and read at `now` (after the client's
    final drain and one more scrape) for the whole-run count and the start-to-drain count."""
    window = end - start
    per_field = window_queries(window, topics, step_s, queue_cap)
    by_broker: dict[str, dict[str, float]] = {}
    for field, expr in per_field.items():
        if field == "topic_produce_requests_per_s":
            continue
        for sample in prom.instant(expr, end):
            broker = sample.labels.get("broker")
            if broker is not None and math.isfinite(sample.value):
                by_broker.setdefault(broker, {})[field] = sample.value
    since_start = total = 0.0
    found = False
    for series in prom.samples(topic_selector(topics), run_started - 1, now):
        broker = series.labels.get("broker")
        if broker is None or not series.points:
            continue
        # Fresh topics: the counter was 0 when the run started producing.
        points = without_resets([(run_started, 0.0), *sorted(p for p in series.points if p[0] > run_started)])
        at_start, at_end, last = interpolate(points, start), interpolate(points, end), points[-1][1]
        fields = by_broker.setdefault(broker, {})
        fields["topic_produce_requests_per_s"] = fields.get("topic_produce_requests_per_s", 0.0) + (
            at_end - at_start
        ) / max(window, 1e-9)
        since_start += last - at_start
        total += last
        found = True
    requests_since_start = requests_total = 0.0
    requests_found = False
    for series in prom.samples(request_selector(), run_started - 30, now):
        if series.labels.get("broker") is None or not series.points:
            continue
        # A cluster-wide counter: what it gained since the run started (read just before it). A
        # series first seen during the run (a request version nobody used before) started at 0.
        points = without_resets(sorted(series.points))
        if points[0][0] > run_started:
            points = [(run_started, 0.0), *points]
        # The last scrape before the run, not an interpolation: no run produces before it starts,
        # and a run whose first requests fall between two scrapes would otherwise lose a share of
        # them (a run of few large requests, by more than the 3% the counts must agree within).
        before = [v for t, v in points if t <= run_started]
        at_run = before[-1] if before else interpolate(points, run_started)
        at_start, last = interpolate(points, start), points[-1][1]
        requests_since_start += max(last - at_start, 0.0)
        requests_total += max(last - at_run, 0.0)
        requests_found = True
    brokers = [
        BrokerStats(broker=b, **fields)
        for b, fields in sorted(by_broker.items(), key=lambda item: broker_order(item[0]))
    ]
    return BrokerWindow(
        start=start,
        end=end,
        step_s=step_s,
        brokers=brokers,
        topic_produce_requests=since_start if found else None,
        topic_produce_requests_total=total if found else None,
        produce_requests=requests_since_start if requests_found else None,
        produce_requests_total=requests_total if requests_found else None,
        request_queue_cap=queue_cap,
        queries={**per_field, "topic_samples": topic_selector(topics), "request_samples": request_selector()},
    )


def request_selector() -> str:
    """Every produce request once, whatever it carries (Sarama and Java put a broker's partitions
    in one)."""
    return f'{REQUESTS_SERIES}{{job="{BROKER_JOB}",request="Produce"}}'


def broker_order(name: str) -> tuple[int, str]:
    """Brokers by node id, numerically; other labels after them."""
    return (int(name), name) if _NODE_ID.fullmatch(name) else (1 << 30, name)
