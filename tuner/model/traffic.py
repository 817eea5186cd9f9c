"""The offered traffic the model reasons about, taken from a WorkloadSpec and the cluster size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tuner.core.errors import BadInput
from tuner.spec.workload import GeneratedSource, LogFileSource, SizeDistributionSource, WorkloadSpec

# Keys when a workload extracts them from the events (`keys: field`): their number is unknown
# up front; this many spreads records over every partition like a high-cardinality field would.
FIELD_KEY_CARDINALITY = 10_000
# Line-by-line log replay has no nominal event size; without run records to read it from, assume
# this (Qunar's average log event was 1.62 KB).
DEFAULT_EVENT_BYTES = 1620.0

Arrivals = Literal["periodic", "poisson"]


@dataclass(frozen=True)
class Traffic:
    """`producers` independent producers, each offering `rate` msgs/s of `message_bytes` each,
    to topics with `partitions` partitions each (records alternate between topics), led by
    `brokers` brokers. Arrivals are `periodic` (kbt's drivers: a fixed schedule per producer) or
    `poisson` (independent events, like many log sources)."""

    producers: int
    rate: float
    message_bytes: float
    partitions: tuple[int, ...]
    brokers: int
    key_cardinality: int | None = None  # None: keyless
    arrivals: Arrivals = "periodic"
    # The window a busiest broker is measured over (a run's duration less its warm-up): the fewer
    # partition choices fall in it, the more unevenly they load the brokers. None: the mean share.
    window_s: float | None = None

    @property
    def total_rate(self) -> float:
        return self.producers * self.rate

    @property
    def keyless(self) -> bool:
        return self.key_cardinality is None

    def leader(self, topic: int, partition: int) -> int:
        """Kafka spreads partition leaders round-robin over the brokers (topic creation without
        explicit assignments); each topic starts at another broker."""
        return (partition + topic) % self.brokers

    def partitions_led(self, broker: int) -> int:
        # Counted per topic, not per partition: callers ask it of every broker, and brokers times
        # partitions of a record's figures would be a long loop.
        b = self.brokers
        return sum(n // b + (1 if (broker - t) % b < n % b else 0) for t, n in enumerate(self.partitions))


def message_bytes_of(workload: WorkloadSpec) -> float | None:
    """The mean event size a workload offers, when the spec says it."""
    source = workload.message
    if isinstance(source, GeneratedSource):
        return float(source.bytes)
    if isinstance(source, SizeDistributionSource):
        return source.mean_bytes
    if isinstance(source, LogFileSource) and source.event_bytes is not None:
        return float(source.event_bytes)
    return None


def traffic_of(workload: WorkloadSpec, brokers: int, message_bytes: float | None = None) -> Traffic:
    """The model's view of `workload` on `brokers` brokers (BadInput for a closed-loop workload:
    its rate is whatever the client achieves, so there is nothing to predict from)."""
    if workload.rate_per_producer == "max":
        raise BadInput(
            f'workload {workload.name}: rate_per_producer is "max" (closed loop); the model needs an'
            " offered rate in msgs/s"
        )
    if brokers < 1:
        raise BadInput(f"brokers must be at least 1 (got {brokers})")
    size = message_bytes or message_bytes_of(workload) or DEFAULT_EVENT_BYTES
    keys = workload.keys
    cardinality: int | None = None
    if keys.kind == "random":
        cardinality = keys.cardinality or 1_000_000
    elif keys.kind == "field":
        cardinality = FIELD_KEY_CARDINALITY
    return Traffic(
        producers=workload.producers,
        rate=float(workload.rate_per_producer),
        message_bytes=size,
        partitions=tuple(t.partitions for t in workload.topics),
        brokers=brokers,
        key_cardinality=cardinality,
        window_s=workload.duration_s - workload.warmup_s,
    )
