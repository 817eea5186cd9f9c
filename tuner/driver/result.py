"""What a driver run returns: client aggregates and the delivery verdict.

Every engine (librdkafka, Java, Filebeat) reports this shape; the runner copies it into the run
record's own schema (tuner.store.figures), so a change here never changes records silently.
Counts marked "window" cover only the measured window [window_start, window_end] (warm-up
trimmed); "_total" counts cover the whole run.
"""

from __future__ import annotations

from pydantic import Field

from tuner.core.frozen import Frozen


class ArtifactRef(Frozen):
    """The rendered client file a run's client was started from (tuner/spec/clients/base.py
    `ClientKind.artifact`): its file name and the SHA-256 of its text, the settings a user deploys."""

    filename: str
    sha256: str


class LatencyMs(Frozen):
    """A latency distribution in milliseconds (HdrHistogram percentiles)."""

    count: int = 0
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    p999: float | None = None
    max: float | None = None


class DeliveryResult(Frozen):
    """Delivery verification (as Kafka's system tests do it): lost = acked - consumed (by id)."""

    acked: int = 0
    consumed: int = 0
    lost: int = 0
    duplicates: int = 0
    # Records stored in their partition after a record their producer sent later (first copies only;
    # counted where the record id carries the producer and its sequence).
    out_of_order: int = 0
    failed: int = 0  # delivery reports with an error
    indeterminate: int = 0  # timed out / unknown outcome: not counted as lost
    verified: bool = False  # False when verification did not run or did not finish (lost then means nothing)
    # Acked records the read-back had not reached when its deadline passed: neither lost nor verified
    # (the run is "unverified"). Only a read-back that reached every partition's end counts a loss.
    unread: int = 0
    read_back_s: float | None = None  # how long the read-back took
    read_back_limit_s: float | None = None  # its deadline when it ended (follows volume and read rate)


class ClientResult(Frozen):
    """Client-side aggregates of one run, summed over every producer and process."""

    engine: str  # librdkafka | java | filebeat
    producers: int
    processes: int
    # Epoch seconds: the whole run and the measured window (warm-up trimmed).
    started_at: float
    window_start: float
    window_end: float
    finished_at: float
    # Measured window.
    offered_records: int = 0  # records the schedule intended to send (open loop); sent for closed loop
    records_sent: int = 0  # records handed to the client (produce() accepted)
    records_acked: int = 0
    records_failed: int = 0
    bytes_acked: int = 0  # payload bytes (uncompressed) of acked records
    # ProduceRequests from the window start through the final drain (production stops at the window
    # end; the drain's requests carry the window's last records). The broker side uses the same span.
    produce_requests: int = 0
    produce_requests_by_broker: dict[str, int] = Field(default_factory=dict)  # node id -> count
    # Whole run (for exact comparison with the broker's per-topic counter).
    records_acked_total: int = 0
    produce_requests_total: int = 0
    # Batching, from client statistics.
    records_per_request: float | None = None  # messages per produce request (= per batch for librdkafka)
    batch_bytes: float | None = None  # average batch size on the wire (after compression)
    compression_ratio: float | None = None  # uncompressed / compressed bytes
    # Latency.
    delivery_latency_ms: LatencyMs = Field(default_factory=LatencyMs)  # from the intended send time
    queue_latency_ms: LatencyMs | None = None  # librdkafka int_latency
    rtt_ms: LatencyMs | None = None
    # Open loop: produce() time - intended send time, per record (None for closed loop or engines
    # that do not measure it). A high p99 means the client could not keep its schedule.
    send_lag_ms: LatencyMs | None = None
    max_producer_rss_mb: float | None = None  # largest resident memory of a driver process / its producers
    # The client's own metrics by their names (Java: producer-metrics such as request-rate,
    # records-per-request-avg, produce-throttle-time-max), summed or averaged over its producers.
    client_metrics: dict[str, float] | None = None
    # The rendered file the client ran from (None: an engine that does not run one, e.g. stress).
    artifact: ArtifactRef | None = None


class DriverResult(Frozen):
    """A driver's answer for one run."""

    client: ClientResult
    delivery: DeliveryResult
    topics: list[str] = Field(default_factory=list)
    interrupted: bool = False
