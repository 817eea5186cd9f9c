"""What the brokers did over one run's window, as measurement reports it and a run record keeps it:
each broker's rates, idle ratios and request queue from Prometheus (tuner.measure.broker_window), and
a local broker's network and handler threads from the kernel (tuner.measure.threads) and where their
busy time went (tuner.measure.attribution). One definition for both (each figure bounded by its unit,
tuner/core/units.py): a field measurement adds reaches the record's schema at once, and
tests/unit/test_record_schema_pinned.py fails until the record's schema version says so.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import (
    ByteRate,
    Cores,
    CoresInt,
    Count,
    Entries,
    Epoch,
    Millis,
    QueueCap,
    QueueLength,
    Rate,
    Ratio,
    Seconds,
    Tally,
    Text,
)


class BrokerStats(Frozen):
    """One broker over the window: rates are per second, ratios 0-1, averaged over the window."""

    broker: Text
    produce_requests_per_s: Rate | None = None
    topic_produce_requests_per_s: Rate | None = None  # the run's own topics only, [start, end]
    bytes_in_per_s: ByteRate | None = None
    messages_in_per_s: Rate | None = None
    network_idle_ratio: Ratio | None = None  # NetworkProcessorAvgIdlePercent, mean over the window
    network_idle_ratio_min: Ratio | None = None
    request_handler_idle_ratio: Ratio | None = None  # rate(idle ns)/1e9
    request_queue_size: QueueLength | None = None  # mean
    request_queue_size_max: QueueLength | None = None
    request_queue_at_cap_share: Ratio | None = None  # share of the window the queue was at its cap
    produce_total_time_p999_ms: Millis | None = None  # Produce TotalTimeMs 99.9th percentile, max
    log_flush_per_s: Rate | None = None
    log_flush_time_p99_ms: Millis | None = None
    cpu_cores: Cores | None = None  # rate(process_cpu_seconds_total)


class BrokerWindow(Frozen):
    """All brokers over [start, end] plus cluster totals."""

    start: Epoch
    end: Epoch
    step_s: Seconds
    brokers: Annotated[list[BrokerStats], Entries] = Field(default_factory=list)
    # The run's topics (fresh per run): TotalProduceRequests from the window start through the
    # client's final drain (the client's produce_requests spans the same), and the whole-run count.
    topic_produce_requests: Tally | None = None
    topic_produce_requests_total: Tally | None = None
    # RequestMetrics RequestsPerSec{request=Produce} over the same spans: every produce request the
    # brokers received (any topic), counted once per request however many partitions it carries.
    produce_requests: Tally | None = None
    produce_requests_total: Tally | None = None
    request_queue_cap: QueueCap | None = None  # queued.max.requests, when the target knows it
    queries: Annotated[dict[Text, Text], Entries] = Field(default_factory=dict)  # catalog name -> PromQL used

    def run_produce_requests(self, multi_partition: bool) -> tuple[float | None, float | None]:
        """The broker's count of the run's produce requests: (window start through the drain, whole
        run). One-partition requests (librdkafka) are counted exactly on the run's own topics;
        requests that carry several partitions (Sarama, the Java producer) only by the per-request
        counter, which also sees any other produce traffic on the cluster (the lab has almost none)."""
        if multi_partition:
            return self.produce_requests, self.produce_requests_total
        return self.topic_produce_requests, self.topic_produce_requests_total

    def values(self, field: str) -> list[float]:
        return [v for b in self.brokers if (v := getattr(b, field)) is not None]

    def _sum(self, field: str) -> float | None:
        return sum(values) if (values := self.values(field)) else None

    def _mean(self, field: str) -> float | None:
        return sum(values) / len(values) if (values := self.values(field)) else None

    def _min(self, field: str) -> float | None:
        return min(values) if (values := self.values(field)) else None

    @property
    def produce_requests_per_s(self) -> float | None:
        return self._sum("produce_requests_per_s")

    @property
    def topic_produce_requests_per_s(self) -> float | None:
        return self._sum("topic_produce_requests_per_s")

    def run_produce_requests_per_s(self, multi_partition: bool) -> float | None:
        """The brokers' rate of the run's produce requests over [start, end] (see
        run_produce_requests for which counter)."""
        return self.produce_requests_per_s if multi_partition else self.topic_produce_requests_per_s

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
    def request_queue_at_cap_share(self) -> float | None:
        return self._mean("request_queue_at_cap_share")

    @property
    def cpu_cores(self) -> float | None:
        return self._sum("cpu_cores")


class ThreadTime(Frozen):
    """One broker thread over the window, from the kernel: seconds per second and sample shares."""

    name: Text
    cpu: Ratio  # own CPU time per second
    runqueue_wait: Ratio  # runnable but waiting for a core, per second
    in_select: Ratio  # share of samples asleep in select/epoll (Kafka's idle)
    blocked: Ratio  # share asleep on a futex (a network thread: the put into the full request queue)
    disk: Ratio = 0.0  # share in uninterruptible sleep (D: waiting for the disk, an fsync)
    running: Ratio  # share runnable (on a core or waiting for one)
    samples: Count


class ThreadWindow(Frozen):
    """A local broker's network and handler threads and the host over the window."""

    start: Epoch
    end: Epoch
    network: Annotated[list[ThreadTime], Entries] = Field(default_factory=list)
    handlers: Annotated[list[ThreadTime], Entries] = Field(default_factory=list)
    host_cpu_busy: Ratio | None = None  # share of all cores busy (/proc/stat)
    host_cores: CoresInt | None = None
    load_avg_1m: Cores | None = None  # mean of the 1-minute load average sampled over the window

    def network_mean(self, attr: str) -> float | None:
        """A ThreadTime figure averaged over the network threads (None: none sampled)."""
        return _mean([getattr(t, attr) for t in self.network])

    def handler_mean(self, attr: str) -> float | None:
        """A ThreadTime figure averaged over the request handler threads."""
        return _mean([getattr(t, attr) for t in self.handlers])


class Attribution(Frozen):
    """Where the network threads' busy time went over the window and the cause it points to
    (tuner/measure/attribution.py): request queue full, host contention, own work, ... The cause and
    the handlers' limit are held as any text, so a record naming one a later kbt no longer does still
    loads."""

    threads: ThreadWindow
    network_idle: Ratio | None = None  # Kafka's meter, mean over the window
    busy: Ratio  # 1 - idle (Kafka's, else the share of samples not in select)
    blocked: Ratio  # share of the busy time the network threads were blocked (futex)
    own_cpu: Ratio  # share of the busy time that was their own CPU
    runqueue_wait: Ratio  # share of the busy time spent runnable without a core
    # The request handlers, per second of their busy time (1 - their idle): what limited them.
    handler_busy: Ratio | None = None
    handler_own_cpu: Ratio | None = None
    handler_runqueue_wait: Ratio | None = None
    handler_disk: Ratio | None = None  # share of samples waiting for the disk (D state)
    # the rest of their busy time, off CPU and not on the disk: parked inside a request (the
    # pressure lab's stated service time; a lock)
    handler_off_cpu: Ratio | None = None
    handler_limit: Text | None = None  # own CPU | runqueue wait | disk wait | off-CPU wait
    cause: Text  # a tuner.measure.attribution.Cause
    why: Text


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
