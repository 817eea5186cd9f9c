"""What `kbt capture` read from a live cluster over its window: topics (admin API), records
written (the partitions' end offsets at the window's edges), each client's produce requests per
broker (the brokers' request logs) and the newest records' sizes and keys (a read-only sample).
tuner.measure.capture_read and capture_log take the figures; tuner.model.capture shapes them into
a workload and a client profile per client group."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from tuner.core.frozen import Frozen
from tuner.core.units import (
    BrokerId,
    Brokers,
    Count,
    Counted,
    Entries,
    Epoch,
    LeaderId,
    Millis,
    Partitions,
    SizeInt,
    Text,
)
from tuner.store.snapshot import ClusterSnapshot

CAPTURE_VERSION = 1


class TopicFacts(Frozen):
    """One topic as the admin API describes it, and the records appended over the window."""

    name: Text
    partitions: Partitions
    replication_factor: Brokers
    topic_id: Text = ""  # as Kafka prints it (produce requests v13+ name topics by id)
    # leader broker id of each partition
    leaders: Annotated[list[LeaderId], Entries] = Field(default_factory=list)
    records: Counted = 0  # end offsets at the window's end less those at its start, all partitions
    # the same, each partition
    partition_records: Annotated[list[Counted], Entries] = Field(default_factory=list)


class TopicSample(Frozen):
    """The newest records of one topic, read by an assign()ed consumer (no group, no commits)."""

    topic: Text
    value_bytes: Annotated[list[SizeInt], Entries] = Field(default_factory=list)
    key_bytes: Annotated[list[SizeInt], Entries] = Field(default_factory=list)  # of keyed records only
    keyless: Count = 0
    distinct_keys: Count = 0
    partitions_read: Count | None = None  # partitions that gave a record (None: a capture before it was kept)
    # only with --payloads (hex of the value)
    payloads: Annotated[list[Text], Entries] = Field(default_factory=list)


class ClientTraffic(Frozen):
    """One client (client id, software, principal) on one broker over the window, from its request
    log: produce requests, their record-batch bytes and partition batches, acks as sent, bytes per
    topic, the connections (client address and port) it produced on, and each request's total time."""

    client_id: Text
    software: Text = ""
    principal: Text = ""
    broker: Text
    requests: Counted
    record_bytes: Counted
    # partition batches over the window (a busy client's pass 10 million in minutes)
    partitions: Counted
    acks: Annotated[dict[Text, Counted], Entries] = Field(default_factory=dict)  # "-1", "0", "1" -> requests
    topic_bytes: Annotated[dict[Text, Counted], Entries] = Field(default_factory=dict)
    connections: Count = 0
    # a bounded sample of requests
    total_time_ms: Annotated[list[Millis], Entries] = Field(default_factory=list)


class CaptureRecord(Frozen):
    """Everything one capture read; written as capture.json beside the specs it shaped."""

    version: Count = CAPTURE_VERSION
    start: Epoch
    end: Epoch
    bootstrap_servers: Text
    brokers: Brokers
    # sorted; empty in captures made before
    broker_ids: Annotated[list[BrokerId], Entries] = Field(default_factory=list)
    topics: Annotated[list[TopicFacts], Entries] = Field(default_factory=list)
    clients: Annotated[list[ClientTraffic], Entries] = Field(default_factory=list)
    samples: Annotated[list[TopicSample], Entries] = Field(default_factory=list)
    request_logs: Annotated[list[Text], Entries] = Field(default_factory=list)
    # the brokers over the same window, as `kbt diagnose` reads them, when the target has a Prometheus
    brokers_snapshot: ClusterSnapshot | None = None
    notes: Annotated[list[Text], Entries] = Field(default_factory=list)

    @model_validator(mode="after")
    def _a_window(self) -> Self:
        # Rates are counts over the window: one of no length made them billions a second.
        if self.end <= self.start:
            raise ValueError(f"end: {self.end:g} is not after start ({self.start:g}): no window captured")
        return self

    @property
    def window_s(self) -> float:
        return self.end - self.start
