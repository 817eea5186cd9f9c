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
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tuner.model.codecs import CodecCurve
from tuner.model.otelcol_sim import settle, simulate_otelcol
from tuner.model.traffic import Traffic
from tuner.spec.clients.rules import (
    FilebeatRules,
    JavaRules,
    LibrdkafkaRules,
    OtelcolRules,
    Partitioning,
    Rules,
)
from tuner.spec.limits import BATCH_HEADER_BYTES, RECORD_OVERHEAD_BYTES

# kafka-clients' compression-ratio estimate (_JavaEstimator, _JavaBatch): MemoryRecordsBuilder pads
# it by 5% (COMPRESSION_RATE_ESTIMATION_FACTOR); CompressionRatioEstimator moves it by at least
# +0.05 after a batch that compressed worse than estimated, -0.005 after a better one.
JAVA_ESTIMATE_PAD = 1.05
JAVA_ESTIMATE_WORSE_STEP = 0.05
JAVA_ESTIMATE_BETTER_STEP = 0.005

# How far a driver's send falls from its schedule, one record to the next (the spread of kbt's
# drivers' send lag on a quiet machine: p50 ~0.10 ms, p90 ~0.13 ms). Kept this small because it
# decides whether the record due exactly at a batch's linger deadline makes that batch.
ARRIVAL_JITTER_S = 30e-6
TARGET_MESSAGES = 12_000  # per simulated producer
MAX_MESSAGES = 120_000
MIN_PERIODS = 40  # the horizon spans at least this many of the slowest batching timescale
SIM_PRODUCERS = 3
# A Sarama (Filebeat) request comes back after this long (a local broker, acks 1).
DEFAULT_RTT_S = 0.003


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
    # sum over partition batches of (records in it)^2, where a simulator keeps it (Java): divided by
    # `messages`, the batch the mean record travels in, which the few-record batches beside full
    # ones do not pull down
    batch_records_sq: int = 0
    # waits_s sorted, kept for the quantiles: the search asks each result for several, and a
    # result kept on disk is read many times (None, or the count it was sorted at)
    _ordered: tuple[int, list[float]] | None = field(default=None, init=False, repr=False, compare=False)

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
        if self._ordered is None or self._ordered[0] != len(self.waits_s):
            self._ordered = (len(self.waits_s), sorted(self.waits_s))
        ordered = self._ordered[1]
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
    jitter = min(ARRIVAL_JITTER_S, 0.05 * interval)
    phase = rng.random() * interval
    n = int((horizon_s - phase) / interval)
    return sorted(max(0.0, phase + k * interval + rng.gauss(0.0, jitter)) for k in range(max(n, 0)))


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


def simulate(
    traffic: Traffic,
    rules: Rules,
    seed: int = 1,
    rtt_s: float = DEFAULT_RTT_S,
    codec: CodecCurve | None = None,
) -> SimResult:
    """Simulate a few producers of `traffic` under `rules`, with the simulator of their rule shape
    (SIMULATORS). `codec`: the compression curve of the rules' codec at its level, where the client
    sizes batches by their estimated compressed bytes (Java; None: no compression)."""
    simulator = SIMULATORS[type(rules)]
    horizon = horizon_for(traffic, simulator.timescale_s(rules))
    producers = min(traffic.producers, SIM_PRODUCERS)
    result = SimResult(producers=producers, horizon_s=horizon, requests_by_broker=[0] * traffic.brokers)
    for index in range(producers):
        rng = random.Random(seed * 1_000_003 + index)
        times = arrival_times(traffic, horizon, rng)
        result.messages += len(times)
        chooser = _Chooser(traffic, rules.partitioning, rng)
        simulator.run(traffic, rules, times, SimProducer(chooser, rng, result, rtt_s, codec))
        result.random_picks += chooser.picks
    return result


@dataclass
class SimProducer:
    """One simulated producer's partitioner, random stream, the counts it adds to, the round trip."""

    chooser: _Chooser
    rng: random.Random
    out: SimResult
    rtt_s: float
    codec: CodecCurve | None = None


R = TypeVar("R")


@dataclass(frozen=True)
class Simulator(Generic[R]):
    """How one rule shape forms requests: `run` follows one producer's messages into requests,
    `timescale_s` is the slowest batching timescale (the horizon spans dozens of it)."""

    run: Callable[[Traffic, R, list[float], SimProducer], None]
    timescale_s: Callable[[R], float]


def _librdkafka(traffic: Traffic, rules: LibrdkafkaRules, times: list[float], sim: SimProducer) -> None:
    """One partition per request: a partition batch goes when its queue reaches batch.size bytes or
    batch.num.messages, or linger after its first message. It carries at most `cap` messages: a
    message that does not fit pushes the queue past batch.size, so the batch goes on its arrival.
    (A batch that holds `cap` messages but less than batch.size waits: one 500 KB event in a 1 MB
    batch leaves at linger.ms, as librdkafka sends it; docs/benchmarks.md, "Model truth".)"""
    chooser, out = sim.chooser, sim.out
    linger = rules.linger_ms / 1000
    late = rules.linger_timer.draw_s
    cap = batch_cap(rules, traffic.message_bytes)
    full = rules.batch_bytes - BATCH_HEADER_BYTES
    size = traffic.message_bytes + RECORD_OVERHEAD_BYTES
    topics = len(traffic.partitions)
    # each open partition batch: its records' send times, the first when it opened
    members: dict[tuple[int, int], list[float]] = {}
    deadlines: list[tuple[float, int, int, float]] = []
    waits = out.waits_s
    by_broker = out.requests_by_broker

    def close(key: tuple[int, int], at: float) -> None:
        for a in members.pop(key):
            waits.append(at - a)
        by_broker[traffic.leader(*key)] += 1
        out.partition_batches += 1

    def expire(upto: float) -> None:
        """Close the batches whose linger ran out by `upto`, in deadline order."""
        while deadlines and deadlines[0][0] <= upto:
            due, tp, p, opened = heapq.heappop(deadlines)
            if (tp, p) in members and members[tp, p][0] == opened:  # the batch it was set for
                close((tp, p), due)

    for k, t in enumerate(times):
        expire(t)
        topic = k % topics
        key = (topic, chooser.pick(topic, t, traffic.message_bytes))
        if key in members and len(members[key]) >= cap:
            close(key, t)  # no room for this one: the queue passed batch.size
        if key not in members:
            members[key] = []
            heapq.heappush(deadlines, (t + max(0.0, linger + late(chooser.rng)), key[0], key[1], t))
        members[key].append(t)
        count = len(members[key])
        if count >= rules.batch_messages or count * size >= full:
            close(key, t)
    expire(math.inf)


def _java(traffic: Traffic, rules: JavaRules, times: list[float], sim: SimProducer) -> None:
    """kafka-clients' accumulator, sender and built-in sticky partitioner, record by record.

    A partition holds a queue of batches; a record goes into the last one while it has room by
    the batch's estimated size (`_JavaBatch`), else that batch closes for appends and a new one
    starts. A broker is ready when any partition it leads has a batch behind its head batch, a
    head batch full by the estimate, or one that waited linger.ms since it was created; then one
    request takes the head batch of every partition it leads (split at max.request.size). Each
    batch sent moves the compression estimator (`_JavaEstimator`). Keyless sticky records switch
    partition as BuiltInPartitioner does: after batch.size estimated bytes when the partition's
    last batch is full, or after twice that regardless."""
    out, chooser = sim.out, sim.chooser
    linger = rules.linger_ms / 1000
    size = traffic.message_bytes + RECORD_OVERHEAD_BYTES
    topics = len(traffic.partitions)
    estimator = _JavaEstimator(None if rules.compression == "none" else sim.codec, sim.rng)
    queues: dict[tuple[int, int], list[_JavaBatch]] = {}
    led: list[set[tuple[int, int]]] = [set() for _ in range(traffic.brokers)]
    deadlines: list[tuple[float, int, int, int]] = []  # (created + linger, serial, topic, partition)
    sticky = traffic.keyless and rules.partitioning.keyless == "sticky_bytes"
    current = [-1] * topics
    produced = [0.0] * topics
    serial = 0

    def drain(b: int, at: float) -> None:
        sent = 0
        if not led[b]:
            return
        for key in sorted(led[b]):
            queue = queues[key]
            batch = queue.pop(0)
            if not queue:
                led[b].discard(key)
            out.waits_s.extend(at - a for a in batch.arrivals)
            out.partition_batches += 1
            out.batch_records_sq += len(batch.arrivals) ** 2
            sent += len(batch.arrivals)
            estimator.update(len(batch.arrivals))
        out.requests_by_broker[b] += max(1, math.ceil(sent * size / rules.max_request_bytes))

    def full(queue: list[_JavaBatch]) -> bool:
        return queue[-1].full(rules.batch_bytes)

    def switch(topic: int) -> None:
        current[topic] = chooser.rng.randrange(traffic.partitions[topic])
        produced[topic] = 0.0
        chooser.picks += 1

    def expire(upto: float) -> None:
        """Drain the brokers whose head batch waited linger.ms by `upto`, in deadline order."""
        while deadlines and deadlines[0][0] <= upto:
            due, number, tp, p = heapq.heappop(deadlines)
            queue = queues.get((tp, p))
            if queue and queue[0].serial == number:
                drain(traffic.leader(tp, p), due)

    for k, t in enumerate(times):
        expire(t)
        topic = k % topics
        if sticky and current[topic] < 0:
            switch(topic)
        p = current[topic] if sticky else chooser.pick(topic, t, traffic.message_bytes)
        ready: set[int] = set()
        while True:
            queue = queues.setdefault((topic, p), [])
            # RecordAccumulator.partitionChanged: a switch held back while the last batch was not
            # full goes ahead once it is (closed for appends, or the queue drained).
            if sticky and produced[topic] >= rules.batch_bytes and (not queue or full(queue)):
                switch(topic)
                p = current[topic]
                continue
            last = queue[-1] if queue else None
            if last is not None and last.has_room(size, rules.batch_bytes):
                before = last.estimated_bytes()
                last.arrivals.append(t)
                appended = last.estimated_bytes() - before
                break
            if last is not None and not last.closed:
                last.closed = True  # full: sendable, and (sticky) the partition switches
                ready.add(traffic.leader(topic, p))
                continue
            serial += 1
            queue.append(_JavaBatch(serial, size, estimator.padded(), [t]))
            led[traffic.leader(topic, p)].add((topic, p))
            due = t + max(0.0, linger + rules.linger_timer.draw_s(sim.rng))  # never before the batch opened
            heapq.heappush(deadlines, (due, serial, topic, p))
            appended = queue[-1].estimated_bytes()
            break
        if sticky:
            produced[topic] += appended
            if produced[topic] >= 2 * rules.batch_bytes or (
                produced[topic] >= rules.batch_bytes and full(queue)
            ):
                switch(topic)
        if len(queue) > 1 or full(queue):
            ready.add(traffic.leader(topic, p))
        for b in sorted(ready):
            drain(b, t)
    expire(math.inf)


@dataclass(slots=True)
class _JavaBatch:
    """One ProducerBatch: the records it holds, counted at the estimate taken when it was created
    (MemoryRecordsBuilder: batch header + uncompressed records x estimate x 1.05)."""

    serial: int
    record_bytes: float
    estimate: float  # compressed fraction with its pad (1.0 for no compression)
    arrivals: list[float]
    closed: bool = False

    def estimated_bytes(self) -> int:
        return BATCH_HEADER_BYTES + int(len(self.arrivals) * self.record_bytes * self.estimate)

    def has_room(self, record: float, limit: int) -> bool:
        """hasRoomFor: not full, and the next record counted uncompressed on top of the estimate."""
        if self.closed:
            return False
        estimated = self.estimated_bytes()
        return limit > estimated and limit >= estimated + record

    def full(self, limit: int) -> bool:
        """isFull (a batch holds at least the record it was created with)."""
        return self.closed or limit <= self.estimated_bytes()


class _JavaEstimator:
    """CompressionRatioEstimator for one topic and codec: starts at 1.0; a batch that compressed
    worse than the estimate raises it to its own fraction (at least +0.05), a better one lowers it
    by 0.005 (not below its own fraction). A batch's compressed fraction: `curve`'s by its record
    count, spread as batches of that many records differ (the curve's spread / sqrt(records),
    lognormal): a raise follows any one batch, so the estimate sits in the upper tail of the small
    batches' fractions, not at their median. `curve` None: no compression, no estimate."""

    def __init__(self, curve: CodecCurve | None, rng: random.Random) -> None:
        self.curve = curve
        self.rng = rng
        self.value = 1.0
        self.medians: dict[int, float] = {}  # the curve's fraction by record count

    def padded(self) -> float:
        return 1.0 if self.curve is None else self.value * JAVA_ESTIMATE_PAD

    def update(self, records: int) -> None:
        if self.curve is not None:
            fraction = self.medians.get(records)
            if fraction is None:
                fraction = self.medians[records] = 1.0 / self.curve.ratio(records)
            if self.curve.spread > 0:
                fraction *= math.exp(self.rng.gauss(0.0, self.curve.spread / math.sqrt(records)))
            self.value = java_estimate_step(self.value, fraction)


def java_estimate_step(current: float, observed: float) -> float:
    """CompressionRatioEstimator.updateEstimation: the estimate after a batch whose compressed
    fraction was `observed`."""
    if observed > current:
        return max(current + JAVA_ESTIMATE_WORSE_STEP, observed)
    if observed < current:
        return max(current - JAVA_ESTIMATE_BETTER_STEP, observed)
    return current


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
            filled = last < n and times[last] <= accept + timeout_s
            release = max(accept, times[last]) if filled else accept + timeout_s
        end = min(bisect_right(times, release, lo=i), i + (fill if timeout_s > 0 else batch))
        out.extend((release, start, min(start + batch, end)) for start in range(i, end, batch))
        free, i = release, end
    return out


def harvested(times: list[float], rules: FilebeatRules) -> list[float]:
    """When each line written at `times` reaches the queue: the harvester reads everything new at
    once, then sleeps `backoff` at EOF (growing by the factor up to `max_backoff` while reads find
    nothing) before it looks again; the lines of a read enter the queue one after another,
    `harvest_spacing_s` apart."""
    if rules.read_backoff_ms <= 0 or not times:
        return times
    backoff = rules.read_backoff_ms / 1000
    ceiling = max(rules.read_max_backoff_ms, rules.read_backoff_ms) / 1000
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
            at += rules.harvest_spacing_s
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


def _filebeat(traffic: Traffic, rules: FilebeatRules, times: list[float], sim: SimProducer) -> None:
    """Harvester bursts, queue batches, then Sarama: one request per broker per flush (a
    flush-frequency timer started by the first buffered event, or as soon as one of its
    `in_flight` request slots is free: each request holds its slot for one `cycle()`). With one
    request in flight (7.17) the first event of a burst goes alone and the rest wait for its cycle;
    whether a burst takes two requests or more depends on how its entry time compares with the
    cycles, so a cycle that varies gives the fractional counts real pods show. Latency counts
    from the line's write time."""
    chooser, out, cycle = sim.chooser, sim.out, sarama_cycles(rules, sim.rtt_s, sim.rng)
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

    for release, start, end in queue_batches(
        queued, rules.queue_batch, rules.queue_timeout_ms / 1000, rules.queue_fill
    ):
        for j in range(start, end):
            # One output worker publishes the batches one after another, event by event.
            t = max(release, queued[j], entered + rules.entry_spacing_s)
            entered = t
            settle(brokers, due.__getitem__, send, t)
            topic = j % topics
            p = chooser.pick(topic, t, traffic.message_bytes)
            b = traffic.leader(topic, p)
            if len(buffers[b]) >= rules.flush_messages:
                send(b, t)
            buffers[b].append((j, p))
            if due[b] == math.inf:
                due[b] = t + flush if flush > 0 else max(t, slots[b][0])
    settle(brokers, due.__getitem__, send, math.inf)


def batch_cap(rules: LibrdkafkaRules, message_bytes: float) -> int:
    """Most messages one librdkafka partition batch holds: batch.num.messages, or as many as fit
    batch.size (uncompressed, with record framing)."""
    fit = int((rules.batch_bytes - BATCH_HEADER_BYTES) // (message_bytes + RECORD_OVERHEAD_BYTES))
    return max(1, min(rules.batch_messages, fit))


LIBRDKAFKA = Simulator[LibrdkafkaRules](
    _librdkafka, lambda rules: max(rules.linger_ms, rules.partitioning.sticky_ms) / 1000
)
JAVA = Simulator[JavaRules](_java, lambda rules: rules.linger_ms / 1000)
FILEBEAT = Simulator[FilebeatRules](
    _filebeat, lambda rules: max(rules.flush_ms, rules.queue_timeout_ms, rules.read_max_backoff_ms) / 1000
)
OTELCOL = Simulator[OtelcolRules](
    simulate_otelcol, lambda rules: max(rules.poll_ms, rules.batch_timeout_ms, rules.linger_ms) / 1000
)

# The simulator of each rule shape in `Rules` (tuner/spec/clients/rules.py), one line per shape
# (tests/unit/test_model_requests.py holds this to the union: every shape exactly once).
SIMULATORS: dict[type, Simulator[Any]] = {
    LibrdkafkaRules: LIBRDKAFKA,
    JavaRules: JAVA,
    FilebeatRules: FILEBEAT,
    OtelcolRules: OTELCOL,
}
