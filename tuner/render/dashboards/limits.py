"""The limits the dashboards draw and the alert rules fire on: one number, one place.

Change a value here and `make generate` moves the dashboard threshold lines and the alert rules
together (the promtool unit tests in exporters/prometheus/ pin the alert behaviour at these values).
"""

from __future__ import annotations

# NetworkProcessorAvgIdlePercent: Qunar's log cluster bottlenecked below 0.3 and ran below 0.4 at peak.
NETWORK_IDLE_CRITICAL = 0.3
NETWORK_IDLE_WARNING = 0.5
# RequestHandlerAvgIdlePercent: the same bands (handlers below 0.3 idle queue requests up).
HANDLER_IDLE_CRITICAL = 0.3
HANDLER_IDLE_WARNING = 0.5
# queued.max.requests (Kafka default 500): network threads stop reading sockets when the request
# queue is full. "Near the limit" is this fraction of it.
QUEUED_MAX_REQUESTS = 500
REQUEST_QUEUE_NEAR_FRACTION = 0.8
# Broker-side produce latency objective, TotalTimeMs p99.9, ms.
PRODUCE_P999_SLO_MS = 500.0
# Producer-side delivery latency objective (intended send -> ack), p99, ms; `kbt stress` gates
# (p99_ms) usually use the same figure.
DELIVERY_P99_SLO_MS = 1500.0
# Real-time consumers: record timestamp -> consumption, p99, ms.
E2E_P99_SLO_MS = 1500.0
# Tiny produce requests: below this many bytes per request while a broker takes more than
# BUSY_PRODUCE_REQUESTS_PER_S requests a second (batches of >= 4-16 KB keep request counts sane).
TINY_PRODUCE_REQUEST_BYTES = 4096
BUSY_PRODUCE_REQUESTS_PER_S = 1000.0
# Log flush time p99: a spike is above FLUSH_SPIKE_MIN_MS and FLUSH_SPIKE_FACTOR x its hourly mean.
FLUSH_SPIKE_MIN_MS = 100.0
FLUSH_SPIKE_FACTOR = 3.0
# Remote copy lag: growing for the alert's `for` window while above this floor (a few segments).
REMOTE_COPY_LAG_FLOOR_BYTES = 256 * 1024 * 1024
