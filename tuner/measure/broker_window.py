"""The broker side of one run: Prometheus range queries over the measured window.

Every query comes from the shared PromQL catalog (tuner.measure.catalog), so dashboards and records
read the same expressions.
"""

from __future__ import annotations

import math
import re
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BrokerStats(_Frozen):
    """One broker over the window: rates are per second, ratios 0-1, averaged over the window."""

    broker: str
    produce_requests_per_s: float | None = None
    topic_produce_requests_per_s: float | None = None  # the run's own topics only
    bytes_in_per_s: float | None = None
    messages_in_per_s: float | None = None
    network_idle_ratio: float | None = None  # NetworkProcessorAvgIdlePercent, mean over the window
    network_idle_ratio_min: float | None = None
    request_handler_idle_ratio: float | None = None  # rate(idle ns)/1e9
    request_queue_size: float | None = None  # mean
    request_queue_size_max: float | None = None
    produce_total_time_p999_ms: float | None = None  # Produce TotalTimeMs 99.9th percentile, max
    log_flush_per_s: float | None = None
    log_flush_time_p99_ms: float | None = None
    cpu_cores: float | None = None  # rate(process_cpu_seconds_total)


class BrokerWindow(_Frozen):
    """All brokers over [start, end] plus cluster totals."""

    start: float
    end: float
    step_s: float
    brokers: list[BrokerStats] = Field(default_factory=list)
    # The run's topics: the increase of TotalProduceRequests (per partition append) over the window,
    # and the counter's final value (the topic is fresh per run, so this is the whole-run count).
    topic_produce_requests: float | None = None
    topic_produce_requests_total: float | None = None
    queries: dict[str, str] = Field(default_factory=dict)  # catalog name -> PromQL used

    def _sum(self, field: str) -> float | None:
        values = [getattr(b, field) for b in self.brokers if getattr(b, field) is not None]
        return sum(values) if values else None

    def _mean(self, field: str) -> float | None:
        values = [getattr(b, field) for b in self.brokers if getattr(b, field) is not None]
        return sum(values) / len(values) if values else None

    def _min(self, field: str) -> float | None:
        values = [getattr(b, field) for b in self.brokers if getattr(b, field) is not None]
        return min(values) if values else None

    @property
    def produce_requests_per_s(self) -> float | None:
        return self._sum("produce_requests_per_s")

    @property
    def topic_produce_requests_per_s(self) -> float | None:
        return self._sum("topic_produce_requests_per_s")

    @property
    def bytes_in_per_s(self) -> float | None:
        return self._sum("bytes_in_per_s")

    @property
    def network_idle_ratio(self) -> float | None:
        return self._mean("network_idle_ratio")

    @property
    def network_idle_ratio_min(self) -> float | None:
        return self._min("network_idle_ratio_min")

    @property
    def request_handler_idle_ratio(self) -> float | None:
        return self._mean("request_handler_idle_ratio")

    @property
    def cpu_cores(self) -> float | None:
        return self._sum("cpu_cores")


# ---- measuring ----------------------------------------------------------------------------------


class InstantQuery(Protocol):
    """Evaluate PromQL at one instant: [(labels, value), ...] (the lab's Prometheus client)."""

    def __call__(self, promql: str, at: float) -> list[tuple[dict[str, str], float]]: ...


def topic_regex(topics: list[str]) -> str:
    """An RE2 alternation matching exactly these topic names, escaped for a PromQL string."""
    return "|".join(re.escape(t) for t in topics).replace("\\", "\\\\")


def _range(window_s: float) -> str:
    return f"{max(int(window_s * 1000), 1000)}ms"


def window_queries(window_s: float, topics: list[str]) -> dict[str, str]:
    """BrokerStats field -> PromQL evaluated at the window's end; each aggregates over the window."""
    w = _range(window_s)
    t = topic_regex(topics)

    def per_broker(fn: str, metric: str, labels: str = "", scale: str = "") -> str:
        selector = f'{metric}{{job="kafka-broker"{"," + labels if labels else ""}}}'
        return f"sum by (broker) ({fn}({selector}[{w}])){scale}"

    produce_p999 = 'request="Produce",phase="total",quantile="0.999"'
    return {
        "produce_requests_per_s": per_broker("rate", "kafka_server_produce_requests_total", 'topic=""'),
        "topic_produce_requests_per_s": per_broker(
            "rate", "kafka_server_produce_requests_total", f'topic=~"{t}"'
        ),
        "bytes_in_per_s": per_broker("rate", "kafka_server_bytes_in_total", 'topic=""'),
        "messages_in_per_s": per_broker("rate", "kafka_server_messages_in_total", 'topic=""'),
        "network_idle_ratio": per_broker("avg_over_time", "kafka_network_processor_avg_idle_ratio"),
        "network_idle_ratio_min": per_broker("min_over_time", "kafka_network_processor_avg_idle_ratio"),
        "request_handler_idle_ratio": per_broker(
            "rate", "kafka_server_request_handler_idle_ns_total", scale=" / 1e9"
        ),
        "request_queue_size": per_broker("avg_over_time", "kafka_network_request_queue_size"),
        "request_queue_size_max": per_broker("max_over_time", "kafka_network_request_queue_size"),
        # Yammer histograms decay over ~5 minutes: the window's max is the closest bound we have.
        "produce_total_time_p999_ms": per_broker(
            "max_over_time", "kafka_network_request_time_ms", produce_p999
        ),
        "log_flush_per_s": per_broker("rate", "kafka_log_flush_total"),
        "log_flush_time_p99_ms": per_broker("max_over_time", "kafka_log_flush_time_ms", 'quantile="0.99"'),
        "cpu_cores": per_broker("rate", "process_cpu_seconds_total"),
    }


def topic_total_queries(window_s: float, topics: list[str]) -> dict[str, str]:
    series = f'kafka_server_produce_requests_total{{job="kafka-broker",topic=~"{topic_regex(topics)}"}}'
    return {
        "topic_produce_requests": f"sum(increase({series}[{_range(window_s)}]))",
        # Fresh topics start at zero, so the counter's last value is the whole-run count.
        "topic_produce_requests_total": f"sum(last_over_time({series}[1h]))",
    }


def measure_window(
    query: InstantQuery, start: float, end: float, topics: list[str], step_s: float, now: float
) -> BrokerWindow:
    """Query every BrokerStats field over [start, end]; the whole-run topic total at `now`."""
    window = end - start
    per_field = window_queries(window, topics)
    by_broker: dict[str, dict[str, float]] = {}
    for field, promql in per_field.items():
        for labels, value in query(promql, end):
            broker = labels.get("broker")
            if broker is not None and math.isfinite(value):
                by_broker.setdefault(broker, {})[field] = value
    totals = topic_total_queries(window, topics)
    increase = _scalar(query(totals["topic_produce_requests"], end))
    total = _scalar(query(totals["topic_produce_requests_total"], now))
    brokers = [BrokerStats(broker=b, **fields) for b, fields in sorted(by_broker.items(), key=_broker_key)]
    return BrokerWindow(
        start=start,
        end=end,
        step_s=step_s,
        brokers=brokers,
        topic_produce_requests=increase,
        topic_produce_requests_total=total,
        queries={**per_field, **totals},
    )


def _scalar(rows: list[tuple[dict[str, str], float]]) -> float | None:
    values = [v for _, v in rows if math.isfinite(v)]
    return sum(values) if values else None


def _broker_key(item: tuple[str, dict[str, float]]) -> tuple[int, str]:
    name = item[0]
    return (int(name), name) if name.isdigit() else (1 << 30, name)
