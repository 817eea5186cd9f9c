"""The figures a run record holds: client aggregates, the delivery verdict and the broker window.

These are the on-disk schema (tuner.store.record), defined here on their own: the driver and measure
layers report in their own types and the runner copies them in (tuner.runner.record). A field a
driver adds does not reach a record until it is added here, with a schema version bump.
Counts marked "window" cover only the measured window [window_start, window_end] (warm-up
trimmed); "_total" counts cover the whole run.
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
    Figure,
    Megabytes,
    Millis,
    PerRequest,
    QueueCap,
    QueueLength,
    Rate,
    Ratio,
    Seconds,
    Size,
    Tally,
    TallyInt,
    Text,
)


class ArtifactRef(Frozen):
    """The rendered client file a run's client was started from: its file name and the SHA-256 of
    its text (the file a recommendation writes is this text under `#` header lines)."""

    filename: Text
    sha256: Text


class LatencyMs(Frozen):
    """A latency distribution in milliseconds (HdrHistogram percentiles)."""

    count: Count = 0
    mean: Millis | None = None
    p50: Millis | None = None
    p90: Millis | None = None
    p99: Millis | None = None
    p999: Millis | None = None
    max: Millis | None = None


class DeliveryResult(Frozen):
    """Delivery verification (docs/architecture.md): lost = acked - consumed (by id)."""

    acked: TallyInt = 0
    consumed: TallyInt = 0
    lost: TallyInt = 0
    duplicates: TallyInt = 0
    # Records stored in their partition after a record their producer sent later (first copies only;
    # counted where the record id carries the producer and its sequence).
    out_of_order: TallyInt = 0
    failed: TallyInt = 0  # delivery reports with an error
    indeterminate: TallyInt = 0  # timed out / unknown outcome: not counted as lost
    verified: bool = False  # False when verification did not run or did not finish (lost then means nothing)
    # Acked records the read-back had not reached when its deadline passed: neither lost nor verified
    # (the run is "unverified"). Only a read-back that reached every partition's end counts a loss.
    unread: TallyInt = 0
    read_back_s: Seconds | None = None  # how long the read-back took
    read_back_limit_s: Seconds | None = None  # its deadline when it ended (follows volume and read rate)

    @property
    def ok(self) -> bool:
        return self.verified and self.lost == 0

    @property
    def unfinished(self) -> bool:
        """The read-back ended before it reached every acked record: unverified, nothing counted lost."""
        return not self.verified and self.unread > 0


class ClientResult(Frozen):
    """Client-side aggregates of one run, summed over every producer and process."""

    engine: Text  # librdkafka | java | filebeat
    producers: Count
    processes: Count
    # Epoch seconds: the whole run and the measured window (warm-up trimmed).
    started_at: Epoch
    window_start: Epoch
    window_end: Epoch
    finished_at: Epoch
    # Measured window.
    offered_records: TallyInt = 0  # records the schedule intended to send (open loop); sent for closed loop
    records_sent: TallyInt = 0  # records handed to the client (produce() accepted)
    records_acked: TallyInt = 0
    records_failed: TallyInt = 0
    bytes_acked: TallyInt = 0  # payload bytes (uncompressed) of acked records
    # ProduceRequests from the window start through the final drain (production stops at the window
    # end; the drain's requests carry the window's last records). The broker side uses the same span.
    produce_requests: TallyInt = 0
    produce_requests_by_broker: Annotated[dict[Text, TallyInt], Entries] = Field(
        default_factory=dict
    )  # node id -> count
    # Whole run (for exact comparison with the broker's per-topic counter).
    records_acked_total: TallyInt = 0
    produce_requests_total: TallyInt = 0
    # Batching, from client statistics.
    records_per_request: PerRequest | None = None  # messages per produce request (= per batch for librdkafka)
    batch_bytes: Size | None = None  # average batch size on the wire (after compression)
    compression_ratio: Ratio | None = None  # uncompressed / compressed bytes
    # Latency.
    delivery_latency_ms: LatencyMs = Field(default_factory=LatencyMs)  # from the intended send time
    queue_latency_ms: LatencyMs | None = None  # librdkafka int_latency
    rtt_ms: LatencyMs | None = None
    # Open loop: produce() time - intended send time, per record (None for closed loop or engines
    # that do not measure it). A high p99 means the client could not keep its schedule.
    send_lag_ms: LatencyMs | None = None
    max_producer_rss_mb: Megabytes | None = (
        None  # largest resident memory of a driver process / its producers
    )
    # The client's own metrics by their names (Java: producer-metrics such as request-rate,
    # records-per-request-avg, produce-throttle-time-max), summed or averaged over its producers.
    client_metrics: Annotated[dict[Text, Figure], Entries] | None = None
    # The rendered file the client ran from (None: an engine that does not run one, e.g. stress).
    artifact: ArtifactRef | None = None

    @property
    def window_s(self) -> float:
        return max(self.window_end - self.window_start, 1e-9)

    @property
    def counts_requests(self) -> bool:
        """Whether the client counted its produce requests: real Filebeat and the collector do not
        (their records say 0), which a run that acked records tells apart, since it sent requests."""
        return self.produce_requests > 0 or self.records_acked == 0

    @property
    def requests_per_s(self) -> float | None:
        """The client's own produce request rate; None when it does not count them."""
        return self.produce_requests / self.window_s if self.counts_requests else None

    @property
    def records_per_s(self) -> float:
        return self.records_acked / self.window_s

    @property
    def mb_per_s(self) -> float:
        return self.bytes_acked / self.window_s / 1e6


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
        """`field` of every broker that has it."""
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
    running: Ratio  # share runnable
    samples: Count


class ThreadWindow(Frozen):
    """A local broker's network and handler threads and the host over the window."""

    start: Epoch
    end: Epoch
    network: Annotated[list[ThreadTime], Entries] = Field(default_factory=list)
    handlers: Annotated[list[ThreadTime], Entries] = Field(default_factory=list)
    host_cpu_busy: Ratio | None = None  # share of all cores busy
    host_cores: CoresInt | None = None
    load_avg_1m: Cores | None = None  # mean over the window


class Attribution(Frozen):
    """Where the network threads' busy time went over the window and the cause it points to
    (tuner/measure/attribution.py): request queue full, host contention, own work, ..."""

    threads: ThreadWindow
    network_idle: Ratio | None = None
    busy: Ratio
    blocked: Ratio  # shares of the busy time
    own_cpu: Ratio
    runqueue_wait: Ratio
    handler_busy: Ratio | None = None  # the request handlers: 1 - their idle
    handler_own_cpu: Ratio | None = None  # shares of the handlers' busy time
    handler_runqueue_wait: Ratio | None = None
    handler_disk: Ratio | None = None
    handler_off_cpu: Ratio | None = None
    handler_limit: Text | None = None  # own CPU | runqueue wait | disk wait | off-CPU wait
    cause: Text
    why: Text
