"""Every broker series the lab's Prometheus holds: name, source MBean, type, labels, meaning.

The series come from exporters/jmx/kafka-broker.yml (one rule each) plus the jmx agent's own
process collector. A unit test runs the rules over real broker MBean names and checks that they
produce exactly these names; docs/metrics.md is generated from this module. Every series also carries
the Prometheus target labels job="kafka-broker" and broker="<node id>".

CLIENT_SERIES are the series kbt's own load exporters serve (tuner/driver/client_exporter.py,
tuner/driver/stress/consumer_exporter.py, the Java engine's ClientExporter.java): this is their one
definition; tests compare what each exporter serves with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tuner.measure.series_names import (
    CLIENT_BYTE_RATE_SERIES,
    CLIENT_REQUEST_TIME_SERIES,
    NETWORK_IDLE_SERIES,
    NETWORK_THREAD_IDLE_SERIES,
    REQUESTS_SERIES,
    TOPIC_PRODUCE_REQUESTS_SERIES,
)

QUANTILES = ("0.5", "0.75", "0.95", "0.98", "0.99", "0.999")
TIMED_REQUESTS = ("Produce", "FetchConsumer", "FetchFollower", "Metadata")
PHASES = {
    "total": "TotalTimeMs",
    "request_queue": "RequestQueueTimeMs",
    "local": "LocalTimeMs",
    "remote": "RemoteTimeMs",
    "throttle": "ThrottleTimeMs",
    "response_queue": "ResponseQueueTimeMs",
    "response_send": "ResponseSendTimeMs",
}


class Kind(StrEnum):
    COUNTER = "counter"
    GAUGE = "gauge"


class Needs(StrEnum):
    """What must happen on the broker before the series moves (it exists from startup)."""

    NOTHING = "nothing"  # a level that is always meaningful (queue sizes, idle ratios)
    PRODUCE = "produce"  # grows with produce traffic
    FETCH = "fetch"  # grows with consumer or follower fetches
    FLUSH = "flush"  # grows when a log is flushed (segment roll, flush.ms/flush.messages)
    REMOTE_COPY = "remote copy"  # a tiered topic's segment was copied to the remote tier
    REMOTE_FETCH = "remote fetch"  # a consumer read from the remote tier
    ERRORS = "errors"  # only grows on failures (stays 0 on a healthy lab)
    QUOTA = "client quota"  # exists once any client quota is set (kbt lab client-sensors on)


@dataclass(frozen=True)
class Series:
    name: str
    kind: Kind
    mbean: str  # ObjectName (pattern) the rule reads
    attribute: str
    meaning: str
    labels: tuple[str, ...] = ()
    needs: Needs = Needs.NOTHING
    per_topic: bool = False  # also exported with {topic="T"}; without topic = broker-wide
    from_rules: bool = True  # False: the jmx agent's built-in collectors
    # labels a series may lack (Kafka leaves an empty user or client-id out of the MBean name)
    optional_labels: tuple[str, ...] = ()


def _btm(name: str, bean: str, meaning: str, needs: Needs, kind: Kind = Kind.COUNTER) -> Series:
    attribute = "Count" if kind is Kind.COUNTER else "Value"
    return Series(
        name,
        kind,
        f"kafka.server:type=BrokerTopicMetrics,name={bean}[,topic=T]",
        attribute,
        meaning,
        needs=needs,
        per_topic=True,
    )


PERCENTILES = "50/75/95/98/99/999thPercentile"


def _value(name: str, mbean: str, meaning: str, labels: tuple[str, ...] = ()) -> Series:
    """A gauge of an MBean's Value."""
    return Series(name, Kind.GAUGE, mbean, "Value", meaning, labels=labels)


def _count(
    name: str, mbean: str, meaning: str, labels: tuple[str, ...] = (), needs: Needs = Needs.NOTHING
) -> Series:
    """A counter of a meter's or a timer's Count."""
    return Series(name, Kind.COUNTER, mbean, "Count", meaning, labels=labels, needs=needs)


def _percentiles(name: str, mbean: str, meaning: str, *labels: str) -> Series:
    """A histogram's or a timer's percentiles, each a quantile after `labels`."""
    return Series(name, Kind.GAUGE, mbean, PERCENTILES, meaning, labels=(*labels, "quantile"))


SERIES: tuple[Series, ...] = (
    # ---- network threads and queues ----
    _value(
        "kafka_network_request_queue_size",
        "kafka.network:type=RequestChannel,name=RequestQueueSize",
        "Requests parsed by network threads, waiting for a request handler thread.",
    ),
    _value(
        "kafka_network_response_queue_size",
        "kafka.network:type=RequestChannel,name=ResponseQueueSize",
        "Responses waiting for a network thread to send them (all processors).",
    ),
    _value(
        NETWORK_IDLE_SERIES,
        "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent",
        "Average idle fraction (0-1) of the network threads. Below 0.3 the network threads are the "
        "bottleneck; many small produce requests drive it down.",
    ),
    _value(
        NETWORK_THREAD_IDLE_SERIES,
        "kafka.network:type=Processor,name=IdlePercent,networkProcessor=N",
        "Idle fraction (0-1) of one network thread.",
        labels=("network_processor",),
    ),
    # ---- request handler threads ----
    _count(
        "kafka_server_request_handler_idle_ns_total",
        "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent",
        "Idle nanoseconds of the request handler threads, each divided by the thread count: "
        "rate(...)/1e9 is the average idle fraction (0-1). On an idle broker short windows read a few "
        "percent above 1 (handlers mark idle time per 300 ms poll): cap at 1.",
    ),
    Series(
        "kafka_server_request_handler_avg_idle_ratio",
        Kind.GAUGE,
        "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent",
        "OneMinuteRate",
        "Average idle fraction (0-1) of the request handler threads over about a minute (the Meter's "
        "rate unit is nanoseconds); reads up to ~1.001 when idle. MeanRate, a lifetime mean, is not "
        "exported.",
    ),
    # ---- log flush ----
    _count(
        "kafka_log_flush_total",
        "kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs",
        "Log flushes (fsync of a log segment).",
        needs=Needs.FLUSH,
    ),
    _percentiles(
        "kafka_log_flush_time_ms",
        "kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs",
        "Log flush time percentiles, ms (recent samples).",
    ),
    # ---- BrokerTopicMetrics ----
    _btm(
        TOPIC_PRODUCE_REQUESTS_SERIES,
        "TotalProduceRequestsPerSec",
        "Produce requests (per topic: requests that carried the topic).",
        Needs.PRODUCE,
    ),
    _btm(
        "kafka_server_fetch_requests_total",
        "TotalFetchRequestsPerSec",
        "Fetch requests from consumers and followers.",
        Needs.FETCH,
    ),
    _btm(
        "kafka_server_bytes_in_total",
        "BytesInPerSec",
        "Bytes produced to the broker (after compression).",
        Needs.PRODUCE,
    ),
    _btm(
        "kafka_server_bytes_out_total",
        "BytesOutPerSec",
        "Bytes fetched from the broker by consumers.",
        Needs.FETCH,
    ),
    _btm(
        "kafka_server_messages_in_total", "MessagesInPerSec", "Records produced to the broker.", Needs.PRODUCE
    ),
    # ---- RequestMetrics ----
    _count(
        REQUESTS_SERIES,
        "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=R,version=V",
        "Requests received, by API (Produce, Fetch, Metadata, ...) and API version.",
        labels=("request", "version"),
        needs=Needs.PRODUCE,
    ),
    _percentiles(
        "kafka_network_request_time_ms",
        "kafka.network:type=RequestMetrics,name=<Phase>TimeMs,request=R",
        "Request time percentiles, ms, by phase: total, request_queue (waiting for a handler), local "
        "(handler + log append), remote (waiting for replicas), throttle, response_queue, response_send. "
        f"Collected for {', '.join(TIMED_REQUESTS)}.",
        "request",
        "phase",
    ),
    _percentiles(
        "kafka_network_request_bytes",
        "kafka.network:type=RequestMetrics,name=RequestBytes,request=R",
        "Request size percentiles, bytes (Produce: the size of the batches a client sends).",
        "request",
    ),
    # ---- tiered storage (KIP-405) ----
    _btm(
        "kafka_server_remote_copy_bytes_total",
        "RemoteCopyBytesPerSec",
        "Bytes copied from local segments to the remote tier.",
        Needs.REMOTE_COPY,
    ),
    _btm(
        "kafka_server_remote_fetch_bytes_total",
        "RemoteFetchBytesPerSec",
        "Bytes read from the remote tier to serve fetches.",
        Needs.REMOTE_FETCH,
    ),
    _btm(
        "kafka_server_remote_copy_requests_total",
        "RemoteCopyRequestsPerSec",
        "Segments copied to the remote tier.",
        Needs.REMOTE_COPY,
    ),
    _btm(
        "kafka_server_remote_fetch_requests_total",
        "RemoteFetchRequestsPerSec",
        "Fetches served from the remote tier.",
        Needs.REMOTE_FETCH,
    ),
    _btm(
        "kafka_server_remote_copy_errors_total",
        "RemoteCopyErrorsPerSec",
        "Failed segment copies.",
        Needs.ERRORS,
    ),
    _btm(
        "kafka_server_remote_fetch_errors_total",
        "RemoteFetchErrorsPerSec",
        "Failed remote reads.",
        Needs.ERRORS,
    ),
    _btm(
        "kafka_server_remote_copy_lag_bytes",
        "RemoteCopyLagBytes",
        "Bytes in rolled local segments not yet copied to the remote tier.",
        Needs.NOTHING,
        Kind.GAUGE,
    ),
    _btm(
        "kafka_server_remote_log_size_bytes",
        "RemoteLogSizeBytes",
        "Bytes held in the remote tier.",
        Needs.REMOTE_COPY,
        Kind.GAUGE,
    ),
    _value(
        "kafka_log_remote_manager_tasks_avg_idle_ratio",
        "kafka.log.remote:type=RemoteLogManager,name=RemoteLogManagerTasksAvgIdlePercent",
        "Idle fraction (0-1) of the threads copying segments to the remote tier.",
    ),
    _count(
        "kafka_log_remote_reader_fetch_total",
        "kafka.log.remote:type=RemoteLogManager,name=RemoteLogReaderFetchRateAndTimeMs",
        "Reads from the remote tier by the remote log reader threads.",
        needs=Needs.REMOTE_FETCH,
    ),
    _percentiles(
        "kafka_log_remote_reader_fetch_time_ms",
        "kafka.log.remote:type=RemoteLogManager,name=RemoteLogReaderFetchRateAndTimeMs",
        "Remote read time percentiles, ms.",
    ),
    _value(
        "kafka_storage_remote_thread_pool_reader_task_queue_size",
        "org.apache.kafka.storage.internals.log:type=RemoteStorageThreadPool,name=RemoteLogReaderTaskQueueSize",
        "Remote reads waiting for a remote log reader thread.",
    ),
    _value(
        "kafka_storage_remote_thread_pool_reader_avg_idle_ratio",
        "org.apache.kafka.storage.internals.log:type=RemoteStorageThreadPool,name=RemoteLogReaderAvgIdlePercent",
        "Idle fraction (0-1) of the remote log reader threads.",
    ),
    # ---- per client: Kafka's quota sensors (they exist once any client quota is set) ----
    Series(
        CLIENT_REQUEST_TIME_SERIES,
        Kind.GAUGE,
        "kafka.server:type=Request[,user=U][,client-id=C]",
        "request-time",
        "Network and request handler thread time the client's requests used, in percent of one "
        "thread (100 = one thread all the time): the time from a handler taking the request to its "
        "local completion, plus the network thread's time reading it and sending the response; "
        "a Rate over the quota window (11 x 1 s). No request count: see docs/diagnose.md.",
        labels=("user", "client_id"),
        optional_labels=("user", "client_id"),
        needs=Needs.QUOTA,
    ),
    Series(
        CLIENT_BYTE_RATE_SERIES,
        Kind.GAUGE,
        "kafka.server:type=Produce|Fetch[,user=U][,client-id=C]",
        "byte-rate",
        "Bytes per second of the client's produce requests (whole request size, quota=Produce) or "
        "fetch responses (quota=Fetch), a Rate over the quota window.",
        labels=("quota", "user", "client_id"),
        optional_labels=("user", "client_id"),
        needs=Needs.QUOTA,
    ),
    Series(
        "kafka_server_client_throttle_time_ms",
        Kind.GAUGE,
        "kafka.server:type=Produce|Fetch|Request[,user=U][,client-id=C]",
        "throttle-time",
        "Mean throttle time (ms) of the client's throttled responses, by quota; NaN while never "
        "throttled (recorded only when a quota was exceeded).",
        labels=("quota", "user", "client_id"),
        optional_labels=("user", "client_id"),
        needs=Needs.QUOTA,
    ),
    # ---- the broker's release ----
    Series(
        "kafka_server_app_version",
        Kind.GAUGE,
        "kafka.server:type=app-info,id=N",
        "Version",
        "Always 1; the label `version` is the broker's Kafka release (a String attribute turned into "
        "a label). `kbt target check` reports it.",
        labels=("version",),
    ),
    # ---- process ----
    Series(
        "process_cpu_seconds_total",
        Kind.COUNTER,
        "(jmx agent process collector, /proc)",
        "-",
        "CPU seconds used by the broker JVM: rate(...) is the number of cores it keeps busy.",
        needs=Needs.PRODUCE,
        from_rules=False,
    ),
)


class ClientKind(StrEnum):
    COUNTER = "counter"
    GAUGE = "gauge"
    HISTOGRAM = "histogram"


@dataclass(frozen=True)
class ClientSeries:
    """A series kbt's own load exporters serve (job kbt-client): base units (seconds, bytes),
    counters for counts, a histogram for delivery latency."""

    name: str  # as scraped: counters end in _total; a histogram's _bucket/_sum/_count follow it
    kind: ClientKind
    labels: tuple[str, ...]
    meaning: str
    engines: str = "librdkafka, java"  # which exporters serve it


PRODUCER_LABELS = ("run", "producer", "client")
CONSUMER_LABELS = ("run", "group", "mode")


def _producer(
    name: str, kind: ClientKind, meaning: str, *labels: str, engines: str = "librdkafka, java"
) -> ClientSeries:
    """A producer engine's series: PRODUCER_LABELS, then `labels`."""
    return ClientSeries(name, kind, (*PRODUCER_LABELS, *labels), meaning, engines)


def _consumer(name: str, kind: ClientKind, meaning: str, *labels: str) -> ClientSeries:
    """A stress consumer's series: CONSUMER_LABELS, then `labels`."""
    return ClientSeries(name, kind, (*CONSUMER_LABELS, *labels), meaning, "stress consumers")


CLIENT_SERIES: tuple[ClientSeries, ...] = (
    _producer(
        "kbt_client_produce_requests_total",
        ClientKind.COUNTER,
        "Produce requests sent, per broker (Java: produce responses per broker; acks=0: every "
        'request, broker="").',
        "broker",
    ),
    _producer("kbt_client_records_acked_total", ClientKind.COUNTER, "Records the brokers acked."),
    _producer(
        "kbt_client_bytes_acked_total", ClientKind.COUNTER, "Payload bytes (record values) the brokers acked."
    ),
    _producer(
        "kbt_client_offered_records_total",
        ClientKind.COUNTER,
        "Records the load schedule offered (warm-up included).",
    ),
    _producer("kbt_client_delivery_errors_total", ClientKind.COUNTER, "Failed deliveries."),
    _producer(
        "kbt_client_records_per_request",
        ClientKind.GAUGE,
        "Records per produce request, last statistics window (Java records-per-request-avg).",
    ),
    _producer(
        "kbt_client_batch_bytes",
        ClientKind.GAUGE,
        "Bytes per partition batch on the wire, last statistics window (Java batch-size-avg).",
    ),
    _producer(
        "kbt_client_compression_ratio",
        ClientKind.GAUGE,
        "Uncompressed over compressed batch bytes (1 / compression-rate-avg).",
        engines="java",
    ),
    _producer(
        "kbt_client_queue_latency_seconds",
        ClientKind.GAUGE,
        "Time records waited in the producer queue, quantile 0.5 / 0.99 of the client's last "
        "statistics window (librdkafka int_latency; Java queue-time per batch).",
        "quantile",
    ),
    _producer(
        "kbt_client_queue_latency_avg_seconds",
        ClientKind.GAUGE,
        "Java record-queue-time-avg.",
        engines="java",
    ),
    _producer(
        "kbt_client_rtt_seconds",
        ClientKind.GAUGE,
        "Produce round trip per broker, quantile 0.5 / 0.99 of the client's last statistics window.",
        "broker",
        "quantile",
    ),
    _producer(
        "kbt_client_requests_total",
        ClientKind.COUNTER,
        "Requests of every kind sent (Java request-total).",
        engines="java",
    ),
    _producer(
        "kbt_client_produce_throttle_time_avg_seconds",
        ClientKind.GAUGE,
        "Broker quota throttle per produce response (Java produce-throttle-time-avg).",
        engines="java",
    ),
    _producer(
        "kbt_client_produce_throttle_time_max_seconds",
        ClientKind.GAUGE,
        "Longest broker quota throttle a response asked for, last statistics window.",
    ),
    _producer(
        "kbt_client_delivery_latency_seconds",
        ClientKind.HISTOGRAM,
        'From the intended send time to the ack, per engine process (producer="process-N"): '
        "aggregate across producers with sum by (le).",
    ),
    _consumer("kbt_consumer_records_total", ClientKind.COUNTER, "Records consumed.", "consumer"),
    _consumer("kbt_consumer_bytes_total", ClientKind.COUNTER, "Value bytes consumed.", "consumer"),
    _consumer("kbt_consumer_lag_records", ClientKind.GAUGE, "Records behind the high watermark.", "consumer"),
    _consumer(
        "kbt_consumer_e2e_latency_seconds",
        ClientKind.GAUGE,
        "Record timestamp to consumption over the last few seconds, quantile 0.5 / 0.99.",
        "quantile",
    ),
    _consumer("kbt_consumer_data_age_seconds", ClientKind.GAUGE, "Age of the records read last."),
    _consumer("kbt_consumer_lagging_active", ClientKind.GAUGE, "1 while lagging readers read."),
    _consumer(
        "kbt_consumer_rewinds_total", ClientKind.COUNTER, "A lagging reader caught up and went back lag_s."
    ),
)


def series(name: str) -> Series:
    return _BY_NAME[name]


_BY_NAME = {s.name: s for s in SERIES}
