"""Synthetic run records with chosen per-broker window figures (for the model and diagnosis tests)."""

from __future__ import annotations

from tuner.core.paths import repo_root
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan
from tuner.store import RunRecord, capture_environment, make_run_id
from tuner.store.figures import BrokerStats, BrokerWindow, ClientResult, DeliveryResult, LatencyMs


def qunar_plans() -> list[RunPlan]:
    return load_sweep(repo_root() / "loadtests" / "qunar-logs.yaml").runs


def record_with_brokers(
    brokers: list[BrokerStats], created: float, plan: RunPlan | None = None, p99_ms: float = 50.0
) -> RunRecord:
    """A record whose broker window holds `brokers`; client figures follow their sums."""
    plan = plan or qunar_plans()[0]
    start = created - 60
    window = 50.0
    requests = sum(b.produce_requests_per_s or 0.0 for b in brokers) * window
    records = sum(b.messages_in_per_s or 0.0 for b in brokers) * window or requests
    client = ClientResult(
        engine="librdkafka",
        producers=plan.workload.producers,
        processes=plan.workload.processes,
        started_at=start,
        window_start=start + 10,
        window_end=start + 10 + window,
        finished_at=created,
        records_acked=int(records),
        bytes_acked=int(records * 1620),
        produce_requests=int(requests),
        delivery_latency_ms=LatencyMs(count=int(records), p99=p99_ms),
    )
    return RunRecord(
        run_id=make_run_id(plan.sweep, plan.name, created),
        name=plan.name,
        sweep=plan.sweep,
        index=plan.index,
        spec_hash=plan.spec_hash,
        plan=plan,
        environment=capture_environment(broker_count=len(brokers), kafka_version="4.1.1"),
        created_at=created,
        client=client,
        delivery=DeliveryResult(acked=int(records), consumed=int(records), verified=True),
        broker=BrokerWindow(start=start + 10, end=start + 10 + window, step_s=5, brokers=brokers),
        status="ok",
    )
