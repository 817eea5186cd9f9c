"""The names of the broker series other modules spell out (queries, presence checks, the
meter-settle wait): one spelling each. The whole catalog, with meanings, is tuner.measure.catalog."""

from __future__ import annotations

BROKER_JOB = "kafka-broker"
NETWORK_IDLE_SERIES = "kafka_network_processor_avg_idle_ratio"  # NetworkProcessorAvgIdlePercent
NETWORK_THREAD_IDLE_SERIES = "kafka_network_processor_idle_ratio"  # per network thread
REQUESTS_SERIES = "kafka_network_requests_total"  # RequestsPerSec{request}: once per request
TOPIC_PRODUCE_REQUESTS_SERIES = "kafka_server_produce_requests_total"  # once per partition batch
BROKER_START_SERIES = "process_start_time_seconds"  # the jmx agent's process collector: JVM start
# Kafka's per-client quota sensors (present once any client quota is set)
CLIENT_REQUEST_TIME_SERIES = "kafka_server_client_request_time_percent"  # type=Request request-time
CLIENT_BYTE_RATE_SERIES = "kafka_server_client_byte_rate"  # type=Produce|Fetch byte-rate
