"""Limits a spec is checked against before any broker is touched."""

from __future__ import annotations

# Bounds by unit have one home (tuner.core.units), shared with the documents kbt reads back;
# the specs import them from here.
from tuner.core.units import (  # noqa: F401
    MAX_BYTES_PER_S,
    MAX_COUNT,
    MAX_KAFKA_BYTES,
    MAX_MEMORY_BYTES,
    MAX_QUEUE_CAP,
    MAX_RATE_PER_S,
    MAX_RATIO,
    MAX_TEXT_CHARS,
    MAX_THREADS,
)

# A v2 record batch's header: baseOffset 8, length 4, leaderEpoch 4, magic 1, crc 4, attributes 2,
# lastOffsetDelta 4, firstTimestamp 8, maxTimestamp 8, producerId 8, producerEpoch 2, baseSequence 4,
# records count 4; and a record's framing beside its key and value (length, attributes, timestamp and
# offset deltas, key and value lengths, header count: varints of a few bytes each).
BATCH_HEADER_BYTES = 61
RECORD_OVERHEAD_BYTES = 12

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

# Upper bounds of the numbers a user writes (the unit bounds imported above, and these), far past
# anything a real Kafka operator asks for: beyond them a value is a typo, and a 2**53 rate or size
# would overflow the arrays and arithmetic built from it. Durations and latencies are bounded next
# to Duration (tuner.spec.duration).
MAX_SEED = 2**32 - 1  # numpy's seed range
# The entries of one list or mapping a user writes: far past any real spec, and they keep a hostile
# file's cost linear and small.
MAX_ITEMS = 1000
MAX_COMPRESSION_LEVEL = 22  # zstd's highest level: no codec goes past it
# Consumer groups read alongside one workload (each up to 64 consumers, every one a process).
MAX_CONSUMER_GROUPS = 16
