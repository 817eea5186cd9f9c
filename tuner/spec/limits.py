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
# The longest run a workload may ask for: a day (a soak longer than that is several runs).
MAX_RUN_S = 24 * 3600.0

# keys.pattern: a regex matched against every event, compiled by RE2 (linear in the event's length:
# no backreferences or lookaround), and no longer than this.
KEY_PATTERN_MAX_CHARS = 512

# Upper bounds of the numbers a user writes, far past anything a real Kafka operator asks for:
# beyond them a value is a typo, and a 2**53 rate or size would overflow the arrays and arithmetic
# built from it. Durations and latencies are bounded next to Duration (tuner.spec.duration).
MAX_RATE_PER_S = 1e9  # messages or requests per second, per producer or per cluster
MAX_BYTES_PER_S = 1e12  # a terabyte a second: past any cluster's network
MAX_KAFKA_BYTES = 2**31 - 1  # Kafka's size configs (message.max.bytes, batch.size) are Java ints
MAX_COUNT = 10**9  # counts of events, keys, retries and the like
MAX_MEMORY_BYTES = 2**40  # a terabyte: more queue than any host has
# queued.max.requests: far above any broker's setting (Kafka's default is 500); a model builds
# arrays of this size (a saved model of 2^53 asked numpy for 64 PiB).
MAX_QUEUE_CAP = 1_000_000
MAX_THREADS = 1024  # a broker's network or request handler threads
MAX_SEED = 2**32 - 1  # numpy's seed range
# One string a user writes (a name, a path, a description, an inline PEM bundle) and the entries of
# one list or mapping: far past any real spec, and they keep a hostile file's cost linear and small.
MAX_TEXT_CHARS = 1 << 20
MAX_ITEMS = 1000
MAX_COMPRESSION_LEVEL = 22  # zstd's highest level: no codec goes past it
# Consumer groups read alongside one workload (each up to 64 consumers, every one a process).
MAX_CONSUMER_GROUPS = 16
MAX_RATIO = 1e6  # a ratio of two like quantities (bytes out per byte in, a bucket's weight)
