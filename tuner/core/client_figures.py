"""What a client did in one run, as a driver reports it and a run record keeps it: its aggregates
(sent, acked, requests, batching, latency distributions), the delivery verdict, and the rendered file
it ran from. One definition for both (each figure bounded by its unit, tuner/core/units.py): a field
a driver adds reaches the record's schema at once, and tests/unit/test_record_schema_pinned.py fails
until the record's schema version says so.
Counts marked "window" cover only the measured window [window_start, window_end] (warm-up trimmed);
"_total" counts cover the whole run.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import (
    Count,
    Entries,
    Epoch,
    Figure,
    Megabytes,
    Millis,
    PerRequest,
    Ratio,
    Seconds,
    Size,
    TallyInt,
    Text,
)

# Upper bounds (seconds) of kbt_client_delivery_latency_seconds' buckets, +Inf implied: one home for
# the drivers that serve it and the metric catalog that names it; the Java engine's exporter
# (ClientExporter.java) serves the same bounds (a test compares them). Dense from 0.5 to 5 s, where
# p99 SLOs of log shippers sit, so histogram_quantile there is within ~25%.
DELIVERY_BUCKETS_S = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75,
    1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 30.0, 60.0,
)  # fmt: skip


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
