"""Replay each client's request-forming rules on a synthetic arrival stream.

Producers are independent, so a few are simulated (each over a horizon long enough for thousands of
messages and dozens of linger periods) and their counts scaled to the workload's producer count.
Every message is followed from its intended send time to the moment its request leaves the client,
which gives requests per broker, records per request and per partition batch, and the batching
delay distribution. Seeded: the same inputs give the same answer.
"""

from __future__ import annotations

import heapq
import math
import random
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from tuner.model.codecs import CodecTable
from tuner.model.otelcol_sim import simulate_otelcol
from tuner.model.traffic import Traffic
from tuner.spec.clients.rules import (
    FilebeatRules,
    JavaRules,
    LibrdkafkaRules,
    OtelcolRules,
    Partitioning,
    Rules,
)

# Per-record framing inside a v2 record batch (varints, attributes, offsets) and the batch header.
RECORD_OVERHEAD_BYTES = 12
# The Java producer's compressed-size estimate (java_estimate): its 5% pad, and where its per-topic
# estimator sits between a full batch's compressed fraction and a one-record batch's. 0.22 from the
# 16 KB runs at linger 1000 ms (docs/benchmarks.md, "Java model truth"): lz4 and zstd, fitted apart,
# both give 0.22 (Java counted a compressed byte as ~0.5 of an uncompressed one with lz4, ~0.36 with
# zstd, where a full batch's own ratios are ~0.34 and ~0.18).
JAVA_ESTIMATE_PAD = 1.05
JAVA_ESTIMATOR_POSITION = 0.22
BATCH_HEADER_BYTES = 61

TARGET_MESSAGES = 12_000  # per simulated producer
MAX_MESSAGES = 120_000
MIN_PERIODS = 40  # the horizon spans at least this many of the slowest batching timescale
SIM_PRODUCERS = 3
# A Sarama (Filebeat) request comes back after this long (a local broker, acks 1).
DEFAULT_RTT_S = 0.003
# Filebeat's harvester publishes the lines of one read through the pipeline into the queue this
# fast (fitted to real Filebeat 7.17 runs, docs/benchmarks.md "Filebeat model").
HARVEST_SPACING_S = 50e-6


@dataclass
class SimResult:
    """Counts for the simulated producers over `horizon_s` (not yet scaled to the workload)."""

    producers: int
    horizon_s: float
    messages: int = 0
    requests_by_broker: list[int] = field(default_factory=list)
    partition_batches: int = 0
    waits_s: list[float] = field(default_factory=list)
    # random partition choices (a keyless sticky partitioner's switches; every record for "random"):
    # how unevenly a window's requests may fall on the brokers (tuner.model.predict.busiest_share)
    random_picks: int = 0

    @property
    def requests(self) -> int:
        return sum(self.requests_by_broker)

    def per_producer_rps(self) -> list[float]:
        """Requests/s per broker for one producer."""
        scale = 1.0 / (self.horizon_s * self.producers)
        return [n * scale for n in self.requests_by_broker]

    def wait_quantile(self, q: float) -> float:
        if not self.waits_s:
            return 0.0
        ordered = sorted(self.waits_s)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def arrival_times(traffic: Traffic, horizon_s: float, rng: random.Random) -> list[float]:
    """One producer's intended send times in [0, horizon)."""
    rate = traffic.rate
    if traffic.arrivals == "poisson":
        out: list[float] = []
        t = rng.expovariate(rate)
        while t < horizon_s:
            out.append(t)
            t += rng.expovariate(rate)
        return out
    interval = 1.0 / rate
    jitter = min(0.0005, 0.05 * interval)  # event-loop timing noise
    phase = rng.random() * interval
    n = int((horizon_s - phase) / interval)
    times = [max(0.0, phase + k * interval + rng.gauss(0.0, jitter)) for k in range(max(n, 0))]
    times.sort()
    return times


def horizon_for(traffic: Traffic, timescale_s: float) -> float:
    by_count = TARGET_MESSAGES / traffic.rate
    by_periods = MIN_PERIODS * max(timescale_s, 1.0 / traffic.rate)
    return min(max(by_count, by_periods), MAX_MESSAGES / traffic.rate)


class _Chooser:
    """Picks each record's partition the way the client's partitioner would."""

    def __init__(self, traffic: Traffic, part: Partitioning, rng: random.Random) -> None:
        self.traffic = traffic
        self.rng = rng
        self.mode = part.keyless if traffic.keyless else part.keyed
        self.part = part
        topics = len(traffic.partitions)
        self.current = [-1] * topics
        self.since = [0.0] * topics
        self.used = [0.0] * topics  # events or bytes on the current partition
        self.salt = rng.getrandbits(32)
        self.picks = 0  # random partition choices made (each a stretch of records on one partition)

    def pick(self, topic: int, t: float, size: float) -> int:
        n = self.traffic.partitions[topic]
        mode, rng = self.mode, self.rng
        if mode == "random":
            self.picks += 1
            return rng.randrange(n)
        if mode == "hash":
            key = rng.randrange(self.traffic.key_cardinality or 1)
            return ((key * 2654435761 + self.salt) & 0xFFFFFFFF) % n
        cur = self.current[topic]
        if mode == "sticky_time":
            if cur < 0 or t - self.since[topic] >= self.part.sticky_ms / 1000:
                cur, self.since[topic] = rng.randrange(n), t
                self.picks += 1
        elif mode == "sticky_bytes":
            if cur < 0 or self.used[topic] >= self.part.sticky_bytes:
                cur, self.used[topic] = rng.randrange(n), 0.0
                self.picks += 1
            self.used[topic] += size
        else:  # sticky_events, round_robin
            if cur < 0 or self.used[topic] >= self.part.sticky_events:
                cur = rng.randrange(n) if mode == "sticky_events" or cur < 0 else (cur + 1) % n
                self.picks += mode == "sticky_events"
                self.used[topic] = 0.0
            self.used[topic] += 1
        self.current[topic] = cur
        return cur


def java_estimated(rules: JavaRules, traffic: Traffic, table: CodecTable) -> JavaRules:
    """The Java producer counts a compressed batch's bytes by its estimated compressed size, both
    for batch.size (when a batch is full) and for the sticky partitioner's switch (KIP-794): in
    uncompressed bytes, both come at batch.size over the estimated compressed fraction (the codec's
    ratios from `table`, the one the prediction's wire bytes use, at its level). The estimator stays
    at a full batch's fraction while every batch is alike; it is pushed up (java_estimate) only when
    sticky batches fill before linger.ms, because then the partition switch leaves small batches
    that requests carry beside the full ones."""
    if rules.compression == "none":
        return rules
    size = traffic.message_bytes + RECORD_OVERHEAD_BYTES
    # A fresh topic's estimate starts at 1 (no compression) and only creeps down. Sticky batches that
    # fill before linger.ms even at the raised estimate keep leaving small batches, which keep it
    # raised; batches that reach linger.ms first are all alike and let it fall to a full batch's.
    scale = _java_scale(rules, table, size, JAVA_ESTIMATOR_POSITION)
    sticky = traffic.keyless and rules.partitioning.keyless == "sticky_bytes"
    per_linger = traffic.rate * rules.linger_ms / 1000 * size  # a sticky batch's bytes at linger.ms
    if not sticky or per_linger <= rules.batch_bytes * scale:
        scale = _java_scale(rules, table, size, 0.0)
    part = rules.partitioning
    return replace(
        rules,
        batch_bytes=int(rules.batch_bytes * scale),
        partitioning=replace(part, sticky_bytes=int(part.sticky_bytes * scale)),
    )


def _java_scale(rules: JavaRules, table: CodecTable, size: float, position: float) -> float:
    """Uncompressed bytes per estimated byte of a full batch. The fraction depends on the records a
    batch holds, and a batch holds more the better they compress: settle the two (a few rounds
    reach the fixed point)."""
    scale = 1.0
    for _ in range(8):
        held = max(1.0, rules.batch_bytes * scale / size)
        scale = 1.0 / java_estimate(table, rules.compression, held, position)
    return scale


def java_estimate(table: CodecTable, codec: str, messages: float, position: float) -> float:
    """The compressed fraction the Java producer counts a batch of `messages` at when it fills
    batch.size: its per-topic estimator (kafka-clients CompressionRatioEstimator) jumps to the
    fraction of any batch that compressed worse than it expected and creeps back only 0.005 per
    better batch, and the builder pads it by 5% (COMPRESSION_RATE_ESTIMATION_FACTOR). The small
    batches a request carries beside a full one (one request per broker takes the head batch of
    every partition it leads) keep it well above a full batch's fraction: `position` of the way up
    to a one-record batch's (JAVA_ESTIMATOR_POSITION when there are such batches, else 0)."""
    full = 1.0 / table.ratio(codec, messages)
    single = 1.0 / table.ratio(codec, 1.0)
    return JAVA_ESTIMATE_PAD * (full + position * max(0.0, single - full))


def simulate(traffic: Traffic, rules: Rules, seed: int = 1, rtt_s: float = DEFAULT_RTT_S) -> SimResult:
    """Simulate a few producers of `traffic` under `rules` (Java rules with their batch sizes in
    uncompressed bytes: java_estimated), with the simulator of their rule shape (SIMULATORS)."""
    simulator = simulator_for(rules)
    horizon = horizon_for(traffic, simulator.timescale_s(rules))
    producers = min(traffic.producers, SIM_PRODUCERS)
    result = SimResult(producers=producers, horizon_s=horizon, requests_by_broker=[0] * traffic.brokers)
    for index in range(producers):
        rng = random.Random(seed * 1_000_003 + index)
        times = arrival_times(traffic, horizon, rng)
        result.messages += len(times)
        chooser = _Chooser(traffic, rules.partitioning, rng)
        simulator.run(traffic, rules, times, SimProducer(chooser, rng, result, rtt_s))
        result.random_picks += chooser.picks
    return result


@dataclass
class SimProducer:
    """One simulated producer's partitioner, random stream, the counts it adds to, the round trip."""

    chooser: _Chooser
    rng: random.Random
    out: SimResult
    rtt_s: float


R = TypeVar("R")


@dataclass(frozen=True)
class Simulator(Generic[R]):
    """How one rule shape forms requests: `run` follows one producer's messages into requests,
    `timescale_s` is the slowest batching timescale (the horizon spans dozens of it)."""

    run: Callable[[Traffic, R, list[float], SimProducer], None]
    timescale_s: Callable[[R], float]


def simulator_for(rules: Rules) -> Simulator[Any]:
    """The simulator registered for `rules`'s shape (exactly its type: SIMULATORS)."""
    return SIMULATORS[type(rules)]


def _librdkafka(
    traffic: Traffic, rules: LibrdkafkaRules, times: list[float], chooser: _Chooser, out: SimResult
) -> None:
    """One partition per request: a partition batch goes when its queue reaches batch.size bytes or
    batch.num.messages, or linger after its first message. It carries at most `cap` messages: a
    message that does not fit pushes the queue past batch.size, so the batch goes on its arrival.
    (A batch that holds `cap` messages but less than batch.size waits: one 500 KB event in a 1 MB
    batch leaves at linger.ms, as librdkafka sends it; docs/benchmarks.md, "Model truth".)"""
    linger = rules.linger_ms / 1000
    cap = batch_cap(rules, traffic.message_bytes)
    full = rules.batch_bytes - BATCH_HEADER_BYTES
    size = traffic.message_bytes + RECORD_OVERHEAD_BYTES
    topics = len(traffic.partitions)
    open_at: dict[tuple[int, int], float] = {}
    members: dict[tuple[int, int], list[float]] = {}
    deadlines: list[tuple[float, int, int, float]] = []
    waits = out.waits_s
    by_broker = out.requests_by_broker

    def close(key: tuple[int, int], at: float) -> None:
        for a in members.pop(key):
            waits.append(at - a)
        del open_at[key]
        by_broker[traffic.leader(*key)] += 1
        out.partition_batches += 1

    for k, t in enumerate(times):
        while deadlines and deadlines[0][0] <= t:
            due, tp, p, opened = heapq.heappop(deadlines)
            if open_at.get((tp, p)) == opened:
                close((tp, p), due)
        topic = k % topics
        key = (topic, chooser.pick(topic, t, traffic.message_bytes))
        if key in open_at and len(members[key]) >= cap:
            close(key, t)  # no room for this one: the queue passed batch.size
        if key not in open_at:
            open_at[key] = t
            members[key] = []
            heapq.heappush(deadlines, (t + linger, key[0], key[1], t))
        members[key].append(t)
        count = len(members[key])
        if count >= rules.batch_messages or count * size >= full:
            close(key, t)
    for due, tp, p, opened in sorted(deadlines):
        if open_at.get((tp, p)) == opened:
            close((tp, p), due)


def _java(traffic: Traffic, rules: JavaRules, times: list[float], chooser: _Chooser, out: SimResult) -> None:
    """One request per broker: when any partition batch on a broker is full or waited linger, the
    broker's every non-empty partition batch goes in one request (split at max.request.size)."""
    linger = rules.linger_ms / 1000
    size = traffic.message_bytes + RECORD_OVERHEAD_BYTES
    topics = len(traffic.partitions)
    nodes: list[dict[tuple[int, int], list[float]]] = [{} for _ in range(traffic.brokers)]
    node_open: list[float | None] = [None] * traffic.brokers
    deadlines: list[tuple[float, int, float]] = []

    def drain(b: int, at: float) -> None:
        batches = nodes[b]
        total = sum(len(m) for m in batches.values()) * size
        out.requests_by_broker[b] += max(1, math.ceil(total / rules.max_request_bytes))
        out.partition_batches += len(batches)
        for m in batches.values():
            out.waits_s.extend(at - a for a in m)
        nodes[b] = {}
        node_open[b] = None

    for k, t in enumerate(times):
        while deadlines and deadlines[0][0] <= t:
            due, b, opened = heapq.heappop(deadlines)
            if node_open[b] == opened:
                drain(b, due)
        topic = k % topics
        p = chooser.pick(topic, t, traffic.message_bytes)
        b = traffic.leader(topic, p)
        batch = nodes[b].setdefault((topic, p), [])
        if node_open[b] is None:
            node_open[b] = t
            heapq.heappush(deadlines, (t + linger, b, t))
        batch.append(t)
        if len(batch) * size >= rules.batch_bytes:
            drain(b, t)
    for due, b, opened in sorted(deadlines):
        if node_open[b] == opened:
            drain(b, due)


def queue_batches(
    times: list[float], batch: int, timeout_s: float, fill: int = 0
) -> list[tuple[float, int, int]]:
    """libbeat's memory queue: (hand-over time, first index, end index) of each batch. A Get is
    accepted once an event is pending; with a timeout it then waits until `fill` events (default:
    `batch`) are pending or the timeout passes, and takes what is there in batches of at most
    `batch`, all handed over at once (7.17's flush buffer larger than bulk_max_size; on 8.13+ the
    fill is the batch, tuner/spec/filebeat_lines.py)."""
    fill = max(fill, batch) if fill > 0 else batch
    out: list[tuple[float, int, int]] = []
    i, n, free = 0, len(times), 0.0
    while i < n:
        accept = max(free, times[i])
        release = accept
        if timeout_s > 0:
            last = i + fill - 1
            release = (
                max(accept, times[last])
                if last < n and times[last] <= accept + timeout_s
                else accept + timeout_s
            )
        end = min(bisect_right(times, release, lo=i), i + (fill if timeout_s > 0 else batch))
        for start in range(i, end, batch):
            out.append((release, start, min(start + batch, end)))
        free, i = release, end
    return out


def harvested(times: list[float], rules: FilebeatRules) -> list[float]:
    """When each line written at `times` reaches the queue: the harvester reads everything new at
    once, then sleeps `backoff` at EOF (growing by the factor up to `max_backoff` while reads find
    nothing) before it looks again; the lines of a read enter the queue one after another."""
    if rules.read_backoff_ms <= 0 or not times:
        return times
    backoff, ceiling = (
        rules.read_backoff_ms / 1000,
        max(rules.read_max_backoff_ms, rules.read_backoff_ms) / 1000,
    )
    out: list[float] = []
    i, n, read, wait = 0, len(times), times[0], backoff
    while i < n:
        end = bisect_right(times, read, lo=i)
        if end == i:  # EOF again: sleep longer
            wait = min(wait * rules.read_backoff_factor, ceiling)
            read += wait
            continue
        at = read
        for _ in range(i, end):
            out.append(at)
            at += HARVEST_SPACING_S
        i, wait = end, backoff
        read = at + wait
    return out


def sarama_cycles(rules: FilebeatRules, rtt_s: float, rng: random.Random) -> Callable[[], float]:
    """How long each request keeps its slot: the fixed round trip `rtt_s`, or with `cycle_s` set
    (real Filebeat) a draw per request, lognormal around `cycle_s` with log-sd `cycle_spread`,
    from a stream of its own seeded by `rng` (the same inputs give the same draws)."""
    if rules.cycle_s <= 0:
        return lambda: rtt_s
    if rules.cycle_spread <= 0:
        return lambda: rules.cycle_s
    draws = random.Random(rng.getrandbits(64))
    return lambda: rules.cycle_s * math.exp(rules.cycle_spread * draws.gauss(0.0, 1.0))


def _filebeat(
    traffic: Traffic,
    rules: FilebeatRules,
    times: list[float],
    chooser: _Chooser,
    out: SimResult,
    cycle: Callable[[], float],
) -> None:
    """Harvester bursts, queue batches, then Sarama: one request per broker per flush (a
    flush-frequency timer started by the first buffered event, or as soon as one of its
    `in_flight` request slots is free: each request holds its slot for one `cycle()`). With one
    request in flight (7.17) the first event of a burst goes alone and the rest wait for its cycle;
    whether a burst takes two requests or more depends on how its entry time compares with the
    cycles, so a cycle that varies gives the fractional counts real pods show. Latency counts
    from the line's write time."""
    flush = rules.flush_ms / 1000
    topics = len(traffic.partitions)
    brokers = traffic.brokers
    buffers: list[list[tuple[int, int]]] = [[] for _ in range(brokers)]
    due: list[float] = [math.inf] * brokers  # when the buffered events go
    slots: list[list[float]] = [[0.0] * max(1, rules.in_flight) for _ in range(brokers)]
    queued = harvested(times, rules)
    entered = -math.inf  # when the output worker handed the last event to Sarama

    def send(b: int, at: float) -> None:
        buf = buffers[b]
        out.requests_by_broker[b] += 1
        out.partition_batches += len({p for _, p in buf})
        out.waits_s.extend(at - times[i] for i, _ in buf)
        buffers[b] = []
        due[b] = math.inf
        if flush <= 0:
            build = rules.build_s_per_byte * len(buf) * traffic.message_bytes
            heapq.heapreplace(slots[b], at + build + cycle())

    def settle(upto: float) -> None:
        # Flush every broker whose buffer is due before `upto`, in time order.
        while True:
            b = min(range(brokers), key=due.__getitem__)
            if due[b] > upto or due[b] == math.inf:
                return
            send(b, due[b])

    for release, start, end in queue_batches(
        queued, rules.queue_batch, rules.queue_timeout_ms / 1000, rules.queue_fill
    ):
        for j in range(start, end):
            # One output worker publishes the batches one after another, event by event.
            t = max(release, queued[j], entered + rules.entry_spacing_s)
            entered = t
            settle(t)
            topic = j % topics
            p = chooser.pick(topic, t, traffic.message_bytes)
            b = traffic.leader(topic, p)
            if len(buffers[b]) >= rules.flush_messages:
                send(b, t)
            buffers[b].append((j, p))
            if due[b] == math.inf:
                due[b] = t + flush if flush > 0 else max(t, slots[b][0])
    settle(math.inf)


def batch_cap(rules: LibrdkafkaRules, message_bytes: float) -> int:
    """Most messages one librdkafka partition batch holds: batch.num.messages, or as many as fit
    batch.size (uncompressed, with record framing)."""
    fit = int((rules.batch_bytes - BATCH_HEADER_BYTES) // (message_bytes + RECORD_OVERHEAD_BYTES))
    return max(1, min(rules.batch_messages, fit))


def _otelcol(traffic: Traffic, rules: OtelcolRules, times: list[float], sim: SimProducer) -> None:
    out = sim.out
    out.partition_batches += simulate_otelcol(
        traffic, rules, times, sim.rng, out.requests_by_broker, out.waits_s, sim.rtt_s
    )


LIBRDKAFKA = Simulator[LibrdkafkaRules](
    lambda traffic, rules, times, sim: _librdkafka(traffic, rules, times, sim.chooser, sim.out),
    lambda rules: max(rules.linger_ms, rules.partitioning.sticky_ms) / 1000,
)
JAVA = Simulator[JavaRules](
    lambda traffic, rules, times, sim: _java(traffic, rules, times, sim.chooser, sim.out),
    lambda rules: rules.linger_ms / 1000,
)
FILEBEAT = Simulator[FilebeatRules](
    lambda traffic, rules, times, sim: _filebeat(
        traffic, rules, times, sim.chooser, sim.out, sarama_cycles(rules, sim.rtt_s, sim.rng)
    ),
    lambda rules: max(rules.flush_ms, rules.queue_timeout_ms, rules.read_max_backoff_ms) / 1000,
)
OTELCOL = Simulator[OtelcolRules](
    _otelcol, lambda rules: max(rules.poll_ms, rules.batch_timeout_ms, rules.linger_ms) / 1000
)

# The simulator of each rule shape in `Rules` (tuner/spec/clients/rules.py), one line per shape
# (tests/unit/test_model_requests.py holds this to the union: every shape exactly once).
SIMULATORS: dict[type, Simulator[Any]] = {
    LibrdkafkaRules: LIBRDKAFKA,
    JavaRules: JAVA,
    FilebeatRules: FILEBEAT,
    OtelcolRules: OTELCOL,
}
