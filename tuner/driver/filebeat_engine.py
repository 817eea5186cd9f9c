"""Client kind `filebeat`: run a profile through the Sarama engine, one OS process per workload
process, its producers as Filebeat "pods"; sum the processes into one ClientResult and verify every
acked record by reading the topic back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from tuner.core.errors import BadInput, Interrupted, KbtError, Unreachable
from tuner.driver.acked_verify import filebeat_event_id, verify_acked
from tuner.driver.filebeat_corpus import write_corpus
from tuner.driver.filebeat_plan import (
    RESULT_SCHEMA,
    START_SLACK_S,
    ProcessPlan,
    check_emulated,
    engine_binary,
    process_plans,
)
from tuner.driver.lifeline import die_with_parent
from tuner.driver.result import ClientResult, DeliveryResult, DriverResult, LatencyMs
from tuner.spec.clients.filebeat import config_of
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.sweep import RunPlan

# Beyond duration + drain: producer close (20 s in the engine) and start-up.
_EXTRA_WAIT_S = 60.0
_TERM_WAIT_S = 15.0
# Delivery verification reads the topic back; a client timeout is retried this many times in all.
_VERIFY_ATTEMPTS = 3


def profile_config(plan: RunPlan) -> FilebeatConfig:
    """The run's Filebeat configuration (BadInput naming the profile when it cannot be had)."""
    config = config_of(plan.profile)
    check_emulated(config)
    return config


def run_filebeat_load(
    plan: RunPlan,
    topics: list[str],
    bootstrap_servers: str,
    run_id: str,
    exporter_ports: Sequence[int] = (),
) -> DriverResult:
    """Drive one run of a `client: filebeat` profile and verify its delivery."""
    config = profile_config(plan)
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
        results, interrupted = _run_processes(binary, plans, workload.duration_s + plans[0].plan["drain_s"])
        client = aggregate(results, producers=workload.producers, processes=workload.processes)
        failed = sum(r["failed"] + r["dropped"] for r in results)
        indeterminate = sum(r["indeterminate"] for r in results)
        if interrupted:
            raise Interrupted("interrupted")
        delivery = _verify(
            bootstrap_servers,
            topics[0],
            [p.acked_file for p in plans],
            failed=failed,
            indeterminate=indeterminate,
        )
    return DriverResult(client=client, delivery=delivery, topics=list(topics), interrupted=interrupted)


def _verify(
    bootstrap: str, topic: str, acked_files: list[Path], failed: int, indeterminate: int
) -> DeliveryResult:
    """verify_acked, again on a client timeout: reading back is idempotent, and one slow broker
    answer on a busy machine should not cost the run (Unreachable after the last attempt)."""
    from confluent_kafka import KafkaException

    for attempt in range(1, _VERIFY_ATTEMPTS + 1):
        try:
            return verify_acked(
                bootstrap, topic, acked_files, filebeat_event_id, failed=failed, indeterminate=indeterminate
            )
        except KafkaException as exc:
            if attempt == _VERIFY_ATTEMPTS:
                raise Unreachable(
                    f"delivery verification could not read {topic} back ({_VERIFY_ATTEMPTS} attempts):"
                    f" {exc.args[0].str() if exc.args else exc}"
                ) from None
            time.sleep(2.0 * attempt)
    raise AssertionError("unreachable")


def _run_processes(
    binary: Path, plans: list[ProcessPlan], budget_s: float
) -> tuple[list[dict[str, Any]], bool]:
    procs: list[subprocess.Popen[str]] = []
    for p in plans:
        p.path.write_text(json.dumps(p.plan))
        procs.append(
            subprocess.Popen(
                [str(binary), "-plan", str(p.path)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
                preexec_fn=die_with_parent,  # a killed kbt leaves no engine behind
            )
        )
    deadline = time.monotonic() + START_SLACK_S + budget_s + _EXTRA_WAIT_S
    outputs: list[tuple[str, str]] = []
    interrupted = False
    try:
        for proc in procs:
            remaining = max(1.0, deadline - time.monotonic())
            try:
                outputs.append(proc.communicate(timeout=remaining))
            except subprocess.TimeoutExpired:
                _stop(procs)
                raise KbtError(
                    f"the Filebeat engine did not finish within {budget_s + _EXTRA_WAIT_S:.0f} s"
                ) from None
    except KeyboardInterrupt:
        interrupted = True
        _stop(procs)
        outputs = [proc.communicate() for proc in procs]
    results = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        if proc.returncode != 0 or not out.strip():
            last = (err.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            if interrupted:
                continue
            raise KbtError(f"the Filebeat engine failed: {last}")
        result = json.loads(out.strip().splitlines()[-1])
        if result.get("schema") != RESULT_SCHEMA:
            raise KbtError(
                f"the Filebeat engine wrote result schema {result.get('schema')} (want {RESULT_SCHEMA})"
            )
        results.append(result)
    if not results:
        raise Interrupted("interrupted")
    return results, interrupted


def _stop(procs: list[subprocess.Popen[str]]) -> None:
    """SIGTERM every engine still running (each ends its run and reports), then wait, then kill."""
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    end = time.monotonic() + _TERM_WAIT_S
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


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
        delivery_latency_ms=_merged_latency(results),
    )


def _weighted(results: list[dict[str, Any]], key: str) -> float | None:
    """Mean of a per-process figure, weighted by each process's produce requests."""
    pairs = [
        (r[key], sum(r["total"]["produce_requests"].values())) for r in results if r.get(key) is not None
    ]
    weight = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / weight if weight else None


def _merged_latency(results: list[dict[str, Any]]) -> LatencyMs:
    merged: HdrHistogram | None = None
    for r in results:
        encoded = r.get("latency_histogram")
        if not encoded:
            continue
        hist = HdrHistogram.decode(encoded)
        if merged is None:
            merged = hist
        else:
            merged.add(hist)
    if merged is None or merged.get_total_count() == 0:
        return LatencyMs()
    us = merged.get_value_at_percentile
    return LatencyMs(
        count=merged.get_total_count(),
        mean=merged.get_mean_value() / 1000,
        p50=us(50) / 1000,
        p90=us(90) / 1000,
        p99=us(99) / 1000,
        p999=us(99.9) / 1000,
        max=merged.get_max_value() / 1000,
    )


__all__ = ["DeliveryResult", "aggregate", "profile_config", "run_filebeat_load"]
