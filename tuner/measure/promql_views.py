"""Named PromQL beyond one-series-per-broker: breakdowns and the client/consumer series.

Part of the one catalog (`tuner.measure.promql.query(name)` finds these too), kept apart because
they do not share QUERIES' shape: a QUERIES entry returns one series per broker on an idle lab,
while these group by request, phase, topic, producer or consumer group, and most need traffic.

- BREAKDOWN_QUERIES: broker series grouped by request type, request phase or topic.
- CLIENT_QUERIES: the drivers' own series, scraped as job kbt-client. kbt_client_* come from the
  producer engines (tuner/driver/client_exporter.py for librdkafka, the Java engine's
  ClientExporter.java for client="java": labels run, producer, client; broker on the request and
  round-trip series). kbt_consumer_* come from the stress engine's consumers (labels
  run, group, mode = realtime|lagging; consumer per member); docs/dashboards.md states that contract.
"""

from __future__ import annotations

from tuner.measure.promql_query import RATE_INTERVAL, Query
from tuner.measure.series_names import REQUESTS_SERIES

PHASE_BREAKDOWN = "request_queue|local|remote|response_queue|response_send"


def _rate_by(by: str, selector: str) -> str:
    return f"sum by ({by})(rate({selector}[{RATE_INTERVAL}]))"


def _phases(request: str) -> str:
    sel = f'kafka_network_request_time_ms{{request="{request}",quantile="0.999",phase=~"{PHASE_BREAKDOWN}"}}'
    return f"max by (phase)({sel})"


BREAKDOWN_QUERIES: tuple[Query, ...] = (
    Query(
        "REQUESTS_RATE_BY_TYPE",
        _rate_by("request", REQUESTS_SERIES),
        "req/s",
        "Requests per second by API (Produce, Fetch, Metadata, ...), all versions.",
    ),
    Query(
        "PRODUCE_REQUESTS_RATE_BY_TOPIC",
        _rate_by("topic", 'kafka_server_produce_requests_total{topic!=""}'),
        "appends/s",
        "Partition batches of each topic appended per second (TotalProduceRequests{topic}: once per"
        " partition a produce request carries, not once per request).",
    ),
    Query(
        "FETCH_REQUESTS_RATE_BY_TOPIC",
        _rate_by("topic", 'kafka_server_fetch_requests_total{topic!=""}'),
        "req/s",
        "Fetch requests per second that asked for each topic (consumers and followers).",
    ),
    Query(
        "BYTES_IN_RATE_BY_TOPIC",
        _rate_by("topic", 'kafka_server_bytes_in_total{topic!=""}'),
        "B/s",
        "Bytes produced per second by topic (after compression).",
    ),
    Query(
        "PRODUCE_PHASES_P999_MS",
        _phases("Produce"),
        "ms",
        "Produce time p99.9 by phase: request_queue (waiting for a handler), local (log append), remote "
        "(waiting for replicas), response_queue (waiting for a network thread), response_send.",
    ),
    Query(
        "FETCH_CONSUMER_PHASES_P999_MS",
        _phases("FetchConsumer"),
        "ms",
        "Consumer fetch time p99.9 by phase (remote: the fetch waited in purgatory for data).",
    ),
    Query(
        "FETCH_FOLLOWER_PHASES_P999_MS",
        _phases("FetchFollower"),
        "ms",
        "Follower fetch time p99.9 by phase (remote: the fetch waited in purgatory for data).",
    ),
    Query(
        "REMOTE_COPY_BYTES_RATE_BY_TOPIC",
        _rate_by("topic", 'kafka_server_remote_copy_bytes_total{topic!=""}'),
        "B/s",
        "Bytes copied to the remote tier per second by topic.",
    ),
    Query(
        "REMOTE_FETCH_BYTES_RATE_BY_TOPIC",
        _rate_by("topic", 'kafka_server_remote_fetch_bytes_total{topic!=""}'),
        "B/s",
        "Bytes read from the remote tier per second by topic.",
    ),
    Query(
        "REMOTE_COPY_LAG_BYTES_BY_TOPIC",
        'sum by (topic)(kafka_server_remote_copy_lag_bytes{topic!=""})',
        "B",
        "Bytes in rolled segments not yet copied to the remote tier, by topic (over the brokers).",
    ),
    Query(
        "REMOTE_LOG_SIZE_BYTES_BY_TOPIC",
        'sum by (topic)(kafka_server_remote_log_size_bytes{topic!=""})',
        "B",
        "Bytes held in the remote tier by topic (over the brokers leading its partitions).",
    ),
)

_PRODUCER = "run, producer"
_CLIENT_BYTES = _rate_by(_PRODUCER, "kbt_client_bytes_acked_total")
_CLIENT_RECORDS = _rate_by(_PRODUCER, "kbt_client_records_acked_total")
_CLIENT_PER_REQUEST = f"avg by ({_PRODUCER})(kbt_client_records_per_request)"
_CLIENT_BATCH_BYTES = f"avg by ({_PRODUCER})(kbt_client_batch_bytes)"
# A client that measures its compression itself (Java: per partition batch) exports the ratio; for
# the others it is derived, which needs one batch per request (librdkafka).
_CLIENT_COMPRESSION = f"avg by ({_PRODUCER})(kbt_client_compression_ratio)"


def _client_quantile_ms(name: str, by: str, q: str) -> str:
    """A quantile a client computes itself (a gauge in seconds), in milliseconds."""
    return f'max by ({by})({name}{{quantile="{q}"}}) * 1000'


def _delivery_quantile_ms(by: str, q: str) -> str:
    """A quantile of the delivery latency histogram over the rate window, per producer (the engine
    process), worst of `by`, in milliseconds."""
    buckets = f"sum by ({_PRODUCER}, le)(rate(kbt_client_delivery_latency_seconds_bucket[{RATE_INTERVAL}]))"
    return f"max by ({by})(histogram_quantile({q}, {buckets})) * 1000"


CLIENT_QUERIES: tuple[Query, ...] = (
    Query(
        "CLIENT_PRODUCE_REQUESTS_RATE",
        _rate_by(_PRODUCER, "kbt_client_produce_requests_total"),
        "req/s",
        "Produce requests per second each producer sent (the client's own counts, all brokers).",
    ),
    Query(
        "CLIENT_PRODUCE_REQUESTS_RATE_BY_BROKER",
        _rate_by("broker", "kbt_client_produce_requests_total"),
        "req/s",
        "Produce requests per second the producers sent to each broker: the client side of "
        "PRODUCE_REQUESTS_RATE.",
    ),
    Query("CLIENT_RECORDS_RATE", _CLIENT_RECORDS, "records/s", "Records per second acked, per producer."),
    Query(
        "CLIENT_RECORDS_PER_REQUEST",
        _CLIENT_PER_REQUEST,
        "records",
        "Records per produce request, last statistics window (librdkafka: one partition batch per "
        "request; Java: a request carries a batch of every partition the broker leads).",
    ),
    Query(
        "CLIENT_BATCH_BYTES",
        _CLIENT_BATCH_BYTES,
        "B",
        "Bytes per partition batch on the wire (after compression, with record framing), last "
        "statistics window.",
    ),
    Query(
        "CLIENT_COMPRESSION_RATIO",
        f"{_CLIENT_COMPRESSION} or "
        f"({_CLIENT_BYTES} / {_CLIENT_RECORDS}) * {_CLIENT_PER_REQUEST} / {_CLIENT_BATCH_BYTES}",
        "x",
        "Uncompressed over compressed bytes per batch: the client's own figure where it exports one "
        "(Java), else payload bytes per batch over wire bytes per batch (framing counted on the wire "
        "side, so an uncompressed producer of small records reads a little below 1).",
    ),
    Query(
        "CLIENT_QUEUE_LATENCY_P99_MS",
        _client_quantile_ms("kbt_client_queue_latency_seconds", _PRODUCER, "0.99"),
        "ms",
        "Time records waited in the producer queue before a request took them, p99 (librdkafka "
        "int_latency; Java: a batch's first record, queue-time): linger shows here.",
    ),
    Query(
        "CLIENT_RTT_P99_MS",
        _client_quantile_ms("kbt_client_rtt_seconds", _PRODUCER, "0.99"),
        "ms",
        "Produce request round trip as the producer sees it, p99 (worst broker).",
    ),
    Query(
        "CLIENT_DELIVERY_P99_MS",
        _delivery_quantile_ms(_PRODUCER, "0.99"),
        "ms",
        "From the intended send time to the ack, p99 over the rate window of the delivery histogram "
        "(open loop: includes time behind schedule). The sweep engine reports it per driver process "
        '(producer="process-N").',
    ),
    Query(
        "CLIENT_PRODUCE_THROTTLE_MAX_MS",
        f"max by ({_PRODUCER})(kbt_client_produce_throttle_time_max_seconds) * 1000",
        "ms",
        "Longest broker quota throttle a response asked for (librdkafka throttle, Java "
        "produce-throttle-time-max), last statistics window: above 0 the cluster's quotas slow the "
        "producer down.",
    ),
    Query(
        "CLIENT_DELIVERY_ERRORS_RATE",
        _rate_by(_PRODUCER, "kbt_client_delivery_errors_total"),
        "err/s",
        "Failed deliveries per second, per producer.",
    ),
    Query(
        "OFFERED_RECORDS_RATE",
        _rate_by("run", "kbt_client_offered_records_total"),
        "records/s",
        "Records per second the load schedule offered, per run.",
    ),
    Query(
        "ACKED_RECORDS_RATE",
        _rate_by("run", "kbt_client_records_acked_total"),
        "records/s",
        "Records per second the brokers acked, per run: below OFFERED_RECORDS_RATE the cluster falls behind.",
    ),
    Query(
        "DELIVERY_P99_MS_WORST",
        _delivery_quantile_ms("run", "0.99"),
        "ms",
        "Delivery latency p99 of the slowest producer, per run.",
    ),
    Query(
        "CONSUMER_RECORDS_RATE",
        _rate_by("run, group, mode", "kbt_consumer_records_total"),
        "records/s",
        "Records per second consumed, per consumer group.",
    ),
    Query(
        "CONSUMER_LAG_REALTIME",
        'sum by (run, group)(kbt_consumer_lag_records{mode="realtime"})',
        "records",
        "Records the real-time groups are behind the high watermark (sum over members).",
    ),
    Query(
        "CONSUMER_LAG_LAGGING",
        'sum by (run, group)(kbt_consumer_lag_records{mode="lagging"})',
        "records",
        "Records the lagging (replay) groups are behind the high watermark (sum over members).",
    ),
    Query(
        "CONSUMER_E2E_P99_MS",
        'max by (run, group)(kbt_consumer_e2e_latency_seconds{mode="realtime",quantile="0.99"}) * 1000',
        "ms",
        "Record timestamp to consumption, p99, real-time groups.",
    ),
    Query(
        "CONSUMER_DATA_AGE_S",
        'max by (run, group)(kbt_consumer_data_age_seconds{mode="lagging"})',
        "s",
        "Age of the records the lagging groups read last (minutes-old data: remote tier or page cache).",
    ),
)
