"""Forecast baselines: today's traffic with current and recommended settings.

From a sweep's run records: the current settings are a named run (default: the run with the most
produce requests/s), the recommended ones a named run (default: the fewest produce requests/s among
runs that lost nothing and met their SLO's p99). From `kbt diagnose --json` of a live cluster: the
current settings are what the brokers see; the recommended ones the same bytes with each broker's
produce requests cut by the diagnosis' "batching can cut requests ~Nx".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from tuner.core.errors import BadInput, did_you_mean
from tuner.model.diagnosis import Diagnosis
from tuner.model.forecast import Baseline, baseline_from_brokers
from tuner.store.record import RunRecord


def _per_broker(record: RunRecord) -> list[tuple[float, float]]:
    if record.broker is None:
        return []
    return [
        (b.produce_requests_per_s, b.bytes_in_per_s or 0.0)
        for b in record.broker.brokers
        if b.produce_requests_per_s is not None
    ]


def _requests(record: RunRecord) -> float:
    return sum(r for r, _ in _per_broker(record))


def meets_slo(record: RunRecord) -> bool:
    p99, limit = record.client.delivery_latency_ms.p99, record.plan.slo.p99_ms
    slo_ok = limit is None or (p99 is not None and p99 <= limit)
    return record.status == "ok" and record.delivery.lost == 0 and slo_ok


def record_baseline(record: RunRecord, role: Literal["current", "recommended"]) -> Baseline:
    per_broker = _per_broker(record)
    if not per_broker:
        raise BadInput(f"run {record.run_id} has no broker produce figures to forecast from")
    return baseline_from_brokers(f"{role}: {record.name}", role, per_broker, record.run_id)


def pick_runs(
    records: Sequence[RunRecord],
    sweep: str | None = None,
    current: str | None = None,
    recommended: str | None = None,
) -> tuple[RunRecord, RunRecord]:
    """(current, recommended) runs of one sweep (default: the newest record's sweep)."""
    if not records:
        raise BadInput("no run records to forecast from")
    sweeps = sorted({r.sweep for r in records})
    if sweep is None:
        sweep = max(records, key=lambda r: r.created_at).sweep
    elif sweep not in sweeps:
        raise BadInput(
            f"no runs of sweep {sweep!r}{did_you_mean(sweep, sweeps)}; sweeps: {', '.join(sweeps)}"
        )
    latest: dict[str, RunRecord] = {}
    for r in sorted((r for r in records if r.sweep == sweep), key=lambda r: r.created_at):
        if _per_broker(r):
            latest[r.name] = r
    if not latest:
        raise BadInput(f"sweep {sweep!r} has no run with broker produce figures")

    def named(name: str) -> RunRecord:
        if name not in latest:
            raise BadInput(f"no run {name!r} in sweep {sweep!r}{did_you_mean(name, latest)}")
        return latest[name]

    cur = named(current) if current else max(latest.values(), key=_requests)
    if recommended:
        rec = named(recommended)
    else:
        good = [r for r in latest.values() if meets_slo(r)]
        if not good:
            raise BadInput(
                f"no run of sweep {sweep!r} lost nothing and met its p99 SLO; name one with --recommended"
            )
        rec = min(good, key=_requests)
    return cur, rec


def records_baselines(
    records: Sequence[RunRecord],
    sweep: str | None = None,
    current: str | None = None,
    recommended: str | None = None,
) -> list[Baseline]:
    cur, rec = pick_runs(records, sweep, current, recommended)
    return [record_baseline(cur, "current"), record_baseline(rec, "recommended")]


def diagnosis_baselines(d: Diagnosis) -> list[Baseline]:
    """Current: the live brokers; recommended: requests cut per broker as the diagnosis estimated."""
    snaps = {b.broker: b for b in d.snapshot.brokers if b.produce_requests_per_s is not None}
    if not snaps:
        raise BadInput("the diagnosis has no broker produce figures to forecast from")
    source = f"diagnose {d.snapshot.prometheus}"
    cur = [(s.produce_requests_per_s or 0.0, s.bytes_in_per_s or 0.0) for s in snaps.values()]
    cuts = {b.broker: b.requests_cut or 1.0 for b in d.brokers}
    rec = [(r / cuts.get(broker, 1.0), b) for broker, (r, b) in zip(snaps, cur, strict=True)]
    label = "recommended: no change (no small-request finding)"
    if any(c > 1 for c in cuts.values()):
        target = max(d.thresholds.target_request_bytes, *(b.small_request_bytes for b in d.brokers))
        label = f"recommended: batched to ~{target / 1e3:.0f} KB requests"
    return [
        baseline_from_brokers("current: live cluster", "current", cur, source),
        baseline_from_brokers(label, "recommended", rec, source),
    ]
