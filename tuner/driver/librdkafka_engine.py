"""Client kind `librdkafka`: N confluent-kafka producers across M OS processes, then delivery
verification. `LIBRDKAFKA_ENGINE` is the engine the registry (tuner/driver/engines.py) holds."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tuner.core.errors import KbtError
from tuner.driver.delivery.check import verify
from tuner.driver.delivery.ledger import Ledger, tail_key
from tuner.driver.engine import Capabilities, Engine, Hold, Placement
from tuner.driver.latency_buckets import LatencyBuckets
from tuner.driver.latency_hist import latency_ms, merged_ms
from tuner.driver.lifeline import orphan_safe
from tuner.driver.rdkafka_stats import WindowStats
from tuner.driver.rdkafka_worker import WorkerResult, WorkerTask, worker_main
from tuner.driver.result import ArtifactRef, ClientResult, DeliveryResult, DriverResult, LatencyMs
from tuner.spec.clients import kind_of
from tuner.spec.engine_id import EngineId
from tuner.spec.sweep import RunPlan

READY_TIMEOUT_S = 120.0
START_DELAY_S = 0.5
STOP_GRACE_S = 5.0
RESULT_SLACK_S = 150.0  # drain (60 s) + final statistics + writing the acked records


def split_producers(producers: int, processes: int) -> list[list[int]]:
    """Producer ids spread as evenly as possible: process i hosts ids i, i+M, i+2M, ..."""
    return [list(range(i, producers, processes)) for i in range(processes)]


def run_load(plan: RunPlan, placement: Placement, hold: Hold | None = None) -> DriverResult:
    """Drive one run and verify delivery of every acked record. `placement.security` holds the
    connection properties of a SASL_SSL listener (then its `bootstrap_servers` names that listener).
    With `hold`, the load goes on past the workload's duration (its measured window) for as long as
    `hold()` returns True (asked about once a second; the caller bounds it): a fault script beside
    the load ends before the load does however slow the machine is."""
    topics, bootstrap_servers = list(placement.topics), placement.bootstrap_servers
    exporter_ports, security = placement.exporter_ports, placement.security
    workload = plan.workload
    groups = split_producers(workload.producers, workload.processes)
    ctx = mp.get_context("spawn")  # never fork a process that holds librdkafka threads
    ready: Any = ctx.Queue()
    results: Any = ctx.Queue()
    start = ctx.Event()
    start_at = ctx.Value("d", 0.0)
    hold_until = ctx.Value("d", float("inf")) if hold is not None else None
    # The producers start from the file a user receives (the kind's artifact), not from the profile.
    artifact = kind_of(plan.profile).artifact(plan.profile)
    with tempfile.TemporaryDirectory(prefix="kbt-acked-") as acked_dir:
        tasks = [
            WorkerTask(
                index=i,
                plan=plan,
                topics=topics,
                bootstrap_servers=bootstrap_servers,
                run_id=placement.run_id,
                producer_ids=ids,
                exporter_port=exporter_ports[i] if i < len(exporter_ports) else None,
                acked_dir=acked_dir,
                security=dict(security),
                artifact=artifact.text,
            )
            for i, ids in enumerate(groups)
        ]
        procs = [
            ctx.Process(
                target=orphan_safe,
                args=(os.getpid(), worker_main, t, ready, start, start_at, results, hold_until),
                name=f"kbt-driver-{t.index}",
            )
            for t in tasks
        ]
        try:
            for proc in procs:
                proc.start()
            _wait_ready(ready, results, len(procs))
            t0 = time.time() + START_DELAY_S
            start_at.value = t0
            start.set()
            load_end = _LoadEnd(t0 + workload.duration_s, hold, hold_until)
            outs = _collect(results, len(procs), load_end.at, procs)
            for proc in procs:
                proc.join(timeout=10)
        except BaseException:
            _stop(procs)
            raise
        client = _client_result(plan, outs, t0).model_copy(
            update={"artifact": ArtifactRef(filename=artifact.filename, sha256=artifact.sha256)}
        )
        delivery = verify_delivery(bootstrap_servers, topics, outs, security)
    return DriverResult(client=client, delivery=delivery, topics=topics)


def _wait_ready(ready: Any, results: Any, n: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    seen = 0
    while seen < n:
        with contextlib.suppress(queue.Empty):  # a worker's report before every one is ready: its error
            kind, index, payload = results.get_nowait()
            raise KbtError(
                f"driver process {index} failed: {payload}" if kind == "error" else "unexpected result"
            )
        try:
            ready.get(timeout=0.5)
            seen += 1
        except queue.Empty:
            if time.monotonic() > deadline:
                raise KbtError(f"driver processes not ready after {READY_TIMEOUT_S:g} s") from None


class _LoadEnd:
    """When the load ends: the window's end, or, while `hold()` says so, later; releasing the hold
    tells the workers (through the shared `hold_until`) to stop at once."""

    def __init__(self, window_end: float, hold: Callable[[], bool] | None, hold_until: Any) -> None:
        self.window_end = window_end
        self.hold = hold
        self.hold_until = hold_until
        self.released: float | None = None if hold is not None else window_end

    def at(self) -> float:
        if self.released is None:
            assert self.hold is not None
            if self.hold():
                return max(self.window_end, time.time())
            self.released = max(self.window_end, time.time())
            self.hold_until.value = self.released
        return self.released


def _collect(results: Any, n: int, load_end: Callable[[], float], procs: list[Any]) -> list[WorkerResult]:
    """The workers' results; they have until RESULT_SLACK_S after the load's end to send them."""
    outs: list[WorkerResult] = []
    while len(outs) < n:
        try:
            kind, index, payload = results.get(timeout=1.0)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise KbtError(f"driver process {dead[0].name} exited with {dead[0].exitcode}") from None
            if time.time() > load_end() + RESULT_SLACK_S:
                raise KbtError(
                    f"driver processes did not finish within {RESULT_SLACK_S:g} s of the load's end"
                ) from None
            continue
        if kind == "error":
            raise KbtError(f"driver process {index} failed: {payload}")
        outs.append(payload)
    return sorted(outs, key=lambda r: r.index)


def _stop(procs: list[Any]) -> None:
    """Terminate every driver process still running (SIGTERM, then SIGKILL after a grace)."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for proc in procs:
        proc.join(timeout=max(0.1, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=2)


def _client_result(plan: RunPlan, outs: list[WorkerResult], t0: float) -> ClientResult:
    workload = plan.workload
    stats = WindowStats()
    for out in outs:
        stats.merge(out.stats)
    mean_payload = sum(o.mean_payload_bytes * o.producers for o in outs) / max(
        1, sum(o.producers for o in outs)
    )
    batches = stats.batches
    queue, rtt = stats.queue_latency.as_ms(), stats.rtt.as_ms()
    return ClientResult(
        engine="librdkafka",
        producers=workload.producers,
        processes=workload.processes,
        started_at=t0,
        window_start=t0 + workload.warmup_s,
        window_end=t0 + workload.duration_s,
        finished_at=max(o.flushed_at for o in outs),
        offered_records=sum(o.offered for o in outs),
        records_sent=sum(o.sent for o in outs),
        records_acked=sum(o.acked for o in outs),
        records_failed=sum(o.failed for o in outs),
        bytes_acked=sum(o.bytes_acked for o in outs),
        produce_requests=round(sum(stats.requests.values())),
        produce_requests_by_broker={k: round(v) for k, v in sorted(stats.requests.items())},
        records_acked_total=sum(o.acked_total for o in outs),
        produce_requests_total=sum(stats.requests_total.values()),
        records_per_request=stats.batch_records / batches if batches else None,
        batch_bytes=stats.batch_bytes / batches if batches else None,
        compression_ratio=stats.batch_records * mean_payload / stats.batch_bytes
        if stats.batch_bytes
        else None,
        delivery_latency_ms=_from_stats(queue, rtt, sum(o.acked for o in outs))
        if any(o.ranges for o in outs)
        else merged_ms(o.latency_hist for o in outs),
        queue_latency_ms=queue,
        rtt_ms=rtt,
        send_lag_ms=_send_lag(outs) if workload.rate_per_producer != "max" else None,
        max_producer_rss_mb=max(o.rss_mb / max(1, o.producers) for o in outs),
    )


def _send_lag(outs: list[WorkerResult]) -> LatencyMs:
    merged = LatencyBuckets()
    for out in outs:
        merged.add_counts(out.send_lag_us)
    return latency_ms(merged.histogram())


def _from_stats(queue: LatencyMs | None, rtt: LatencyMs | None, count: int) -> LatencyMs:
    """Closed loop (no per-record reports): delivery latency as librdkafka's queue latency plus the
    broker round trip, each percentile summed (an upper bound of that percentile of the sum)."""
    if queue is None or rtt is None:
        return LatencyMs()

    def add(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a + b

    return LatencyMs(
        count=count,
        mean=add(queue.mean, rtt.mean),
        p50=add(queue.p50, rtt.p50),
        p99=add(queue.p99, rtt.p99),
        max=add(queue.max, rtt.max),
    )


def verify_delivery(
    bootstrap: str,
    topics: list[str],
    outs: list[WorkerResult],
    security: Mapping[str, str] | None = None,
) -> DeliveryResult:
    """Every topic read back against what was acked: the acked offsets, or in the closed loop the
    ranges sent less the failed records; its indeterminate records (queued when a drain timed out)
    may be missing from any topic."""
    indeterminate = sum(o.indeterminate for o in outs)
    closed = any(o.ranges for o in outs)
    ledger = Ledger(topics=list(topics), unknown=indeterminate if closed else 0)
    for topic in topics:
        files = [Path(o.acked_files[topic]) for o in outs if topic in o.acked_files]
        if closed:
            ledger.read_range_files(files)
        else:
            ledger.read_acked_files(topic, files)
    verdict = verify(bootstrap, ledger, tail_key, security=security)
    return verdict.result(failed=sum(o.failed_total for o in outs), indeterminate=indeterminate)


# confluent-kafka (librdkafka) producers across worker processes; the one engine that holds its load.
LIBRDKAFKA_ENGINE = Engine(
    EngineId.LIBRDKAFKA,
    Capabilities(secure=True, holds_load=True, live_trials=True, counts_requests=True, live_exporter=True),
    run_load,
)
