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

SERIES: tuple[Series, ...] = (
    # ---- network threads and queues ----
    Series(
        "kafka_network_request_queue_size",
        Kind.GAUGE,
        "kafka.network:type=RequestChannel,name=RequestQueueSize",
        "Value",
        "Requests parsed by network threads, waiting for a request handler thread.",
    ),
    Series(
        "kafka_network_response_queue_size",
        Kind.GAUGE,
        "kafka.network:type=RequestChannel,name=ResponseQueueSize",
        "Value",
        "Responses waiting for a network thread to send them (all processors).",
    ),
    Series(
        NETWORK_IDLE_SERIES,
        Kind.GAUGE,
        "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent",
        "Value",
        "Average idle fraction (0-1) of the network threads. Below 0.3 the network threads are the "
        "bottleneck; many small produce requests drive it down.",
    ),
    Series(
        NETWORK_THREAD_IDLE_SERIES,
        Kind.GAUGE,
        "kafka.network:type=Processor,name=IdlePercent,networkProcessor=N",
        "Value",
        "Idle fraction (0-1) of one network thread.",
        labels=("network_processor",),
    ),
    # ---- request handler threads ----
    Series(
        "kafka_server_request_handler_idle_ns_total",
        Kind.COUNTER,
        "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent",
        "Count",
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
    Series(
        "kafka_log_flush_total",
        Kind.COUNTER,
        "kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs",
        "Count",
        "Log flushes (fsync of a log segment).",
        needs=Needs.FLUSH,
    ),
    Series(
        "kafka_log_flush_time_ms",
        Kind.GAUGE,
        "kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs",
        PERCENTILES,
        "Log flush time percentiles, ms (recent samples).",
        labels=("quantile",),
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
    Series(
        REQUESTS_SERIES,
        Kind.COUNTER,
        "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=R,version=V",
        "Count",
        "Requests received, by API (Produce, Fetch, Metadata, ...) and API version.",
        labels=("request", "version"),
        needs=Needs.PRODUCE,
    ),
    Series(
        "kafka_network_request_time_ms",
        Kind.GAUGE,
        "kafka.network:type=RequestMetrics,name=<Phase>TimeMs,request=R",
        PERCENTILES,
        "Request time percentiles, ms, by phase: total, request_queue (waiting for a handler), local "
        "(handler + log append), remote (waiting for replicas), throttle, response_queue, response_send. "
        f"Collected for {', '.join(TIMED_REQUESTS)}.",
        labels=("request", "phase", "quantile"),
    ),
    Series(
        "kafka_network_request_bytes",
        Kind.GAUGE,
        "kafka.network:type=RequestMetrics,name=RequestBytes,request=R",
        PERCENTILES,
        "Request size percentiles, bytes (Produce: the size of the batches a client sends).",
        labels=("request", "quantile"),
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
    Series(
        "kafka_log_remote_manager_tasks_avg_idle_ratio",
        Kind.GAUGE,
        "kafka.log.remote:type=RemoteLogManager,name=RemoteLogManagerTasksAvgIdlePercent",
        "Value",
        "Idle fraction (0-1) of the threads copying segments to the remote tier.",
    ),
    Series(
        "kafka_log_remote_reader_fetch_total",
        Kind.COUNTER,
        "kafka.log.remote:type=RemoteLogManager,name=RemoteLogReaderFetchRateAndTimeMs",
        "Count",
        "Reads from the remote tier by the remote log reader threads.",
        needs=Needs.REMOTE_FETCH,
    ),
    Series(
        "kafka_log_remote_reader_fetch_time_ms",
        Kind.GAUGE,
        "kafka.log.remote:type=RemoteLogManager,name=RemoteLogReaderFetchRateAndTimeMs",
        PERCENTILES,
        "Remote read time percentiles, ms.",
        labels=("quantile",),
    ),
    Series(
        "kafka_storage_remote_thread_pool_reader_task_queue_size",
        Kind.GAUGE,
        "org.apache.kafka.storage.internals.log:type=RemoteStorageThreadPool,name=RemoteLogReaderTaskQueueSize",
        "Value",
        "Remote reads waiting for a remote log reader thread.",
    ),
    Series(
        "kafka_storage_remote_thread_pool_reader_avg_idle_ratio",
        Kind.GAUGE,
        "org.apache.kafka.storage.internals.log:type=RemoteStorageThreadPool,name=RemoteLogReaderAvgIdlePercent",
        "Value",
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

CLIENT_SERIES: tuple[ClientSeries, ...] = (
    ClientSeries(
        "kbt_client_produce_requests_total",
        ClientKind.COUNTER,
        (*PRODUCER_LABELS, "broker"),
        "Produce requests sent, per broker (Java: produce responses per broker; acks=0: every "
        'request, broker="").',
    ),
    ClientSeries(
        "kbt_client_records_acked_total", ClientKind.COUNTER, PRODUCER_LABELS, "Records the brokers acked."
    ),
    ClientSeries(
        "kbt_client_bytes_acked_total",
        ClientKind.COUNTER,
        PRODUCER_LABELS,
        "Payload bytes (record values) the brokers acked.",
    ),
    ClientSeries(
        "kbt_client_offered_records_total",
        ClientKind.COUNTER,
        PRODUCER_LABELS,
        "Records the load schedule offered (warm-up included).",
    ),
    ClientSeries(
        "kbt_client_delivery_errors_total", ClientKind.COUNTER, PRODUCER_LABELS, "Failed deliveries."
    ),
    ClientSeries(
        "kbt_client_records_per_request",
        ClientKind.GAUGE,
        PRODUCER_LABELS,
        "Records per produce request, last statistics window (Java records-per-request-avg).",
    ),
    ClientSeries(
        "kbt_client_batch_bytes",
        ClientKind.GAUGE,
        PRODUCER_LABELS,
        "Bytes per partition batch on the wire, last statistics window (Java batch-size-avg).",
    ),
    ClientSeries(
        "kbt_client_compression_ratio",
        ClientKind.GAUGE,
        PRODUCER_LABELS,
        "Uncompressed over compressed batch bytes (1 / compression-rate-avg).",
        engines="java",
    ),
    ClientSeries(
        "kbt_client_queue_latency_seconds",
        ClientKind.GAUGE,
        (*PRODUCER_LABELS, "quantile"),
        "Time records waited in the producer queue, quantile 0.5 / 0.99 of the client's last "
        "statistics window (librdkafka int_latency; Java queue-time per batch).",
    ),
    ClientSeries(
        "kbt_client_queue_latency_avg_seconds",
        ClientKind.GAUGE,
        PRODUCER_LABELS,
        "Java record-queue-time-avg.",
        engines="java",
    ),
    ClientSeries(
        "kbt_client_rtt_seconds",
        ClientKind.GAUGE,
        (*PRODUCER_LABELS, "broker", "quantile"),
        "Produce round trip per broker, quantile 0.5 / 0.99 of the client's last statistics window.",
    ),
    ClientSeries(
        "kbt_client_requests_total",
        ClientKind.COUNTER,
        PRODUCER_LABELS,
        "Requests of every kind sent (Java request-total).",
        engines="java",
    ),
    ClientSeries(
        "kbt_client_produce_throttle_time_avg_seconds",
        ClientKind.GAUGE,
        PRODUCER_LABELS,
        "Broker quota throttle per produce response (Java produce-throttle-time-avg).",
        engines="java",
    ),
    ClientSeries(
        "kbt_client_produce_throttle_time_max_seconds",
        ClientKind.GAUGE,
        PRODUCER_LABELS,
        "Longest broker quota throttle a response asked for, last statistics window.",
    ),
    ClientSeries(
        "kbt_client_delivery_latency_seconds",
        ClientKind.HISTOGRAM,
        PRODUCER_LABELS,
        'From the intended send time to the ack, per engine process (producer="process-N"): '
        "aggregate across producers with sum by (le).",
    ),
    ClientSeries(
        "kbt_consumer_records_total",
        ClientKind.COUNTER,
        (*CONSUMER_LABELS, "consumer"),
        "Records consumed.",
        engines="stress consumers",
    ),
    ClientSeries(
        "kbt_consumer_bytes_total",
        ClientKind.COUNTER,
        (*CONSUMER_LABELS, "consumer"),
        "Value bytes consumed.",
        engines="stress consumers",
    ),
    ClientSeries(
        "kbt_consumer_lag_records",
        ClientKind.GAUGE,
        (*CONSUMER_LABELS, "consumer"),
        "Records behind the high watermark.",
        engines="stress consumers",
    ),
    ClientSeries(
        "kbt_consumer_e2e_latency_seconds",
        ClientKind.GAUGE,
        (*CONSUMER_LABELS, "quantile"),
        "Record timestamp to consumption over the last few seconds, quantile 0.5 / 0.99.",
        engines="stress consumers",
    ),
    ClientSeries(
        "kbt_consumer_data_age_seconds",
        ClientKind.GAUGE,
        CONSUMER_LABELS,
        "Age of the records read last.",
        engines="stress consumers",
    ),
    ClientSeries(
        "kbt_consumer_lagging_active",
        ClientKind.GAUGE,
        CONSUMER_LABELS,
        "1 while lagging readers read.",
        engines="stress consumers",
    ),
    ClientSeries(
        "kbt_consumer_rewinds_total",
        ClientKind.COUNTER,
        CONSUMER_LABELS,
        "A lagging reader caught up and went back lag_s.",
        engines="stress consumers",
    ),
)


def series(name: str) -> Series:
    for s in SERIES:
        if s.name == name:
            return s
    raise KeyError(name)
