"""One driver process: a few confluent-kafka producers ("pods") on one event loop.

Open loop: each producer has a schedule (rate msgs/s, start phase spread over all producers);
records are produced when due and their delivery latency is measured from the *intended* send
time, so a stalled client shows up as latency instead of hiding (no coordinated omission).
Closed loop (`max`): produce until the local queue is full, then serve callbacks. The hot path
only ever calls `poll(0)`.
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

from confluent_kafka import KafkaError, Message, Producer
from hdrh.histogram import HdrHistogram

from tuner.driver.client_exporter import ClientExporter
from tuner.driver.payload import Payloads
from tuner.driver.rdkafka_stats import StatsTrack, WindowStats
from tuner.spec.sweep import RunPlan

STATS_INTERVAL_MS = 1000
FLUSH_TIMEOUT_S = 60.0
LATENCY_MAX_US = 3_600_000_000
BURST = 500  # closed loop: records per producer between polls
ID_SHIFT = 40  # record id = producer << 40 | sequence


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
    stats: WindowStats = field(default_factory=WindowStats)
    mean_payload_bytes: float = 0.0
    rss_mb: float = 0.0
    exported: bool = False
    flushed_at: float = 0.0
    acked_files: dict[str, str] = field(default_factory=dict)


class _Pod:
    """One producer and its schedule."""

    def __init__(self, pid: int, conf: dict[str, Any], payloads: Payloads, phase: float) -> None:
        self.pid = pid
        self.name = f"p{pid}"
        self.track = StatsTrack()
        self.producer = Producer({**conf, "stats_cb": self._on_stats})
        self.payloads = payloads
        self.phase = phase
        self.seq = 0
        self.exporter: ClientExporter | None = None

    def _on_stats(self, raw: str) -> None:
        self.track.add(raw, time.time())
        if self.exporter is not None:
            self.exporter.on_stats(self.name, raw)


class Worker:
    def __init__(self, task: WorkerTask) -> None:
        self.task = task
        plan = task.plan
        self.workload = plan.workload
        conf: dict[str, Any] = {
            "bootstrap.servers": task.bootstrap_servers,
            "client.id": f"kbt-{plan.name}-{task.index}",
            "statistics.interval.ms": STATS_INTERVAL_MS,
            **plan.profile.librdkafka_config(),
        }
        total = self.workload.producers
        rate = self.workload.rate_per_producer
        self.interval = 0.0 if rate == "max" else 1.0 / float(rate)
        self.pods = [
            _Pod(pid, conf, Payloads.for_workload(self.workload, seed=pid + 1), self.interval * pid / total)
            for pid in task.producer_ids
        ]
        pool = self.pods[0].payloads.pool
        self.mean_payload = sum(len(e) for e in pool) / len(pool)
        self.result = WorkerResult(
            index=task.index, producers=len(self.pods), mean_payload_bytes=self.mean_payload
        )
        self.hist = HdrHistogram(1, LATENCY_MAX_US, 3)
        self.acked: dict[str, list[tuple[int, int, int]]] = {t: [] for t in task.topics}
        self.exporter: ClientExporter | None = None
        if task.exporter_port is not None:
            exporter = ClientExporter(task.run_id, "librdkafka")
            if exporter.serve(task.exporter_port):
                self.exporter = exporter
                self.result.exported = True
                for pod in self.pods:
                    pod.exporter = exporter
        self.window = (0.0, 0.0)

    # ---- delivery -------------------------------------------------------------------------

    def _callback(self, pod: _Pod, intended: float, size: int, rid: int) -> Any:
        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            now = time.time()
            in_window = self.window[0] <= intended < self.window[1]
            if err is not None:
                self.result.failed_total += 1
                self.result.failed += in_window
                if self.exporter is not None:
                    self.exporter.on_delivery(pod.name, 0, 0, 1, 0)
                return
            self.result.acked_total += 1
            self.acked[msg.topic() or ""].append((msg.partition() or 0, msg.offset() or 0, rid))
            if in_window:
                self.result.acked += 1
                self.result.bytes_acked += size
                self.hist.record_value(min(max(1, int((now - intended) * 1e6)), LATENCY_MAX_US))
            if self.exporter is not None:
                self.exporter.on_delivery(pod.name, 1, size, 0, 0)

        return on_delivery

    def _produce(self, pod: _Pod, intended: float) -> bool:
        rid = (pod.pid << ID_SHIFT) | pod.seq
        key, value = pod.payloads.next(rid)
        topic = self.task.topics[pod.seq % len(self.task.topics)]
        try:
            pod.producer.produce(
                topic, value, key, on_delivery=self._callback(pod, intended, len(value), rid)
            )
        except BufferError:  # local queue full: serve callbacks, retry on the next turn
            pod.producer.poll(0)
            return False
        if self.window[0] <= intended < self.window[1]:
            self.result.sent += 1
        pod.seq += 1
        return True

    # ---- the loop -----------------------------------------------------------------------------

    def run(self, t0: float) -> WorkerResult:
        duration, warmup = self.workload.duration_s, self.workload.warmup_s
        self.window = (t0 + warmup, t0 + duration)
        t_end = t0 + duration
        while time.time() < t0:
            for pod in self.pods:
                pod.producer.poll(0)
            time.sleep(0.005)
        if self.interval > 0:
            self._open_loop(t0, t_end)
        else:
            self._closed_loop(t_end)
        self._drain()
        self.result.latency_hist = self.hist.encode()
        self._collect_stats()
        self.result.rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self._write_acked()
        return self.result

    def _open_loop(self, t0: float, t_end: float) -> None:
        interval = self.interval
        while True:
            now = time.time()
            if now >= t_end:
                break
            next_due = t_end
            for pod in self.pods:
                due = t0 + pod.phase + pod.seq * interval
                while due <= now and due < t_end:
                    if not self._produce(pod, due):
                        break
                    due = t0 + pod.phase + pod.seq * interval
                pod.producer.poll(0)
                next_due = min(next_due, due)
            pause = next_due - time.time()
            if pause > 0:
                time.sleep(min(pause, 0.005))
        ws, we = self.window
        for pod in self.pods:  # what the schedule offered inside the window
            base = t0 + pod.phase
            first = max(0, math.ceil((ws - base) / interval))
            last = max(0, math.ceil((we - base) / interval))
            self.result.offered += last - first

    def _closed_loop(self, t_end: float) -> None:
        while time.time() < t_end:
            for pod in self.pods:
                for _ in range(BURST):
                    if not self._produce(pod, time.time()):
                        break
                pod.producer.poll(0)
        self.result.offered = self.result.sent

    def _drain(self) -> None:
        deadline = time.time() + FLUSH_TIMEOUT_S
        for pod in self.pods:
            pod.producer.flush(max(0.1, deadline - time.time()))
        self.result.indeterminate = sum(len(pod.producer) for pod in self.pods)
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

    def _write_acked(self) -> None:
        for topic, rows in self.acked.items():
            path = Path(self.task.acked_dir) / f"acked-{self.task.index}-{topic}.txt"
            with path.open("w", encoding="utf-8") as out:
                out.writelines(f"{p} {o} {rid:016x}\n" for p, o, rid in rows)
            self.result.acked_files[topic] = str(path)


def worker_main(
    task: WorkerTask, ready: Queue[Any], start: Event, start_at: Any, results: Queue[Any]
) -> None:
    """Process entry point (multiprocessing spawn)."""
    worker: Worker | None = None
    try:
        worker = Worker(task)
        ready.put(task.index)
        start.wait()
        results.put(("ok", task.index, worker.run(start_at.value)))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: leave at once
        if worker is not None:
            for pod in worker.pods:
                pod.producer.purge()
        os._exit(130)
    except Exception as exc:  # reported to the parent as one line
        results.put(("error", task.index, f"{type(exc).__name__}: {exc}"))
