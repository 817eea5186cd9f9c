"""One driver process: a few confluent-kafka producers ("pods") on one event loop.

Open loop: each producer has a schedule (rate msgs/s, start phase spread over all producers);
records are produced when due and their delivery latency is measured from the *intended* send
time, so a stalled client shows up as latency instead of hiding (no coordinated omission).
Closed loop (`max`): produce in bursts until the local queue is full, serving callbacks between
bursts. The hot path only ever calls `poll(0)`.

Every record's value ends with its id, `producer << 40 | sequence`, so the delivery callback needs
no per-record closure: it appends to a `DeliveryLog`, and `_digest` (off the produce path: at each
statistics emission when exporting, else after the drain) derives from the id the record's
producer, intended send time, size and whether it falls in the measured window.

The closed loop asks for error reports only: a Python callback per acked record cost as much CPU as
producing it (profiled: about 60% of the loop). A producer's sequences are dense, so its acked
records are every sequence it produced less the failed (reported) and the indeterminate ones, and
delivery is verified against those ranges (a RangeFile, tuner.driver.delivery.ledger). Its
delivery latency comes from librdkafka's statistics (queue latency and broker round trip) instead of
per-record reports.
"""

from __future__ import annotations

import math
import os
import resource
import time
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from tuner.core.kafka_clients import Connection, new_producer
from tuner.core.properties import parse_properties
from tuner.driver.client_exporter import ClientExporter
from tuner.driver.delivery.ledger import RangeFile
from tuner.driver.delivery_log import CLOSED, ID_HEX, OPEN, DeliveryLog
from tuner.driver.key_shares import partitioner
from tuner.driver.latency_buckets import LatencyBuckets
from tuner.driver.payload import ID_SHIFT, SEQ_MASK, Payloads, key_tables
from tuner.driver.rdkafka_stats import Emission, StatsTrack, WindowStats
from tuner.spec.clients import kind_of
from tuner.spec.sweep import RunPlan

__all__ = ["Worker", "WorkerResult", "WorkerTask", "producer_config", "worker_main"]

STATS_INTERVAL_MS = 1000
ARTIFACT = "librdkafka.properties"
FLUSH_TIMEOUT_S = 60.0
BURST = 500  # closed loop: records per producer between polls
FULL_PAUSE_S = 0.0005  # closed loop: every local queue full, let librdkafka's threads catch up
NOT_YET = 1 << 62  # closed loop: window-start sequence before the window starts


@dataclass(frozen=True)
class WorkerTask:
    index: int
    plan: RunPlan
    topics: list[str]
    bootstrap_servers: str
    run_id: str
    producer_ids: list[int]
    exporter_port: int | None
    acked_dir: str
    # Connection properties of a SASL_SSL listener and expanded secret references; applied last.
    security: dict[str, str] = field(default_factory=dict)
    # The kind's rendered librdkafka.properties (ClientKind.artifact), the producers' settings;
    # None: rendered here from the plan's profile (the same text).
    artifact: str | None = None


@dataclass
class WorkerResult:
    index: int
    producers: int
    offered: int = 0
    sent: int = 0
    acked: int = 0
    failed: int = 0
    bytes_acked: int = 0
    acked_total: int = 0
    failed_total: int = 0
    indeterminate: int = 0
    latency_hist: bytes = b""
    # Open loop: how late produce() ran against the schedule, microseconds -> records (in-window
    # records, each counted at its burst's oldest due time: an upper bound, one sample per burst).
    send_lag_us: dict[int, int] = field(default_factory=dict)
    stats: WindowStats = field(default_factory=WindowStats)
    mean_payload_bytes: float = 0.0
    rss_mb: float = 0.0
    flushed_at: float = 0.0
    acked_files: dict[str, str] = field(default_factory=dict)
    ranges: bool = False  # acked_files hold RangeFiles (closed loop), not acked offsets


def producer_config(artifact: str, client_id: str, error_reports_only: bool = False) -> dict[str, Any]:
    """A producer's settings: the rendered file's properties, read as a deployment reads them (the
    one properties reader), then what the file leaves to its environment, layered explicitly: a
    client.id when the file names none, kbt's measurement hooks (statistics; error-only delivery
    reports in the closed loop); the Connection adds the brokers and security when the producer is
    built (Connection.conf), as a deployment's environment would."""
    conf: dict[str, Any] = parse_properties(artifact, ARTIFACT)
    conf.setdefault("client.id", client_id)
    conf["statistics.interval.ms"] = STATS_INTERVAL_MS
    if error_reports_only:
        conf["delivery.report.only.error"] = True
    return conf


class _Pod:
    """One producer, its schedule and its counters since the last export."""

    def __init__(
        self, worker: Worker, pid: int, conf: dict[str, Any], payloads: Payloads, phase: float
    ) -> None:
        self.worker = worker
        self.pid = pid
        self.name = f"p{pid}"
        self.track = StatsTrack()
        settings = {**conf, "stats_cb": self._on_stats, "on_delivery": worker.on_delivery}
        self.producer = new_producer(worker.connection, settings)
        self.payloads = payloads
        self.pool = payloads.pool
        self.prefixes = payloads.prefixes()  # value = prefixes[seq % n] + 16 hex digits of the id
        self.sizes = [len(p) + ID_HEX for p in self.prefixes]
        self.keyless = payloads.keyless
        self.topics = len(worker.task.topics)
        self.phase = phase
        self.seq = 0
        self.window_seq = NOT_YET  # closed loop: first sequence produced inside the window
        self.unexported = [0, 0, 0]  # acked, bytes, failed since the last export
        self.done_exported = 0  # closed loop: records out of the queue at the last export
        self.offered_exported = 0

    def key(self, seq: int) -> bytes | None:
        if self.keyless:
            return None
        return self.payloads.key_for(self.pool[seq % len(self.pool)], seq % self.topics)

    def _on_stats(self, raw: str) -> None:
        now = time.time()
        emission = Emission.parse(raw)
        self.track.add(emission, now)
        exporter = self.worker.exporter
        if exporter is not None:
            exporter.on_stats(self.name, emission)
            if self is self.worker.pods[0]:
                self.worker.export(exporter)


class Worker:
    def __init__(self, task: WorkerTask) -> None:
        self.task = task
        plan = task.plan
        self.workload = plan.workload
        self.connection = Connection(task.bootstrap_servers, task.security)
        total = self.workload.producers
        rate = self.workload.rate_per_producer
        self.interval = 0.0 if rate == "max" else 1.0 / float(rate)
        self.ranges = self.interval <= 0  # closed loop: error reports only (module docstring)
        artifact = (
            task.artifact if task.artifact is not None else kind_of(plan.profile).artifact(plan.profile).text
        )
        conf = producer_config(artifact, f"kbt-{plan.name}-{task.index}", self.ranges)
        self.log = DeliveryLog(OPEN if self.interval > 0 else CLOSED)
        self.on_delivery = self.log.callback()
        self.latency = LatencyBuckets()
        self.send_lag = LatencyBuckets()
        self.exporter: ClientExporter | None = None
        # librdkafka's default partitioner hashes keys by CRC32 (consistent_random)
        tables = key_tables(self.workload, partitioner(str(conf.get("partitioner", "consistent_random"))))
        self.pods = [
            _Pod(self, pid, conf, Payloads.for_workload(self.workload, seed=pid + 1, tables=tables), phase)
            for pid, phase in ((p, self.interval * p / total) for p in task.producer_ids)
        ]
        self.by_pid = {pod.pid: pod for pod in self.pods}
        sizes = self.pods[0].sizes
        self.mean_payload = sum(sizes) / len(sizes)
        self.result = WorkerResult(
            index=task.index,
            producers=len(self.pods),
            mean_payload_bytes=self.mean_payload,
            ranges=self.ranges,
        )
        if task.exporter_port is not None:
            self.exporter = ClientExporter(task.run_id, "librdkafka").served(task.exporter_port)
        self.t0 = 0.0
        self.window = (0.0, 0.0)
        self.hold_until: Any = None

    # ---- accounting (off the produce path) --------------------------------------------------

    def _digest(self) -> None:
        """Account the delivery reports logged since the last digest."""
        rids, marks, failed = self.log.take()
        result, latency, by_pid = self.result, self.latency, self.by_pid
        ws, we = self.window
        t0, interval = self.t0, self.interval
        for rid, mark in zip(rids, marks, strict=True):
            pod, seq = by_pid[rid >> ID_SHIFT], rid & SEQ_MASK
            size = pod.sizes[seq % len(pod.sizes)]
            pod.unexported[0] += 1
            pod.unexported[1] += size
            # Open loop: the mark is the ack time, the latency runs from the intended send time, which
            # says whether the record is the window's. Closed loop: the mark is the latency.
            intended = t0 + pod.phase + seq * interval if interval > 0 else 0.0
            if ws <= intended < we if interval > 0 else seq >= pod.window_seq:
                result.acked += 1
                result.bytes_acked += size
                latency.add_s(mark - intended)
        for rid in failed:
            pod, seq = by_pid[rid >> ID_SHIFT], rid & SEQ_MASK
            pod.unexported[2] += 1
            intended = t0 + pod.phase + seq * interval if interval > 0 else 0.0
            result.failed += ws <= intended < we if interval > 0 else seq >= pod.window_seq

    def _offered(self, pod: _Pod, until: float, whole_run: bool = False) -> int:
        """Records `pod`'s schedule offered inside the window up to `until` (`whole_run`: from the
        start, warm-up included, as the acked counter the exporter sits beside counts)."""
        if self.interval <= 0:
            return max(0, pod.seq - (0 if whole_run else pod.window_seq))
        ws, we = self.window
        start = self.t0 + pod.phase
        first = max(0, math.ceil(((self.t0 if whole_run else ws) - start) / self.interval))
        last = max(0, math.ceil((min(until, we) - start) / self.interval))
        return max(0, last - first)

    def export(self, exporter: ClientExporter) -> None:
        """Delivery counters of every producer and this process's window latency so far."""
        self._digest()
        now = time.time()
        for pod in self.pods:
            if self.ranges:  # no per-record reports: records out of the queue, less the failed
                done = pod.seq - len(pod.producer)
                delta = max(0, done - pod.done_exported - pod.unexported[2])
                pod.unexported[0], pod.unexported[1] = delta, round(delta * self.mean_payload)
                pod.done_exported = max(pod.done_exported, done)
            # The whole run's offer: a window-only count drew offered at 0 beside a full acked
            # rate through each warm-up (the report's "offered vs acked over time").
            offered = self._offered(pod, now, whole_run=True)
            acked, acked_bytes, failed = pod.unexported
            exporter.on_delivery(pod.name, acked, acked_bytes, failed, offered - pod.offered_exported)
            pod.unexported = [0, 0, 0]
            pod.offered_exported = offered
        if self.latency.counts:
            exporter.on_latency(f"process-{self.task.index}", list(self.latency.counts.items()))

    # ---- the loop -----------------------------------------------------------------------------

    def run(self, t0: float, hold_until: Any = None) -> WorkerResult:
        """Produce from `t0` for the workload's duration, the measured window. With `hold_until` (a
        shared double, epoch seconds, that the parent may lower or raise while the load runs), keep
        producing past the window until that time: the load outlasts a fault script that needs
        longer on a slow machine, and every record it sends is still verified."""
        duration, warmup = self.workload.duration_s, self.workload.warmup_s
        self.t0 = t0
        self.window = (t0 + warmup, t0 + duration)
        t_end = t0 + duration
        self.hold_until = hold_until
        while time.time() < t0:
            for pod in self.pods:
                pod.producer.poll(0)
            time.sleep(0.005)
        if self.interval > 0:
            self._open_loop(t0, t_end)
        else:
            self._closed_loop(t_end)
        self._drain()
        self._collect_stats()
        self._digest()
        if self.exporter is not None:  # the final counts, then one scrape that carries them
            self.export(self.exporter)
            self.exporter.await_scrape()
        result = self.result
        result.offered = sum(self._offered(pod, t_end) for pod in self.pods)
        result.acked_total, result.failed_total = self.log.acked_total, self.log.failed_total
        result.latency_hist = self.latency.histogram().encode()
        result.send_lag_us = dict(self.send_lag.counts)
        result.rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        topics = self.task.topics
        if self.ranges:
            self._account_ranges()
            result.acked_files = self._write_ranges(Path(self.task.acked_dir))
        else:
            result.acked_files = self.log.write_acked(
                Path(self.task.acked_dir), self.task.index, lambda rid: topics[(rid & SEQ_MASK) % len(topics)]
            )
        return result

    def _account_ranges(self) -> None:
        """Closed loop: acked = produced - failed - indeterminate (the last records queued)."""
        result = self.result
        for pod in self.pods:
            first, end = pod.window_seq, pod.seq
            result.acked += end - first
            result.bytes_acked += _range_bytes(pod.sizes, first, end)
        for rid in self.log.failed_rids:
            pod, seq = self.by_pid[rid >> ID_SHIFT], rid & SEQ_MASK
            if seq >= pod.window_seq:
                result.acked -= 1
                result.bytes_acked -= pod.sizes[seq % len(pod.sizes)]
        result.acked -= result.indeterminate
        result.bytes_acked -= round(result.indeterminate * self.mean_payload)
        result.acked_total = sum(pod.seq for pod in self.pods) - result.failed_total - result.indeterminate

    def _write_ranges(self, directory: Path) -> dict[str, str]:
        topics = self.task.topics
        nt = len(topics)
        files: dict[str, str] = {}
        for k, topic in enumerate(topics):
            ranges = RangeFile(
                topic_index=k,
                topics=nt,
                produced={pod.pid: pod.seq for pod in self.pods},
                failed=[rid for rid in self.log.failed_rids if (rid & SEQ_MASK) % nt == k],
            )
            path = directory / f"ranges-{self.task.index}-{topic}.json"
            ranges.write(path)
            files[topic] = str(path)
        return files

    def _open_loop(self, t0: float, t_end: float) -> None:
        interval, topics, nt = self.interval, self.task.topics, len(self.task.topics)
        ws, we = self.window
        sent = 0
        lag = self.send_lag.add_s
        while (now := time.time()) < (end := self._end(t_end, now)):
            next_due = end
            for pod in self.pods:
                produce, prefixes, seq = pod.producer.produce, pod.prefixes, pod.seq
                base, n, start = pod.pid << ID_SHIFT, len(pod.prefixes), t0 + pod.phase
                due = start + seq * interval
                # Send lag: produce time - intended send time, sampled once per burst at its oldest
                # record (the latest one), weighted by the burst's in-window records.
                head, sent_before = due, sent
                began = time.time() if due <= now else now
                while due <= now and due < end:
                    try:
                        produce(topics[seq % nt], prefixes[seq % n] + b"%016x" % (base | seq), pod.key(seq))
                    except BufferError:  # local queue full: serve callbacks, retry on the next turn
                        break
                    sent += ws <= due < we
                    seq += 1
                    due = start + seq * interval
                pod.seq = seq
                if sent > sent_before:
                    lag(began - head, sent - sent_before)
                pod.producer.poll(0)
                next_due = min(next_due, due)
            pause = next_due - time.time()
            if pause > 0:
                time.sleep(min(pause, 0.005))
        self.result.sent = sent

    def _closed_loop(self, t_end: float) -> None:
        topics, nt = self.task.topics, len(self.task.topics)
        ws = self.window[0]
        in_window = False
        while (now := time.time()) < self._end(t_end, now):
            if not in_window and now >= ws:
                in_window = True
                for pod in self.pods:
                    pod.window_seq = pod.seq
            progress = 0
            for pod in self.pods:
                produce, prefixes, seq = pod.producer.produce, pod.prefixes, pod.seq
                base, n, keyless, first = pod.pid << ID_SHIFT, len(prefixes), pod.keyless, seq
                for _ in range(BURST):
                    try:
                        produce(topics[seq % nt], prefixes[seq % n] + b"%016x" % (base | seq),
                                None if keyless else pod.key(seq))  # fmt: skip
                    except BufferError:  # local queue full: serve callbacks first
                        break
                    seq += 1
                pod.seq = seq
                progress += seq - first
                pod.producer.poll(0)
            if progress == 0:
                time.sleep(FULL_PAUSE_S)
        if not in_window:  # the window never started (cannot happen with warm-up < duration)
            for pod in self.pods:
                pod.window_seq = pod.seq
        self.result.sent = sum(pod.seq - pod.window_seq for pod in self.pods)

    def _end(self, t_end: float, now: float) -> float:
        """When the load ends: the window's end, or, once past it, later while the parent holds it."""
        if now < t_end or self.hold_until is None:
            return t_end
        return max(t_end, float(self.hold_until.value))

    def _drain(self) -> None:
        deadline = time.time() + FLUSH_TIMEOUT_S
        left = sum(pod.producer.flush(max(0.1, deadline - time.time())) for pod in self.pods)
        # Closed loop (no success reports): what the timed-out flush left queued. Open loop: records
        # produced that never got a delivery report. Not len(producer): that also counts
        # statistics and error events waiting for poll(), which made clean runs "indeterminate".
        if self.ranges:
            self.result.indeterminate = left
        else:
            reported = self.log.acked_total + self.log.failed_total
            self.result.indeterminate = max(0, sum(pod.seq for pod in self.pods) - reported)
        self.result.flushed_at = time.time()

    def _collect_stats(self) -> None:
        """Wait for one statistics emission after the drain so whole-run totals are final."""
        deadline = time.time() + 2.5 * STATS_INTERVAL_MS / 1000
        flushed = self.result.flushed_at
        while time.time() < deadline:
            if all(p.track.emissions and p.track.emissions[-1].t > flushed for p in self.pods):
                break
            for pod in self.pods:
                pod.producer.poll(0.05)
        for pod in self.pods:
            self.result.stats.merge(pod.track.window(self.window[0]))


def _range_bytes(sizes: list[int], first: int, end: int) -> int:
    """Sum of sizes[seq % len(sizes)] for seq in [first, end)."""
    n = len(sizes)
    if end <= first:
        return 0
    whole, rest = divmod(end - first, n)
    start = first % n
    tail = sizes[start : start + rest] + sizes[: max(0, start + rest - n)]
    return whole * sum(sizes) + sum(tail)


def worker_main(
    task: WorkerTask,
    ready: Queue[Any],
    start: Event,
    start_at: Any,
    results: Queue[Any],
    hold_until: Any = None,
) -> None:
    """Process entry point (multiprocessing spawn)."""
    worker: Worker | None = None
    try:
        worker = Worker(task)
        ready.put(task.index)
        start.wait()
        results.put(("ok", task.index, worker.run(start_at.value, hold_until)))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: leave at once
        if worker is not None:
            for pod in worker.pods:
                pod.producer.purge()
        os._exit(130)
    except Exception as exc:  # reported to the parent as one line
        results.put(("error", task.index, f"{type(exc).__name__}: {exc}"))
