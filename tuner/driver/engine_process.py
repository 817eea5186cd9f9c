"""Engine processes (the Sarama and Java engines): build their shared plan format, start one per
plan, wait for each one's JSON result line within a budget, SIGTERM them on Ctrl-C (each drains and
still reports), merge the processes' latency histograms, and end the run the same way for every such
engine (`finished_run`: aggregate, interrupted, read-back)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tuner.core.errors import Interrupted, KbtError
from tuner.driver.corpus import write_corpus
from tuner.driver.delivery.check import KeyOf, verify
from tuner.driver.delivery.ledger import Ledger
from tuner.driver.engine import Placement
from tuner.driver.key_shares import KeyTable
from tuner.driver.latency_hist import merged_ms
from tuner.driver.lifeline import die_with_parent
from tuner.driver.result import ClientResult, DriverResult
from tuner.spec.sweep import RunPlan
from tuner.spec.workload import WorkloadSpec

TERM_WAIT_S = 15.0
KILL_WAIT_S = 5.0  # after SIGKILL
# From the last engine's "ready" to the shared start.
START_AFTER_READY_S = 1.0


@dataclass(frozen=True)
class ProcessPlan:
    plan: dict[str, Any]
    path: Path
    acked_file: Path


@dataclass(frozen=True)
class ProcessSite:
    """What every engine process's plan points at: where the run goes (its one topic), the run's
    work directory and corpus, the shared start time (-1: the engines start together once every one
    is connected)."""

    placement: Placement
    topic: str
    workdir: Path
    corpus_file: Path
    start_at: float


@contextlib.contextmanager
def process_site(
    plan: RunPlan,
    placement: Placement,
    client: str,
    start_slack_s: float | None,
    keys: KeyTable | None = None,
) -> Iterator[ProcessSite]:
    """A work directory holding the run's corpus (removed afterwards) and the site the engine
    processes share. `start_slack_s`: the schedule starts that long after the corpus is written;
    None: the engines start together once ready. `keys`: the topic's key_shares table, its keys
    written into the corpus (an engine that takes a corpus entry's key keeps the shares)."""
    topic = placement.single_topic(client)
    with tempfile.TemporaryDirectory(prefix=f"kbt-{client}-") as tmp:
        workdir = Path(tmp)
        corpus = workdir / "corpus.jsonl"
        write_corpus(plan.workload, corpus, seed=plan.index + 1, keys=keys)
        start_at = -1.0 if start_slack_s is None else time.time() + start_slack_s
        yield ProcessSite(placement, topic, workdir, corpus, start_at)


def engine_plans(
    workload: WorkloadSpec,
    client: Callable[[int], dict[str, Any]],
    site: ProcessSite,
    *,
    schema: int,
    drain_s: float,
) -> list[ProcessPlan]:
    """One plan per workload process; pods (producers) are spread as evenly as possible.
    `client(i)` holds process i's client-specific keys."""
    rate = 0.0 if workload.rate_per_producer == "max" else float(workload.rate_per_producer)
    keys = workload.keys.kind if workload.keys.kind in ("none", "random") else "none"
    base, extra = divmod(workload.producers, workload.processes)
    plans: list[ProcessPlan] = []
    offset = 0
    for index in range(workload.processes):
        pods = base + (1 if index < extra else 0)
        acked = site.workdir / f"acked-{index}.txt"
        plan = {
            "schema": schema,
            "run_id": site.placement.run_id,
            "bootstrap": site.placement.bootstrap_servers,
            "topic": site.topic,
            "pods": pods,
            "pod_offset": offset,
            "rate_per_pod": rate,
            "duration_s": workload.duration_s,
            "warmup_s": workload.warmup_s,
            "drain_s": drain_s,
            "start_at": site.start_at,
            "corpus_file": str(site.corpus_file),
            "keys": keys,
            "key_cardinality": workload.keys.cardinality or 0,
            "acked_file": str(acked),
            "seed": index + 1,
            **client(index),
        }
        plans.append(ProcessPlan(plan=plan, path=site.workdir / f"plan-{index}.json", acked_file=acked))
        offset += pods
    return plans


def run_engines(
    command: Sequence[str],
    plans: Sequence[ProcessPlan],
    budget_s: float,
    name: str,
    schema: int,
    ready_timeout_s: float = 0.0,
    env: Mapping[str, str] | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """Run `command -plan PATH` for every plan at once; returns the results and whether the run was
    interrupted (Ctrl-C). KbtError naming `name` when an engine fails or overruns `budget_s`. With
    `ready_timeout_s`, each engine prints "ready" once connected and reads the shared start time
    from stdin (plans with start_at -1). `env`: variables added to the engines' environment (the
    secrets their configuration references), theirs alone."""
    procs: list[subprocess.Popen[str]] = []
    for plan in plans:
        plan.path.write_text(json.dumps(plan.plan))
        procs.append(
            subprocess.Popen(
                [*command, "-plan", str(plan.path)],
                stdin=subprocess.PIPE if ready_timeout_s else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
                preexec_fn=die_with_parent,  # a killed kbt leaves no engine behind
                env={**os.environ, **env} if env else None,
            )
        )
    if ready_timeout_s:
        _start_together(procs, ready_timeout_s, name)
    deadline = time.monotonic() + budget_s
    outputs: list[tuple[str, str]] = []
    interrupted = False
    try:
        for proc in procs:
            try:
                outputs.append(proc.communicate(timeout=max(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                stop(procs)
                raise KbtError(f"the {name} did not finish within {budget_s:.0f} s") from None
    except KeyboardInterrupt:
        interrupted = True
        stop(procs)
        outputs = [proc.communicate() for proc in procs]
    results = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        if proc.returncode != 0 or not out.strip():
            last = (err.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            if interrupted:
                continue
            raise KbtError(f"the {name} failed: {last}")
        result = json.loads(out.strip().splitlines()[-1])
        if result.get("schema") != schema:
            raise KbtError(f"the {name} wrote result schema {result.get('schema')} (want {schema})")
        results.append(result)
    if not results:
        raise Interrupted("interrupted")
    return results, interrupted


def finished_run(
    site: ProcessSite,
    plans: Sequence[ProcessPlan],
    outcome: tuple[list[dict[str, Any]], bool],
    *,
    aggregate: Callable[[list[dict[str, Any]]], ClientResult],
    failed: Callable[[dict[str, Any]], int],
    key_of: KeyOf,
    security: Mapping[str, str] | None = None,
) -> DriverResult:
    """The end every engine-process run shares: the processes' results aggregated, Interrupted on
    Ctrl-C, else every acked record read back from the topic (`failed(result)`: the records a
    process gave up on; `security`: the read-back's client security, librdkafka terms)."""
    results, interrupted = outcome
    client = aggregate(results)
    if interrupted:
        raise Interrupted("interrupted")
    topic = site.topic
    ledger = Ledger(topics=[topic]).read_acked_files(topic, [p.acked_file for p in plans])
    verdict = verify(site.placement.bootstrap_servers, ledger, key_of, security=security)
    delivery = verdict.result(
        failed=sum(failed(r) for r in results), indeterminate=sum(r["indeterminate"] for r in results)
    )
    return DriverResult(client=client, delivery=delivery, topics=list(site.placement.topics))


def _start_together(procs: Sequence[subprocess.Popen[str]], timeout_s: float, name: str) -> None:
    """Wait for every engine's "ready" line, then give all of them one start time shortly after."""
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        assert proc.stdout is not None and proc.stdin is not None
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        line = proc.stdout.readline() if ready else ""
        if line.strip() != "ready":
            stop(procs)
            err = proc.stderr.read() if proc.stderr is not None and proc.poll() is not None else ""
            last = (err.strip().splitlines() or [f"not ready within {timeout_s:.0f} s"])[-1]
            raise KbtError(f"the {name} failed: {last}")
    start_at = time.time() + START_AFTER_READY_S
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(f"{start_at:.6f}\n")
        proc.stdin.close()
        proc.stdin = None  # communicate() would flush it again


def stop(procs: Sequence[subprocess.Popen[Any]], wait_s: float = TERM_WAIT_S) -> None:
    """SIGTERM every process group still running (an engine ends its run and reports; each process
    was started in its own session), then wait, then kill (the engines', the tailed pods', locust's)."""
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
    end = time.monotonic() + wait_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=KILL_WAIT_S)  # bounded: one stuck in the kernel is left, not waited on


def summed_result(
    results: Sequence[dict[str, Any]],
    engine: str,
    producers: int,
    processes: int,
    total_requests: int,
    weight: Callable[[dict[str, Any]], int],
    **fields: Any,
) -> ClientResult:
    """The figures every engine process reports alike, summed over the processes of one run; batch
    size and compression are means weighted by `weight(process)`. `fields`: the engine's own
    (produce_requests defaults to the per-broker window counts summed)."""
    by_broker: dict[str, int] = {}
    for r in results:
        for broker, n in r["window"]["produce_requests"].items():
            by_broker[broker] = by_broker.get(broker, 0) + int(n)
    records_sent_total = sum(int(r["total"]["records_sent"]) for r in results)
    return ClientResult(
        engine=engine,
        producers=producers,
        processes=processes,
        started_at=min(r["started_at"] for r in results),
        window_start=min(r["window_start"] for r in results),
        window_end=max(r["window_end"] for r in results),
        finished_at=max(r["finished_at"] for r in results),
        offered_records=sum(r["offered"] for r in results),
        records_sent=sum(r["sent"] for r in results),
        records_acked=sum(r["acked"] for r in results),
        bytes_acked=sum(r["bytes_acked"] for r in results),
        produce_requests_by_broker=dict(sorted(by_broker.items())),
        records_acked_total=sum(r["acked_total"] for r in results),
        produce_requests_total=total_requests,
        records_per_request=records_sent_total / total_requests if total_requests else None,
        batch_bytes=_weighted(results, "batch_bytes", weight),
        compression_ratio=_weighted(results, "compression_ratio", weight),
        delivery_latency_ms=merged_ms(r.get("latency_histogram") for r in results),
        **{"produce_requests": sum(by_broker.values()), **fields},
    )


def _weighted(
    results: Sequence[dict[str, Any]], key: str, weight: Callable[[dict[str, Any]], int]
) -> float | None:
    """Mean of a per-process figure, weighted by `weight` of each process that reports it."""
    pairs = [(r[key], weight(r)) for r in results if r.get(key) is not None]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None
