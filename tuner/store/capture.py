"""What `kbt capture` read from a live cluster over its window: topics (admin API), records
written (the partitions' end offsets at the window's edges), each client's produce requests per
broker (the brokers' request logs) and the newest records' sizes and keys (a read-only sample).
tuner.measure.capture_read and capture_log take the figures; tuner.model.capture shapes them into
a workload and a client profile per client group.

Read back (tuner.render.capture `read_capture`, tuner.render.capture_check), a record is held to
what a capture can be, not only to each field's size: a window kbt captures (a window of 1e-300 s
made every rate past 1e300 a second) and, over it, rates no cluster reaches (tuner.core.units).
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from tuner.core.frozen import Frozen
from tuner.core.units import (
    MAX_BYTES_PER_S,
    MAX_KAFKA_BYTES,
    MAX_PARTITIONS_TOTAL,
    MAX_RATE_PER_S,
    BrokerId,
    Brokers,
    Count,
    Counted,
    Entries,
    Epoch,
    LeaderId,
    MillisSample,
    Partitions,
    SizeInt,
    Text,
)
from tuner.store.snapshot import ClusterSnapshot

CAPTURE_VERSION = 1
MIN_WINDOW_S = 5.0  # `kbt capture --window`: the shortest
MAX_WINDOW_S = 3600.0  # and the longest
# The record's window runs from the first end-offset read's answers to the last's: the reads at its
# edges stretch it past --window by seconds (a slow cluster's by minutes), never by another hour.
MAX_RECORD_WINDOW_S = 2 * MAX_WINDOW_S


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
    total_time_ms: MillisSample = Field(default_factory=list, validate_default=True)  # an array, as read back


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
    def _plausible(self) -> Self:
        # Rates are counts over the window: one of no length made them billions a second.
        if self.end <= self.start:
            raise ValueError(f"end: {self.end:g} is not after start ({self.start:g}): no window captured")
        window = self.end - self.start
        if not MIN_WINDOW_S <= window <= MAX_RECORD_WINDOW_S:
            raise ValueError(
                f"end: a window of {window:.4g} s from start to end, not one kbt captures"
                f" ({MIN_WINDOW_S:g} s to {MAX_RECORD_WINDOW_S:g} s)"
            )
        for i, row in enumerate(self.clients):
            _held(f"clients.{i}", row, window)
        requests, record_bytes = (
            sum(r.requests for r in self.clients),
            sum(r.record_bytes for r in self.clients),
        )
        _rate("clients: produce requests, all clients", requests, window, _REQUESTS)
        _rate("clients: record bytes, all clients", record_bytes, window, _BYTES)
        for i, topic in enumerate(self.topics):
            _rate(f"topics.{i}.records", topic.records, window, _RECORDS)
        _rate("topics: records, all topics", sum(t.records for t in self.topics), window, _RECORDS)
        return self

    @property
    def window_s(self) -> float:
        return self.end - self.start


_REQUESTS = (MAX_RATE_PER_S, "produce requests")
_BYTES = (MAX_BYTES_PER_S, "bytes")
_RECORDS = (MAX_RATE_PER_S, "records")
_PARTITIONS = (MAX_RATE_PER_S, "partitions")


def _rate(field: str, total: int, window: float, bound: tuple[float, str]) -> None:
    """`total` over the window, refused past the rate no cluster reaches."""
    limit, unit = bound
    if total / window > limit:
        raise ValueError(
            f"{field}: {total:,} in a {window:.4g} s window is {total / window:.3g} {unit} a second,"
            f" past any cluster's {limit:.3g}"
        )


def _held(field: str, row: ClientTraffic, window: float) -> None:
    """One client row's counts against each other and against the window."""
    _rate(f"{field}.requests", row.requests, window, _REQUESTS)
    _rate(f"{field}.record_bytes", row.record_bytes, window, _BYTES)
    _rate(f"{field}.partitions", row.partitions, window, _PARTITIONS)
    if row.record_bytes > row.requests * MAX_KAFKA_BYTES:
        raise ValueError(
            f"{field}.record_bytes: {row.record_bytes:,} in {row.requests:,} requests, past"
            f" {MAX_KAFKA_BYTES:,} bytes a request"
        )
    if row.partitions > row.requests * MAX_PARTITIONS_TOTAL:
        raise ValueError(
            f"{field}.partitions: {row.partitions:,} in {row.requests:,} requests, past"
            f" {MAX_PARTITIONS_TOTAL:,} partitions a request"
        )
    for what, count in (("connections", row.connections), ("acks", sum(row.acks.values()))):
        if count > row.requests:
            raise ValueError(
                f"{field}.{what}: {count:,} against {row.requests:,} requests (each counted from a request)"
            )
