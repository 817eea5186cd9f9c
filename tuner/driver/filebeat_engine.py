"""Client kind `filebeat`: run a profile through the Sarama engine, one OS process per workload
process, its producers as Filebeat "pods"; sum the processes into one ClientResult and verify every
acked record by reading the topic back.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, Interrupted
from tuner.driver.acked_verify import filebeat_event_id, verify_read_back
from tuner.driver.engine_process import merged_latency, run_engines
from tuner.driver.filebeat_corpus import write_corpus
from tuner.driver.filebeat_plan import (
    RESULT_SCHEMA,
    START_SLACK_S,
    check_emulated,
    engine_binary,
    process_plans,
)
from tuner.driver.result import ClientResult, DeliveryResult, DriverResult
from tuner.spec.clients.filebeat import config_of
from tuner.spec.sweep import RunPlan

# Beyond duration + drain: producer close (20 s in the engine) and start-up.
_EXTRA_WAIT_S = 60.0


def run_filebeat_load(
    plan: RunPlan,
    topics: list[str],
    bootstrap_servers: str,
    run_id: str,
    exporter_ports: Sequence[int] = (),
) -> DriverResult:
    """Drive one run of a `client: filebeat` profile and verify its delivery."""
    config = config_of(plan.profile)
    check_emulated(config)
    if len(topics) != 1:
        raise BadInput(f"client filebeat writes one topic per run (the workload has {len(topics)})")
    workload = plan.workload
    binary = engine_binary()
    with tempfile.TemporaryDirectory(prefix="kbt-filebeat-") as tmp:
        workdir = Path(tmp)
        corpus = workdir / "corpus.jsonl"
        write_corpus(workload, corpus, seed=plan.index + 1)
        plans = process_plans(
            workload,
            config,
            topic=topics[0],
            bootstrap=bootstrap_servers,
            run_id=run_id,
            workdir=workdir,
            corpus_file=corpus,
            start_at=time.time() + START_SLACK_S,
        )
        results, interrupted = run_engines(
            [str(binary)],
            [(p.path, p.plan) for p in plans],
            START_SLACK_S + workload.duration_s + plans[0].plan["drain_s"] + _EXTRA_WAIT_S,
            "Filebeat engine",
            RESULT_SCHEMA,
        )
        client = aggregate(results, producers=workload.producers, processes=workload.processes)
        failed = sum(r["failed"] + r["dropped"] for r in results)
        indeterminate = sum(r["indeterminate"] for r in results)
        if interrupted:
            raise Interrupted("interrupted")
        delivery = verify_read_back(
            bootstrap_servers,
            topics[0],
            [p.acked_file for p in plans],
            filebeat_event_id,
            failed=failed,
            indeterminate=indeterminate,
        )
    return DriverResult(client=client, delivery=delivery, topics=list(topics), interrupted=interrupted)


def aggregate(results: list[dict[str, Any]], producers: int, processes: int) -> ClientResult:
    """Sum the engine processes of one run."""
    window: dict[str, int] = {}
    total_requests = 0
    for r in results:
        for broker, n in r["window"]["produce_requests"].items():
            window[broker] = window.get(broker, 0) + int(n)
        total_requests += sum(int(n) for n in r["total"]["produce_requests"].values())
    records_sent_total = sum(int(r["total"]["records_sent"]) for r in results)
    return ClientResult(
        engine="filebeat",
        producers=producers,
        processes=processes,
        started_at=min(r["started_at"] for r in results),
        window_start=min(r["window_start"] for r in results),
        window_end=max(r["window_end"] for r in results),
        finished_at=max(r["finished_at"] for r in results),
        offered_records=sum(r["offered"] for r in results),
        records_sent=sum(r["sent"] for r in results),
        records_acked=sum(r["acked"] for r in results),
        records_failed=sum(r["failed"] + r["dropped"] for r in results),
        bytes_acked=sum(r["bytes_acked"] for r in results),
        produce_requests=sum(window.values()),
        produce_requests_by_broker=dict(sorted(window.items())),
        records_acked_total=sum(r["acked_total"] for r in results),
        produce_requests_total=total_requests,
        records_per_request=records_sent_total / total_requests if total_requests else None,
        batch_bytes=_weighted(results, "batch_bytes"),
        compression_ratio=_weighted(results, "compression_ratio"),
        delivery_latency_ms=merged_latency(results),
    )


def _weighted(results: list[dict[str, Any]], key: str) -> float | None:
    """Mean of a per-process figure, weighted by each process's produce requests."""
    pairs = [
        (r[key], sum(r["total"]["produce_requests"].values())) for r in results if r.get(key) is not None
    ]
    weight = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / weight if weight else None


__all__ = ["DeliveryResult", "aggregate", "run_filebeat_load"]
