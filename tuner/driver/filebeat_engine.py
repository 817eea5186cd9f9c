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
from tuner.driver.engine_process import run_engines, summed_result
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
    """Sum the engine processes of one run (batch figures weighted by produce requests)."""

    def requests(r: dict[str, Any]) -> int:
        return sum(int(n) for n in r["total"]["produce_requests"].values())

    return summed_result(
        results,
        "filebeat",
        producers,
        processes,
        total_requests=sum(requests(r) for r in results),
        weight=requests,
        records_failed=sum(r["failed"] + r["dropped"] for r in results),
    )


__all__ = ["DeliveryResult", "aggregate", "run_filebeat_load"]
