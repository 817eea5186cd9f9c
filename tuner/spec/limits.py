"""Limits a spec is checked against before any broker is touched."""

from __future__ import annotations

# Kafka broker default `message.max.bytes` (1 MiB + record batch overhead); a topic may raise it
# with the `max.message.bytes` topic config.
BROKER_MESSAGE_MAX_BYTES = 1_048_588
TOPIC_MAX_MESSAGE_BYTES_KEY = "max.message.bytes"
MIN_INSYNC_REPLICAS_KEY = "min.insync.replicas"

# librdkafka's default `message.timeout.ms` (alias `delivery.timeout.ms`): a record not delivered
# within it fails; `linger.ms` must stay below it.
DEFAULT_MESSAGE_TIMEOUT_MS = 300_000
MESSAGE_TIMEOUT_KEYS = ("message.timeout.ms", "delivery.timeout.ms")

# More partitions than this on one topic is almost surely a typo for a local lab (each partition
# costs open files and memory on every replica).
MAX_PARTITIONS = 1000

# Producers and processes the local driver will host.
MAX_PRODUCERS = 512
MAX_PROCESSES = 64

# Kafka's own limit on a topic name, and the characters it allows.
TOPIC_NAME_PATTERN = r"^[A-Za-z0-9._-]{1,200}$"

# The slowest offered rate and the shortest run a spec may ask for: below them a run measures
# nothing (1e-300 msgs/s sends no record; a 1 ns run has no scrape in it).
MIN_RATE_PER_PRODUCER = 0.01
MIN_DURATION_S = 1.0

# keys.pattern: a regex matched against every event, compiled by RE2 (linear in the event's length:
# no backreferences or lookaround), and no longer than this.
KEY_PATTERN_MAX_CHARS = 512
