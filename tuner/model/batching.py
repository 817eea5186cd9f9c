"""Request-forming rules for the model: each client kind maps a profile onto one rule shape
(tuner/spec/clients/rules.py); this module adds what the simulator needs on top."""

from __future__ import annotations

from tuner.spec.clients import kind_of
from tuner.spec.clients.rules import (
    FilebeatRules,
    JavaRules,
    LibrdkafkaRules,
    Partitioning,
    PartitionMode,
    Rules,
)
from tuner.spec.profile import ClientProfile

# Per-record framing inside a v2 record batch (varints, attributes, offsets) and the batch header.
RECORD_OVERHEAD_BYTES = 12
BATCH_HEADER_BYTES = 61
# Sarama's in-flight window (Net.MaxOpenRequests 5, Filebeat does not expose it) plus the one set
# the sending goroutine holds while it waits for a slot.
SARAMA_SLOTS = 6

__all__ = ["FilebeatRules", "JavaRules", "LibrdkafkaRules", "PartitionMode", "Partitioning", "Rules"]


def rules_for(profile: ClientProfile) -> Rules:
    """The request-forming rules `profile` stands for, from its kind."""
    return kind_of(profile).rules(profile)


def batch_cap(rules: LibrdkafkaRules, message_bytes: float) -> int:
    """Most messages one librdkafka partition batch holds: batch.num.messages, or as many as fit
    batch.size (uncompressed, with record framing)."""
    fit = int((rules.batch_bytes - BATCH_HEADER_BYTES) // (message_bytes + RECORD_OVERHEAD_BYTES))
    return max(1, min(rules.batch_messages, fit))
