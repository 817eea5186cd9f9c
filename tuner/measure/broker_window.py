"""The broker side of one run: Prometheus range queries over the measured window.

Every query comes from the shared PromQL catalog (tuner.measure.catalog), so dashboards and records
read the same expressions.
"""

from __future__ import annotations

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
