"""Request formation of the OpenTelemetry Collector (filelog receiver -> kafka exporter), simulated.

Four stages, each as the collector release kbt builds implements it (tuner/spec/clients/otelcol.py):

1. the receiver reads the file every poll interval: a line is read at the first poll after it was
   written; the lines of a read go to the batching emitter at once;
2. the emitter hands on batches of `emit_batch` entries at once, a partial batch at its next tick;
   each hand-over is one export;
3. with exporter-side batching, exports merge until `batch_min` items (cut at `batch_max`) or the
   flush timer fires (a timer of `batch_timeout` restarted after every flush, firing
   `timer_late_ms` late on average: fitted);
4. franz-go: an export is one Kafka record (OTLP encodings) or one per line (raw); records go to a
   partition batch; a broker's request leaves `linger` after the first record of a batch on it (or
   at once when a batch holds max_message_bytes) and carries every batch buffered for that broker;
   with `in_flight` requests outstanding it waits for the oldest to be answered. Keyless records
   stick to one partition until its batch has left (sticky_batch).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING

from tuner.model.traffic import Traffic
from tuner.spec.clients.rules import OtelcolRules
from tuner.spec.limits import RECORD_OVERHEAD_BYTES

if TYPE_CHECKING:
    from tuner.model.simulate import SimProducer

# An export's OTLP envelope around its lines (resource, scope), and per line (timestamps, attributes).
OTLP_EXPORT_BYTES = 60
OTLP_LINE_BYTES = 70


def reads(times: list[float], poll_s: float, phase: float) -> list[float]:
    """When each line written at `times` is read: the first poll at or after it."""
    return [phase + math.ceil((t - phase) / poll_s) * poll_s if t > phase else phase for t in times]


def exports(read_at: list[float], batch: int, tick_s: float, phase: float) -> list[tuple[float, int, int]]:
    """The emitter's hand-overs: (time, first line, end line). Full batches go at once, the rest of
    a read at the next tick (unless more lines fill it first)."""
    out: list[tuple[float, int, int]] = []
    start, n = 0, len(read_at)
    while start < n:
        at = read_at[start]
        tick = phase + math.ceil((at - phase) / tick_s) * tick_s if at > phase else phase
        if tick <= at:
            tick += tick_s
        # Lines read before the tick join this batch, up to `batch` of them.
        end = min(bisect_left(read_at, tick, lo=start), start + batch)
        out.append((read_at[end - 1] if end - start >= batch else tick, start, end))
        start = end
    return out


def merged(
    handed: list[tuple[float, int, int]], rules: OtelcolRules, phase: float, late: float = 0.0
) -> list[tuple[float, int, int]]:
    """Exporter-side batching over consecutive exports (lines stay in order); the flush timer
    restarts after each flush and fires `late` after it is due."""
    if rules.batch_min <= 0:
        return handed
    timeout = rules.batch_timeout_ms / 1000 + late
    out: list[tuple[float, int, int]] = []
    pending: int | None = None  # first line of the open batch
    next_fire = phase + timeout
    for at, start, end in handed:
        while next_fire <= at:
            if pending is not None:
                out.append((next_fire, pending, start))
                pending = None
            next_fire += timeout
        if pending is None:
            pending = start
        while end - pending >= max(rules.batch_min, 1):
            cut = end if not rules.batch_max else min(end, pending + rules.batch_max)
            out.append((at, pending, cut))
            pending = cut if cut < end else None
            next_fire = at + timeout
            if pending is None:
                break
    if pending is not None:
        out.append((next_fire, pending, handed[-1][2]))
    return out


def simulate_otelcol(traffic: Traffic, rules: OtelcolRules, times: list[float], sim: SimProducer) -> None:
    """One pod: adds its requests per broker, waits (write -> request) and partition batches to `sim.out`."""
    rng, out = sim.rng, sim.out
    poll = rules.poll_ms / 1000
    read_at = reads(times, poll, rng.random() * poll)
    tick = rules.emit_flush_ms / 1000
    handed = exports(read_at, rules.emit_batch, tick, rng.random() * tick)
    handed = merged(handed, rules, rng.random(), rules.timer_late_ms / 1000)  # the timer's mean lateness
    linger = rules.linger_ms / 1000
    line = traffic.message_bytes + (0 if rules.record_per_line else OTLP_LINE_BYTES)
    topics = len(traffic.partitions)
    brokers = traffic.brokers
    # Per broker: buffered (partition -> [bytes, line indexes]), the request's due time, and when
    # each in-flight slot is free again.
    buffers: list[dict[tuple[int, int], list[int]]] = [{} for _ in range(brokers)]
    sizes: dict[tuple[int, int], float] = {}
    due = [math.inf] * brokers
    slots = [[0.0] * max(1, rules.in_flight) for _ in range(brokers)]
    current = [-1] * topics  # sticky partition per topic
    rr = [rng.randrange(max(n, 1)) for n in traffic.partitions]
    key_salt = rng.getrandbits(32)

    def ready(b: int) -> float:
        """When broker b's request leaves: its due time, or when an in-flight slot frees up."""
        return max(due[b], slots[b][0])

    def send(b: int, start: float) -> None:
        out.requests_by_broker[b] += 1
        out.partition_batches += len(buffers[b])
        for key, members in buffers[b].items():
            out.waits_s.extend(start - times[i] for i in members)
            sizes.pop(key, None)
        buffers[b] = {}
        due[b] = math.inf
        heapq.heapreplace(slots[b], start + sim.rtt_s)

    def partition(topic: int) -> int:
        n = traffic.partitions[topic]
        if not traffic.keyless:
            key = rng.randrange(traffic.key_cardinality or 1)
            return ((key * 2654435761 + key_salt) & 0xFFFFFFFF) % n
        if rules.partitioning.keyless == "round_robin":
            rr[topic] = (rr[topic] + 1) % n
            return rr[topic]
        cur = current[topic]
        if cur < 0 or (topic, cur) not in sizes:  # its batch left: a new batch, a new partition
            cur = rng.randrange(n) if n > 1 or cur < 0 else cur
            current[topic] = cur
        return cur

    def add(at: float, members: list[int], size: float, topic: int) -> None:
        p = partition(topic)
        b = traffic.leader(topic, p)
        key = (topic, p)
        buffers[b].setdefault(key, []).extend(members)
        sizes[key] = sizes.get(key, 0.0) + size + RECORD_OVERHEAD_BYTES
        if sizes[key] >= rules.max_message_bytes:
            due[b] = min(due[b], at)
        elif due[b] == math.inf:
            due[b] = at + linger

    for k, (at, start, end) in enumerate(handed):
        settle(brokers, ready, send, at)
        if rules.record_per_line:
            for j in range(start, end):
                add(at, [j], line, j % topics)
        else:
            add(at, list(range(start, end)), OTLP_EXPORT_BYTES + line * (end - start), k % topics)
    settle(brokers, ready, send, math.inf)


def settle(n: int, ready: Callable[[int], float], send: Callable[[int, float], None], upto: float) -> None:
    """Send the buffered request of each of brokers 0..n-1 that leaves (`ready`: inf with nothing
    buffered) by `upto`, in time order (the collector's and Sarama's per-broker buffers alike)."""
    while True:
        b = min(range(n), key=ready)
        if ready(b) > upto or ready(b) == math.inf:
            return
        send(b, ready(b))
