"""One tailed-pod run from the pods' start to its DriverResult, shared by the engines that run a
real shipper per pod (real Filebeat, the OpenTelemetry Collector):

    run = run_pods(lambda i, work: Pod(i, work, secure), start, counters, failed, shipper=..., ...)

The run topic takes the broker's append time, the pods start and answer, the writers fill their
files on one schedule, the read-back counts the topic until it holds every written line or the
shipper's drain time has passed, and whatever happens the pods and writers are stopped before the
read-back's tally is taken. What stays with each engine is its shipper's own: how a pod starts, its
counters, its drain time."""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from tuner.core.errors import Interrupted, KbtError
from tuner.core.kafka_clients import Connection
from tuner.core.signals import sigterm_interrupts
from tuner.driver.delivery.check import judge
from tuner.driver.delivery.ledger import Ledger
from tuner.driver.engine import Placement
from tuner.driver.engine_process import stop
from tuner.driver.latency_hist import latency_ms
from tuner.driver.result import ArtifactRef, ClientResult, DriverResult
from tuner.driver.tailed.pods import (
    RestartsOnTakenPort,
    log_append_time,
    start_writers,
    wait_started,
    wait_writers,
    written_in_window,
)
from tuner.driver.tailed.readback import MESSAGE, ReadBack
from tuner.spec.clients.base import Rendered
from tuner.spec.sweep import RunPlan

START_TIMEOUT_S = 30.0  # every pod answers on its port
START_SLACK_S = 1.0  # then the writers start together, this long after
AFTER_STOP_S = 3.0  # what a stopping shipper still sends on its way out

P = TypeVar("P", bound=RestartsOnTakenPort[Any])
S = TypeVar("S")


@dataclass(frozen=True)
class PodsRun(Generic[S]):
    """A finished tailed-pod run: its result and the pods' own counters."""

    result: DriverResult
    counters: S
    written: int  # lines the writers wrote
    foreign: int  # records read back without a record id (real Filebeat: each pod's PRIMER_LINE)


def run_pods(
    pod_of: Callable[[int, Path], P],
    start: Callable[[P], None],
    counters: Callable[[list[P]], S],
    failed: Callable[[S], int],
    *,
    shipper: str,
    engine: str,
    artifact: Rendered,
    plan: RunPlan,
    placement: Placement,
    security: Mapping[str, str],
    payloads: Callable[[Path, list[P]], list[str]],
    line: re.Pattern[bytes] = MESSAGE,
    drain_s: float,
    stop_wait_s: float,
) -> PodsRun[S]:
    """Run one `pod_of(index, work directory)` per producer through the workload's schedule on the
    placement's one topic. `shipper` names it in one-line errors ("real Filebeat", "the
    collector"); `security`: kbt's own clients' (librdkafka terms); `payloads(work, pods)`: the
    writers' texts; `line`: the read-back's pattern of a line (default one per record); `drain_s`
    is how long after the last write the shipper may take to send what it holds, `stop_wait_s`
    how long a stopping pod may take to exit; `failed(counters)`: the records it gave up on."""
    workload, topic = plan.workload, placement.topics[0]
    rate = float(workload.rate_per_producer)
    log_append_time(Connection(placement.bootstrap_servers, security), topic)
    writers: list[subprocess.Popen[bytes]] = []
    reader: ReadBack | None = None
    drained, total = False, 0
    with sigterm_interrupts(), tempfile.TemporaryDirectory(prefix=f"kbt-{engine}-") as tmp:
        work = Path(tmp)
        pods = [pod_of(i, work) for i in range(workload.producers)]
        texts = payloads(work, pods)  # the corpus is written before any pod starts
        try:
            for each in pods:
                start(each)
            wait_started(pods, shipper, START_TIMEOUT_S)
            started_at = time.time()
            start_at = started_at + START_SLACK_S
            window = (start_at + workload.warmup_s, start_at + workload.duration_s)
            partitions = workload.topics[0].partitions
            reader = ReadBack(placement.bootstrap_servers, topic, partitions, window, line, security=security)
            writers = start_writers(
                pods, workload.processes, rate, start_at, workload.duration_s, texts, work
            )
            written, send_lag = wait_writers(writers, workload.duration_s + 30.0)
            total = sum(written.values())
            drained = reader.wait_for(total, time.time() + drain_s)
            counted = counters(pods)
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None
        finally:
            # A pod restarted on a new port has a new process: stop whichever each pod has now.
            stop([*(pod.proc for pod in pods if pod.proc is not None), *writers], stop_wait_s)
            if reader is not None and not drained and total:
                reader.wait_for(total, time.time() + AFTER_STOP_S)
            tally = reader.close() if reader is not None else None
        finished_at = time.time()
        assert reader is not None and tally is not None
        if reader.error:
            raise KbtError(f"reading the topic back failed: {reader.error}")
        problems = [f for f in (p.failure() for p in pods) if f]  # each pod's log read once
        if problems and not drained:
            raise KbtError(f"{shipper} failed: {problems[0]}")
    # Every written line is an acked record: one missing from the topic is lost only when the
    # read-back reached the topic's end, before that it is unread (the run is then unverified).
    ledger = Ledger(topics=[topic])
    ledger.add_written(written)
    verdict = judge(ledger, tally.marks, reached_end=reader.caught_up)
    in_window = written_in_window(written, rate, start_at, pods, window)
    client = ClientResult(
        engine=engine,
        producers=workload.producers,
        processes=workload.processes,
        started_at=started_at,
        window_start=window[0],
        window_end=window[1],
        finished_at=finished_at,
        offered_records=in_window,
        records_sent=in_window,
        records_acked=tally.events_in_window,
        records_failed=failed(counted),
        bytes_acked=tally.bytes_in_window,
        records_acked_total=verdict.found,
        delivery_latency_ms=latency_ms(tally.ack_us),
        # the writers': how far behind their schedule they wrote
        send_lag_ms=latency_ms(send_lag.histogram()) if send_lag.total else None,
        artifact=ArtifactRef(filename=artifact.filename, sha256=artifact.sha256),
    )
    result = DriverResult(client=client, delivery=verdict.result(), topics=[topic])
    return PodsRun(result, counted, sum(written.values()), tally.marks.foreign)
