"""librdkafka statistics (`statistics.interval.ms` JSON): one emission parsed once (`Emission`,
read by the engine's window, the client exporter and the stress tally), and per-run client figures.

Cumulative counters (`brokers.*.req.Produce`) are interpolated linearly to the measured
window's start and read after the final drain. Rolling windows (`topics.*.batchcnt` / `batchsize`,
`brokers.*.int_latency` / `rtt`, reset at every emission) are summed over the emissions after the
window's start. librdkafka puts one
partition per ProduceRequest, so its batch count is its request count.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from tuner.driver.result import LatencyMs
from tuner.driver.summed import Summed

US_PER_MS = 1000.0


@dataclass(frozen=True)
class LatencyWindow:
    """One emission's rolling latency window (microseconds)."""

    cnt: int
    sum: float
    p50: float
    p99: float
    max: float

    @classmethod
    def of(cls, raw: dict[str, Any]) -> LatencyWindow:
        return cls(int(raw.get("cnt", 0)), *(float(raw.get(k, 0)) for k in ("sum", "p50", "p99", "max")))


@dataclass(frozen=True)
class Broker:
    node: str  # librdkafka's nodeid
    produce_requests: int  # cumulative
    int_latency: LatencyWindow
    rtt: LatencyWindow
    throttle_max: float | None  # ms, the window's longest; None when the emission has no window

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Broker:
        throttle_max = None
        if (throttle := raw.get("throttle")) is not None:  # counts only throttled responses: none is 0
            throttle_max = float(throttle.get("max", 0)) if throttle.get("cnt") else 0.0
        return cls(
            str(int(raw["nodeid"])),
            int(raw.get("req", {}).get("Produce", 0)),
            LatencyWindow.of(raw.get("int_latency", {})),
            LatencyWindow.of(raw.get("rtt", {})),
            throttle_max,
        )


@dataclass(frozen=True)
class TopicBatches:
    batches: int  # batchcnt.cnt
    records: int  # batchcnt.sum
    bytes: int  # batchsize.sum

    @classmethod
    def of(cls, raw: dict[str, Any]) -> TopicBatches:
        count = raw.get("batchcnt", {})
        return cls(
            int(count.get("cnt", 0)), int(count.get("sum", 0)), int(raw.get("batchsize", {}).get("sum", 0))
        )


@dataclass(frozen=True)
class Emission:
    """One statistics emission's producer figures, parsed once for all its readers."""

    brokers: tuple[Broker, ...]
    topics: tuple[TopicBatches, ...]

    @classmethod
    def parse(cls, raw: str) -> Emission:
        data = json.loads(raw)
        brokers = data.get("brokers", {}).values()
        return cls(
            # bootstrap placeholders (nodeid -1) carry only Metadata requests
            tuple(Broker.of(b) for b in brokers if int(b.get("nodeid", -1)) >= 0),
            tuple(TopicBatches.of(t) for t in data.get("topics", {}).values()),
        )

    def new_requests(self, last: dict[str, int]) -> dict[str, int]:
        """Produce requests per node since the cumulative counts in `last` (node -> count), which
        this updates; only nodes whose count grew."""
        grown: dict[str, int] = {}
        for broker in self.brokers:
            delta = broker.produce_requests - last.get(broker.node, 0)
            if delta > 0:
                grown[broker.node] = delta
                last[broker.node] = broker.produce_requests
        return grown


@dataclass
class Rolling(Summed):
    """A latency/size window summed over emissions: cnt, sum, cnt-weighted p50/p99, max."""

    maxima = ("max",)

    cnt: int = 0
    total: float = 0.0
    p50_weighted: float = 0.0
    p99_weighted: float = 0.0
    max: float = 0.0

    def add(self, window: LatencyWindow) -> None:
        cnt = window.cnt
        if cnt <= 0:
            return
        self.cnt += cnt
        self.total += window.sum
        self.p50_weighted += window.p50 * cnt
        self.p99_weighted += window.p99 * cnt
        self.max = max(self.max, window.max)

    def as_ms(self) -> LatencyMs | None:
        """Count, mean, p50, p99 and max in ms (librdkafka reports microseconds)."""
        if self.cnt == 0:
            return None
        return LatencyMs(
            count=self.cnt,
            mean=self.total / self.cnt / US_PER_MS,
            p50=self.p50_weighted / self.cnt / US_PER_MS,
            p99=self.p99_weighted / self.cnt / US_PER_MS,
            max=self.max / US_PER_MS,
        )


@dataclass
class WindowStats(Summed):
    """One producer's (or many producers' merged) client figures."""

    requests: dict[str, float] = field(default_factory=dict)  # node id -> produce requests in window
    requests_total: dict[str, int] = field(default_factory=dict)  # node id -> whole run
    batches: int = 0
    batch_records: int = 0
    batch_bytes: float = 0.0
    queue_latency: Rolling = field(default_factory=Rolling)  # int_latency
    rtt: Rolling = field(default_factory=Rolling)


@dataclass
class _Kept:
    t: float
    requests: dict[str, int]  # node id -> cumulative produce requests
    rolling: WindowStats  # this emission's rolling windows (no requests)


class StatsTrack:
    """Every statistics emission of one producer, kept small."""

    def __init__(self) -> None:
        self.emissions: list[_Kept] = []

    def add(self, emission: Emission, now: float) -> None:
        rolling = WindowStats()
        for broker in emission.brokers:
            rolling.queue_latency.add(broker.int_latency)
            rolling.rtt.add(broker.rtt)
        for topic in emission.topics:
            rolling.batches += topic.batches
            rolling.batch_records += topic.records
            rolling.batch_bytes += topic.bytes
        self.emissions.append(_Kept(now, {b.node: b.produce_requests for b in emission.brokers}, rolling))

    def _at(self, t: float, get: Any) -> float:
        """A cumulative counter at time t, linear between the emissions around it."""
        times = [e.t for e in self.emissions]
        i = bisect_right(times, t)
        if i == 0:  # before the first emission: the producer had sent nothing yet
            return 0.0
        if i == len(self.emissions):
            return float(get(self.emissions[-1]))
        before, after = self.emissions[i - 1], self.emissions[i]
        span = after.t - before.t
        frac = (t - before.t) / span if span > 0 else 1.0
        return float(get(before)) + frac * (float(get(after)) - float(get(before)))

    def window(self, start: float) -> WindowStats:
        """Figures from `start` (the measured window's start) through the last emission, which
        follows the final drain: production stops at the window's end, and the drain's requests
        carry the window's last records. The broker side is measured over the same span."""
        out = WindowStats()
        if not self.emissions:
            return out
        last = self.emissions[-1]
        nodes = {n for e in self.emissions for n in e.requests}
        for node in nodes:
            out.requests[node] = last.requests.get(node, 0) - self._at(
                start, lambda e, n=node: e.requests.get(n, 0)
            )
            out.requests_total[node] = last.requests.get(node, 0)
        for e in self.emissions:
            if e.t > start:  # a rolling window covers the interval ending at its emission
                out.merge(e.rolling)
        return out
