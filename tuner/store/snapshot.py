"""A cluster's broker figures over a window, as `kbt diagnose` reads them from Prometheus
(tuner.measure.cluster_snapshot takes them; tuner.model.diagnosis judges them)."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import (
    MAX_KAFKA_BYTES,
    ByteRate,
    Cores,
    Count,
    Entries,
    Epoch,
    Millis,
    PerRequest,
    QueueLength,
    Rate,
    Ratio,
    Seconds,
    Size,
    Tally,
    TallyInt,
    Text,
    Threads,
)


class BrokerSnapshot(Frozen):
    """One broker over the window: rates per second, ratios 0-1, times in ms."""

    broker: Text
    network_threads: Threads | None = None
    produce_requests_per_s: Rate | None = None  # RequestMetrics: once per request
    partition_appends_per_s: Rate | None = None  # TotalProduceRequests: once per partition batch
    bytes_in_per_s: ByteRate | None = None
    messages_in_per_s: Rate | None = None
    network_idle_ratio: Ratio | None = None
    network_idle_ratio_min: Ratio | None = None
    busiest_network_thread_idle_ratio: Ratio | None = None
    request_handler_idle_ratio: Ratio | None = None
    request_queue_size: QueueLength | None = None
    request_queue_size_max: QueueLength | None = None
    response_queue_size_max: QueueLength | None = None
    produce_total_p999_ms: Millis | None = None
    produce_request_queue_p99_ms: Millis | None = None
    produce_local_p99_ms: Millis | None = None
    produce_response_queue_p99_ms: Millis | None = None
    produce_request_bytes_p50: Size | None = None
    log_flush_per_s: Rate | None = None
    log_flush_time_p99_ms: Millis | None = None
    fetch_requests_per_s: Rate | None = None
    bytes_out_per_s: ByteRate | None = None
    fetch_consumer_p99_ms: Millis | None = None
    cpu_cores: Cores | None = None
    started_at: Epoch | None = None  # the broker JVM's start, epoch seconds
    # Scrape health over the window: scrapes Prometheus attempted and the broker's exporter answered,
    # their share, the slowest; `measured` False when too few answered (no figure above is kept).
    measured: bool = True
    scrape_attempts: Tally | None = None
    scrape_samples: Tally | None = None
    scrape_coverage: Ratio | None = None
    scrape_duration_max_s: Seconds | None = None

    @property
    def bytes_per_produce_request(self) -> float | None:
        return bounded_ratio(self.bytes_in_per_s, self.produce_requests_per_s)

    @property
    def records_per_produce_request(self) -> float | None:
        return bounded_ratio(self.messages_in_per_s, self.produce_requests_per_s)

    @property
    def partitions_per_produce_request(self) -> float | None:
        """Partition batches a produce request carries on average (1 for librdkafka; more for
        Sarama / Filebeat, the Java producer, franz-go)."""
        return bounded_ratio(self.partition_appends_per_s, self.produce_requests_per_s)

    @property
    def bytes_per_fetch_request(self) -> float | None:
        return bounded_ratio(self.bytes_out_per_s, self.fetch_requests_per_s)

    @property
    def produce_requests_per_network_thread(self) -> float | None:
        if self.produce_requests_per_s is None or not self.network_threads:
            return None
        return self.produce_requests_per_s / self.network_threads


class TopicSnapshot(Frozen):
    """Per topic Kafka counts partition appends, not requests (TotalProduceRequests{topic})."""

    topic: Text
    partition_appends_per_s: Rate = 0.0
    bytes_in_per_s: ByteRate = 0.0

    @property
    def bytes_per_partition_append(self) -> float | None:
        return bounded_ratio(self.bytes_in_per_s, self.partition_appends_per_s)


class ClientSnapshot(Frozen):
    """One client (user and/or client-id) on one broker, from Kafka's quota sensors (present once any
    client quota is set): the thread time its requests used and its produce bytes. Kafka keeps no
    request count per client (docs/diagnose.md: which clients)."""

    broker: Text
    client_id: Text = ""
    user: Text = ""
    request_threads: Cores = 0.0  # network + handler thread time, in threads (1.0 = one thread)
    produce_bytes_per_s: ByteRate = 0.0  # produce request bytes per second

    @property
    def name(self) -> str:
        return client_name(self.client_id, self.user)


def client_name(client_id: str, user: str) -> str:
    """How diagnose names a client: its client-id, and its user where Kafka keys one."""
    if user and client_id:
        return f"{client_id} (user {user})"
    if user:
        return f"user {user}"
    return client_id or "(no client-id)"


class ClientRequests(Frozen):
    """One client's produce requests as the brokers' request logs count them (Kafka's
    kafka.request.logger at DEBUG writes one line per completed request, with its client-id): exact
    where the quota sensors only allow an estimate (docs/diagnose.md: which clients)."""

    client_id: Text
    principal: Text = ""  # Kafka's principal without "User:" ("ANONYMOUS" without authentication)
    software: Text = ""  # the client's own name and version (ApiVersions v3+), e.g. apache-kafka-java 4.1.1
    produce_requests_per_s: Rate
    produce_bytes_per_s: ByteRate  # record batch bytes in its produce requests
    partitions_per_request: PerRequest | None = None


class RequestLogCoverage(Frozen):
    """What the request logs held for the window: per file the span the counts are rates over (from
    the first to the last logged request of any kind, widened to the window's edge where the file
    logged before or after it) and its produce requests."""

    file: Text
    span_s: Seconds
    produce_requests: TallyInt
    unreadable_lines: Count = 0


class ClusterSnapshot(Frozen):
    """Every broker (and the busiest topics) over [end - window_s, end]."""

    prometheus: Text
    end: Epoch
    window_s: Seconds
    step_s: Seconds
    brokers: Annotated[list[BrokerSnapshot], Entries] = Field(default_factory=list)
    # by partition appends/s, busiest first
    topics: Annotated[list[TopicSnapshot], Entries] = Field(default_factory=list)
    # empty without the quota sensors
    clients: Annotated[list[ClientSnapshot], Entries] = Field(default_factory=list)
    # from the brokers' request logs (`kbt diagnose --request-log`), busiest first; empty without them
    client_requests: Annotated[list[ClientRequests], Entries] = Field(default_factory=list)
    request_logs: Annotated[list[RequestLogCoverage], Entries] = Field(default_factory=list)
    queries: Annotated[dict[Text, Text], Entries] = Field(default_factory=dict)

    @property
    def produce_requests_per_s(self) -> float:
        return sum(b.produce_requests_per_s or 0.0 for b in self.brokers)

    @property
    def bytes_in_per_s(self) -> float:
        return sum(b.bytes_in_per_s or 0.0 for b in self.brokers)


def bounded_ratio(num: float | None, den: float | None) -> float | None:
    """num / den, None for an unknown, vanishing or negative denominator."""
    if num is None or den is None or den <= 0:
        return None
    ratio = num / den
    # A vanishing rate is no rate to divide by: every quotient here is per request or append, and
    # none is larger than Kafka's largest request.
    return ratio if math.isfinite(ratio) and abs(ratio) <= MAX_KAFKA_BYTES else None
