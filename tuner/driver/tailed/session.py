"""One tailed-pod run from the pods' start to the read-back's count, shared by the engines that run a
real shipper per pod (real Filebeat, the OpenTelemetry Collector):

    run = run_pods(pods, start, counters, shipper="the collector", ...)
    result = tailed_result("otelcol", workload, run.judged, pods, failed, topics, artifact)

The pods start and answer, the writers fill their files on one schedule, the read-back counts the
topic until it holds every written line or the shipper's drain time has passed, and whatever
happens the pods and writers are stopped before the read-back's tally is taken. What stays with
each engine is its shipper's own: how a pod starts, its counters, its drain time."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from tuner.core.errors import Interrupted, KbtError
from tuner.driver.engine_process import stop
from tuner.driver.latency_buckets import LatencyBuckets
from tuner.driver.tailed.pods import (
    RestartsOnTakenPort,
    TailedRun,
    start_writers,
    wait_started,
    wait_writers,
)
from tuner.driver.tailed.readback import ReadBack
from tuner.spec.workload import WorkloadSpec

START_TIMEOUT_S = 30.0  # every pod answers on its port
START_SLACK_S = 1.0  # then the writers start together, this long after
AFTER_STOP_S = 3.0  # what a stopping shipper still sends on its way out

P = TypeVar("P", bound=RestartsOnTakenPort[Any])
S = TypeVar("S")


@dataclass(frozen=True)
class PodsRun(Generic[S]):
    """A finished tailed-pod run: what to judge it by and the pods' own counters."""

    judged: TailedRun
    counters: S


def run_pods(
    pods: Sequence[P],
    start: Callable[[P], None],
    counters: Callable[[], S],
    *,
    shipper: str,
    workload: WorkloadSpec,
    rate: float,
    payloads: list[str],
    work: Path,
    read_back: Callable[[tuple[float, float]], ReadBack],
    drain_s: float,
    stop_wait_s: float,
) -> PodsRun[S]:
    """Run `pods` through the workload's schedule. `shipper` names it in one-line errors ("real
    Filebeat", "the collector"); `read_back` opens the topic's reader for the measured window;
    `drain_s` is how long after the last write the shipper may take to send what it holds,
    `stop_wait_s` how long a stopping pod may take to exit."""
    writers: list[subprocess.Popen[bytes]] = []
    reader: ReadBack | None = None
    drained, total = False, 0
    written: dict[int, int] = {}
    send_lag = LatencyBuckets()
    counted: S | None = None
    try:
        for pod in pods:
            start(pod)
        wait_started(pods, shipper, START_TIMEOUT_S)
        started_at = time.time()
        start_at = started_at + START_SLACK_S
        window = (start_at + workload.warmup_s, start_at + workload.duration_s)
        reader = read_back(window)
        writers = start_writers(pods, workload.processes, rate, start_at, workload.duration_s, payloads, work)
        written, send_lag = wait_writers(writers, workload.duration_s + 30.0)
        total = sum(written.values())
        drained = reader.wait_for(total, time.time() + drain_s)
        counted = counters()
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    finally:
        # A pod restarted on a new port has a new process: stop whichever each pod has now.
        stop([*(pod.proc for pod in pods if pod.proc is not None), *writers], stop_wait_s)
        if reader is not None and not drained and total:
            reader.wait_for(total, time.time() + AFTER_STOP_S)
        tally = reader.close() if reader is not None else None
    finished_at = time.time()
    assert reader is not None and tally is not None and counted is not None
    if reader.error:
        raise KbtError(f"reading the topic back failed: {reader.error}")
    problems = [f for f in (p.failure() for p in pods) if f]  # each pod's log read once
    if problems and not drained:
        raise KbtError(f"{shipper} failed: {problems[0]}")
    judged = TailedRun(
        written, tally, reader.caught_up, rate, start_at, started_at, finished_at, window, send_lag
    )
    return PodsRun(judged=judged, counters=counted)
