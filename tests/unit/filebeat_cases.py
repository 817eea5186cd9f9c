"""Filebeat profiles shared by the unit and e2e tiers: one good profile, and malformed edits of it,
each with the part of the one-line message `kbt check filebeat` must print."""

from __future__ import annotations

GOOD = """\
# a tuned profile
output.kafka:
  hosts: "${KAFKA_HOSTS}"
  topic: logs
  bulk_max_size: 4096
  bulk_flush_frequency: 500ms
  compression: snappy
  partition.round_robin:
    group_events: 256
    reachable_only: false
  username: ${KAFKA_USER}
  password: ${KAFKA_PASSWORD}
  sasl.mechanism: SCRAM-SHA-512
queue.mem:
  events: 16384
  flush.min_events: 4096
  flush.timeout: 1s
"""


# Each malformed profile: (description, edit of GOOD, expected part of the one-line message).
MALFORMED = [
    (
        "typo",
        ("bulk_max_size", "bulk_max_sze"),
        ':5: output.kafka.bulk_max_sze: unknown option (did you mean "output.kafka.bulk_max_size"?)',
    ),
    (
        "queue typo",
        ("flush.min_events", "flush_min_events"),
        ':16: queue.mem.flush_min_events: unknown option (did you mean "queue.mem.flush.min_events"?)',
    ),
    (
        "zstd",
        ("snappy", "zstd"),
        ':7: output.kafka.compression: unknown value "zstd" (expected one of none, gzip, lz4, snappy)',
    ),
    (
        "acks",
        ("topic: logs", "topic: logs\n  required_acks: 2"),
        ':5: output.kafka.required_acks: unknown value "2" (expected one of -1, 0, 1)',
    ),
    (
        "literal password",
        ("${KAFKA_PASSWORD}", "hunter2"),
        ":12: output.kafka.password: literal credentials are not allowed",
    ),
    (
        "literal username",
        ("${KAFKA_USER}", "admin"),
        ":11: output.kafka.username: literal credentials are not allowed",
    ),
    (
        "default secret",
        ("${KAFKA_PASSWORD}", "${KAFKA_PASSWORD:hunter2}"),
        ":12: output.kafka.password: literal credentials are not allowed",
    ),
    (
        "bad duration",
        ("500ms", "soon"),
        ":6: output.kafka.bulk_flush_frequency: must be a duration like 500ms, 1s or 2m (got 'soon')",
    ),
    (
        "two partitioners",
        ("partition.round_robin:", "partition.random: {}\n  partition.round_robin:"),
        ":8: output.kafka.partition: choose one partition strategy (got random, round_robin)",
    ),
    (
        "min_events > events",
        ("events: 16384", "events: 1024"),
        ":16: queue.mem.flush.min_events: 4096 must not exceed events (1024)",
    ),
    (
        "gzip level",
        ("compression: snappy", "compression: gzip\n  compression_level: 12"),
        ":8: output.kafka.compression_level: must be between 0 and 9 for gzip (got 12)",
    ),
    (
        "top-level typo",
        ("queue.mem:", "queue.mme:"),
        ':14: queue.mme: unknown option (did you mean "queue.mem"?)',
    ),
    (
        "other output",
        ("output.kafka:", "output.elasticsearch:"),
        ":2: output.elasticsearch: only output.kafka is supported",
    ),
    (
        "negative bulk",
        ("bulk_max_size: 4096", "bulk_max_size: -1"),
        ":5: output.kafka.bulk_max_size: must be greater than or equal to 0 (got -1)",
    ),
    (
        "not a number",
        ("bulk_max_size: 4096", "bulk_max_size: lots"),
        ":5: output.kafka.bulk_max_size: must be a whole number such as 12, in ASCII digits (got 'lots')",
    ),
    ("no topic", ("  topic: logs\n", ""), ":2: output.kafka.topic: either topic or topics must be set"),
    ("bad host", ('"${KAFKA_HOSTS}"', '["kafka1"]'), ':3: output.kafka.hosts: "kafka1" is not host:port'),
    (
        "brokers variable in a list",
        ('"${KAFKA_HOSTS}"', '["${KAFKA_HOSTS}"]'),
        ":3: output.kafka.hosts: a ${KAFKA_HOSTS} list element makes Filebeat exit when the variable"
        ' holds several brokers (h1:9092,h2:9092): write hosts: "${KAFKA_HOSTS}" (the variable alone,'
        " not in a list)",
    ),
    (
        "old version",
        ("topic: logs", "topic: logs\n  version: 3.6.0"),
        ":5: output.kafka.version: Kafka version 3.6.0 is outside the supported",
    ),
    (
        "sasl mechanism",
        ("SCRAM-SHA-512", "SCRAM-SHA-1"),
        ':13: output.kafka.sasl.mechanism: unknown value "SCRAM-SHA-1"',
    ),
    (
        "set twice",
        ("queue.mem:", "output.kafka.topic: other\nqueue.mem:"),
        ":14: output.kafka.topic: is set twice",
    ),
    (
        "small queue",
        ("events: 16384", "events: 16"),
        ":15: queue.mem.events: must be greater than or equal to 32 (got 16)",
    ),
    (
        "sub-second timeout",
        ("topic: logs", "topic: logs\n  broker_timeout: 500ms"),
        ":5: output.kafka.broker_timeout: must be at least 1s (got 500ms)",
    ),
    (
        "group_events 0",
        ("group_events: 256", "group_events: 0"),
        ":9: output.kafka.partition.round_robin.group_events: must be greater than or equal to 1 (got 0)",
    ),
    (
        "max_retries 0",
        ("topic: logs", "topic: logs\n  max_retries: 0"),
        ":5: output.kafka.max_retries: must be -1 (retry forever)",
    ),
    (
        "inline key",
        ("topic: logs", "topic: logs\n  ssl.key: '-----BEGIN PRIVATE KEY-----'"),
        ":5: output.kafka.ssl.key: an inline private key is a literal secret",
    ),
]
