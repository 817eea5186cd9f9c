"""Client kind `java`: run a profile through the Java engine (Kafka's own Java producer,
loadtests/java-engine), one JVM per workload process with its producers as pods; sum the processes
into one ClientResult and verify every acked record by reading the topic back.

Produce requests are counted exactly from the producer's own sensors (Sender: one request per
broker carrying the ready batch of every partition it leads); per broker from the produce
responses, so the per-broker split is empty with acks=0.

Process i serves the kbt_client_* series on the target's i-th client exporter port (the engine's
ClientExporter.java); a taken port leaves the run going, unexported, with a note on stderr.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, Interrupted
from tuner.driver.acked_verify import verify_read_back
from tuner.driver.engine_process import merged_latency, run_engines
from tuner.driver.filebeat_corpus import write_corpus
from tuner.driver.java_plan import (
    RESULT_SCHEMA,
    START_SLACK_S,
    engine_command,
    exporter_notes,
    heap_mb,
    process_plans,
)
from tuner.driver.order_check import librdkafka_order
from tuner.driver.payload import id_of
from tuner.driver.result import ClientResult, DriverResult
from tuner.spec.sweep import RunPlan

# Beyond duration + drain: JVM start, producer close (20 s in the engine).
_EXTRA_WAIT_S = 60.0
# JVM start, producers created, the topic's metadata fetched.
READY_TIMEOUT_S = 120.0


def run_java_load(
    plan: RunPlan,
    topics: list[str],
    bootstrap_servers: str,
    run_id: str,
    exporter_ports: Sequence[int] = (),
    security: Mapping[str, str] | None = None,
) -> DriverResult:
    """Drive one run of a `client: java` profile and verify its delivery. `security`: extra
    producer properties (Java names) applied last, e.g. a profile's resolved `${VAR}` overrides."""
    if len(topics) != 1:
        raise BadInput(f"client java writes one topic per run (the workload has {len(topics)})")
    properties = {**plan.profile.client_settings(), **dict(security or {})}
    workload = plan.workload
    pods = -(-workload.producers // workload.processes)  # the most pods one process runs
    command = engine_command(heap_mb(pods, properties))
    with tempfile.TemporaryDirectory(prefix="kbt-java-") as tmp:
        workdir = Path(tmp)
        corpus = workdir / "corpus.jsonl"
        write_corpus(workload, corpus, seed=plan.index + 1)
        try:
            plans = process_plans(
                workload,
                properties,
                topic=topics[0],
                bootstrap=bootstrap_servers,
                run_id=run_id,
                workdir=workdir,
                corpus_file=corpus,
                start_at=-1,  # the engines start together once all are connected
                exporter_ports=exporter_ports,
            )
        except BadInput as exc:
            raise BadInput(f"profile {plan.profile.name}: {exc}") from None
        budget = (
            READY_TIMEOUT_S + START_SLACK_S + workload.duration_s + plans[0].plan["drain_s"] + _EXTRA_WAIT_S
        )
        results, interrupted = run_engines(
            command,
            [(p.path, p.plan) for p in plans],
            budget,
            "Java engine",
            RESULT_SCHEMA,
            ready_timeout_s=READY_TIMEOUT_S,
        )
        for note in exporter_notes(results):
            sys.stderr.write(f"kbt: note: {note}\n")
        client = aggregate(results, producers=workload.producers, processes=workload.processes)
        failed = sum(r["failed"] for r in results)
        indeterminate = sum(r["indeterminate"] for r in results)
        if interrupted:
            raise Interrupted("interrupted")
        # The verifying consumer reads the plaintext listener: `security` holds Java property names.
        delivery = verify_read_back(
            bootstrap_servers,
            topics[0],
            [p.acked_file for p in plans],
            id_of,
            failed=failed,
            indeterminate=indeterminate,
            order_of=librdkafka_order,
        )
    return DriverResult(client=client, delivery=delivery, topics=list(topics), interrupted=interrupted)


def aggregate(results: list[dict[str, Any]], producers: int, processes: int) -> ClientResult:
    """Sum the engine processes of one run."""
    window_by_broker: dict[str, int] = {}
    for r in results:
        for broker, n in r["window"]["produce_requests"].items():
            window_by_broker[broker] = window_by_broker.get(broker, 0) + int(n)
    window_requests = sum(int(r["window"]["requests"]) for r in results)
    total_requests = sum(int(r["total"]["requests"]) for r in results)
    records_sent_total = sum(int(r["total"]["records_sent"]) for r in results)
    batches = sum(int(r["total"]["batches"]) for r in results)
    return ClientResult(
        engine="java",
        producers=producers,
        processes=processes,
        started_at=min(r["started_at"] for r in results),
        window_start=min(r["window_start"] for r in results),
        window_end=max(r["window_end"] for r in results),
        finished_at=max(r["finished_at"] for r in results),
        offered_records=sum(r["offered"] for r in results),
        records_sent=sum(r["sent"] for r in results),
        records_acked=sum(r["acked"] for r in results),
        records_failed=sum(r["failed"] for r in results),
        bytes_acked=sum(r["bytes_acked"] for r in results),
        produce_requests=window_requests,
        produce_requests_by_broker=dict(sorted(window_by_broker.items())),
        records_acked_total=sum(r["acked_total"] for r in results),
        produce_requests_total=total_requests,
        records_per_request=records_sent_total / total_requests if total_requests else None,
        batch_bytes=_weighted(results, "batch_bytes", batches),
        compression_ratio=_weighted(results, "compression_ratio", batches),
        delivery_latency_ms=merged_latency(results),
        client_metrics=merge_client_metrics([r.get("client_metrics") or {} for r in results]) or None,
    )


def _weighted(results: list[dict[str, Any]], key: str, batches: int) -> float | None:
    """Mean of a per-process per-batch figure, weighted by each process's batches."""
    if not batches:
        return None
    pairs = [(r[key], int(r["total"]["batches"])) for r in results if r.get(key) is not None]
    weight = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / weight if weight else None


def merge_client_metrics(per_process: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Rates, totals and byte counts add up over processes; maxima take the largest; averages the
    mean of the processes' averages."""
    names = sorted({name for m in per_process for name in m})
    out: dict[str, float] = {}
    for name in names:
        values = [float(m[name]) for m in per_process if name in m]
        if name.endswith(("-rate", "-total", "-bytes")):
            out[name] = sum(values)
        elif name.endswith("-max"):
            out[name] = max(values)
        else:
            out[name] = sum(values) / len(values)
    return out


__all__ = ["aggregate", "merge_client_metrics", "run_java_load"]
