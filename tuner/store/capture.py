"""What `kbt capture` read from a live cluster over its window: topics (admin API), records
written (the partitions' end offsets at the window's edges), each client's produce requests per
broker (the brokers' request logs) and the newest records' sizes and keys (a read-only sample).
tuner.measure.capture_read and capture_log take the figures; tuner.model.capture shapes them into
a workload and a client profile per client group."""

from __future__ import annotations

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.store.snapshot import ClusterSnapshot

CAPTURE_VERSION = 1


class TopicFacts(Frozen):
    """One topic as the admin API describes it, and the records appended over the window."""

    name: str
    partitions: int
    replication_factor: int
    topic_id: str = ""  # as Kafka prints it (produce requests v13+ name topics by id)
    leaders: list[int] = Field(default_factory=list)  # leader broker id of each partition
    records: int = 0  # end offsets at the window's end less those at its start, all partitions
    partition_records: list[int] = Field(default_factory=list)  # the same, each partition


class TopicSample(Frozen):
    """The newest records of one topic, read by an assign()ed consumer (no group, no commits)."""

    topic: str
    value_bytes: list[int] = Field(default_factory=list)
    key_bytes: list[int] = Field(default_factory=list)  # of keyed records only
    keyless: int = 0
    distinct_keys: int = 0
    payloads: list[str] = Field(default_factory=list)  # only with --payloads (hex of the value)


class ClientTraffic(Frozen):
    """One client (client id, software, principal) on one broker over the window, from its request
    log: produce requests, their record-batch bytes and partition batches, acks as sent, bytes per
    topic, the connections (client address and port) it produced on, and each request's total time."""

    client_id: str
    software: str = ""
    principal: str = ""
    broker: str
    requests: int
    record_bytes: int
    partitions: int
    acks: dict[str, int] = Field(default_factory=dict)  # "-1", "0", "1" -> requests
    topic_bytes: dict[str, int] = Field(default_factory=dict)
    connections: int = 0
    total_time_ms: list[float] = Field(default_factory=list)  # a bounded sample of requests


class CaptureRecord(Frozen):
    """Everything one capture read; written as capture.json beside the specs it shaped."""

    version: int = CAPTURE_VERSION
    start: float
    end: float
    bootstrap_servers: str
    brokers: int
    broker_ids: list[int] = Field(default_factory=list)  # sorted; empty in captures made before
    topics: list[TopicFacts] = Field(default_factory=list)
    clients: list[ClientTraffic] = Field(default_factory=list)
    samples: list[TopicSample] = Field(default_factory=list)
    request_logs: list[str] = Field(default_factory=list)
    # the brokers over the same window, as `kbt diagnose` reads them, when the target has a Prometheus
    brokers_snapshot: ClusterSnapshot | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def window_s(self) -> float:
        return self.end - self.start
