"""Request-formation model parameters: how a client turns records into produce requests.

Three shapes, one per way of forming requests (a kind maps its settings onto one of them):

    LibrdkafkaRules  one partition batch per request: a batch goes when it holds batch.num.messages
                     / batch.size, or its first message waited linger.ms.
    JavaRules        one request per broker carrying the head batch of every partition it leads,
                     sent when any of them is full or waited linger.ms.
    FilebeatRules    a harvester reading the file in bursts (every `backoff` at EOF), a queue stage
                     (batches of up to min(bulk_max_size, flush.min_events) events, waiting up to
                     flush.timeout) in front of one request per broker per flush.
    OtelcolRules     the OpenTelemetry Collector: file polls, exports, franz-go requests per broker.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

PartitionMode = Literal[
    "sticky_time", "sticky_bytes", "sticky_events", "sticky_batch", "round_robin", "random", "hash"
]


@dataclass(frozen=True)
class Partitioning:
    """How a producer picks partitions: for keyless records (`keyless`) and keyed ones (`keyed`)."""

    keyless: PartitionMode
    keyed: PartitionMode
    sticky_ms: float = 0.0  # sticky_time: how long a partition is kept
    sticky_events: int = 1  # sticky_events / round_robin: events per partition
    sticky_bytes: int = 0  # sticky_bytes: bytes per partition


@dataclass(frozen=True)
class LateTimer:
    """How late a client's linger timer fires: a batch opened at t leaves at t + linger.ms + a
    draw, lognormal around `median_ms` with log-sd `spread`. A thread's timed wait wakes after its
    deadline, so a record arriving just past linger.ms still makes the batch; on a fixed schedule
    whose interval divides the linger (200/s at 5 ms) every batch takes the record at the deadline
    (measured per kind: docs/benchmarks.md "Linger timers: the record at the deadline")."""

    median_ms: float
    spread: float
    # The share of batches whose timer fires up to 1 ms early instead (a clock of whole
    # milliseconds: Java reads System.currentTimeMillis and polls with millisecond timeouts).
    early_share: float = 0.0

    def draw_s(self, rng: random.Random) -> float:
        if self.median_ms <= 0:
            return 0.0
        if self.early_share > 0 and rng.random() < self.early_share:
            return -rng.random() / 1000
        return self.median_ms / 1000 * math.exp(self.spread * rng.gauss(0.0, 1.0))


ON_TIME = LateTimer(0.0, 0.0)  # a timer that fires at its deadline (rules built without a measured one)


@dataclass(frozen=True)
class LibrdkafkaRules:
    kind: str
    linger_ms: float
    batch_messages: int  # cap from batch.num.messages
    batch_bytes: int  # cap from batch.size and message.max.bytes
    partitioning: Partitioning
    compression: str
    linger_timer: LateTimer = ON_TIME


@dataclass(frozen=True)
class JavaRules:
    kind: str
    linger_ms: float
    batch_bytes: int
    max_request_bytes: int
    partitioning: Partitioning
    compression: str
    linger_timer: LateTimer = ON_TIME


@dataclass(frozen=True)
class FilebeatRules:
    kind: str
    queue_batch: int  # events per batch the queue hands over (bulk_max_size capped by the queue)
    queue_timeout_ms: float  # how long a queue batch may wait to fill (0 = at once)
    queue_events: int  # queue.mem.events: capacity, including events in flight
    flush_ms: float  # bulk_flush_frequency (0 = as soon as possible)
    flush_messages: int  # bulk_max_size: Sarama Flush.MaxMessages per request
    max_message_bytes: int
    partitioning: Partitioning
    compression: str
    # The harvester: at EOF it sleeps read_backoff_ms, growing by read_backoff_factor up to
    # read_max_backoff_ms while nothing new arrives, then reads all new lines at once. 0: no
    # harvester stage (the Sarama emulation: every event reaches the queue as it is written).
    read_backoff_ms: float = 0.0
    read_max_backoff_ms: float = 0.0
    read_backoff_factor: float = 1.0
    reader: str = ""  # the input type reading the file ("log", "filestream"; "": no harvester stage)
    # Produce requests in flight per broker: 1 in Filebeat 7.17 (its Sarama fork's broker bridge
    # calls Produce synchronously), Net.MaxOpenRequests 5 + 1 handed over in current Sarama.
    in_flight: int = 1
    # How fast a batch from the queue enters Sarama, per event (real Filebeat encodes each event
    # on the way; fitted, docs/benchmarks.md "Filebeat model").
    entry_spacing_s: float = 10e-6
    # Events the queue waits for before that timeout (tuner/spec/filebeat_lines.py): 7.17 fills its
    # flush.min_events buffer and hands it over in pieces of queue_batch; 8.13+ waits for one
    # batch. 0: the batch itself.
    queue_fill: int = 0
    # Sarama's cycle per broker with one request in flight: from a request's write to the moment
    # its broker producer can write the next (the broker's round trip, then the successes handed
    # back one by one and the next request built and gzip-compressed). It varies from request to
    # request: a median and the standard deviation of its logarithm (real Filebeat: measured on
    # the lab, docs/benchmarks.md "The Filebeat sync-flush path"). 0: the simulator's fixed round trip.
    cycle_s: float = 0.0
    cycle_spread: float = 0.0
    # Building a request (gzip of its events) before its write, per uncompressed event byte.
    build_s_per_byte: float = 0.0
    # The lines of one read enter the queue one after another, this far apart: the pipeline's
    # per-event cost (processors, encoding), which follows the host's speed. 0: all at once.
    harvest_spacing_s: float = 0.0

    @property
    def sync_flush(self) -> bool:
        """The queue hands events over at once (flush.timeout 0s, or min_events <= 1)."""
        return self.queue_timeout_ms <= 0


@dataclass(frozen=True)
class OtelcolRules:
    """The collector's filelog receiver -> exporter queue -> franz-go (tuner/spec/clients/otelcol.py)."""

    kind: str
    poll_ms: float  # the receiver reads each file this often
    emit_batch: int  # entries per export the receiver hands on
    emit_flush_ms: float  # a partial batch goes at the emitter's next tick
    batch_min: int  # sending_queue.batch.min_size (0: no exporter-side batching)
    batch_max: int  # sending_queue.batch.max_size (0: no limit)
    batch_timeout_ms: float  # sending_queue.batch.flush_timeout
    record_per_line: bool  # encoding raw; otherwise one Kafka record per export
    linger_ms: float
    max_message_bytes: int  # a partition batch is ready once it holds this much
    buffered_records: int  # flush_max_messages: franz-go's buffer bound
    in_flight: int  # produce requests in flight per broker
    partitioning: Partitioning
    compression: str
    # How late the exporter's batch flush timer fires on average (it restarts after each flush):
    # fitted on real runs (docs/benchmarks.md "OpenTelemetry Collector").
    timer_late_ms: float = 0.0


Rules = LibrdkafkaRules | JavaRules | FilebeatRules | OtelcolRules
