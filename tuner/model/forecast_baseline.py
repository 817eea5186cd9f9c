"""Forecast baselines: today's traffic with current and recommended settings.

From a sweep's run records: the current settings are a named run (default: the run with the most
produce requests/s), the recommended ones a named run (default: the fewest produce requests/s among
runs that met their SLO: clean, delivery verified with nothing lost, within p99, memory and idle).
From `kbt diagnose --json` of a live cluster: the current settings are what the brokers see; the
recommended ones the same bytes with each broker's produce requests cut by the diagnosis'
"batching can cut requests ~Nx".

Each baseline also carries what its brokers measured (the forecast reproduces it first), the
replication factor that bounds the broker count from below and the partition placement that bounds
the busiest broker's relief, each with where it comes from: a run's workload names its topics'
partitions and replication factor (leaders round-robin, as Kafka places them); a diagnosis holds
neither, so the replication factor is given (--replication-factor) or assumed, and the busiest
broker is taken to carry its measured share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from tuner.core.errors import BadInput, did_you_mean
from tuner.core.frozen import Frozen
from tuner.model.diagnosis import Diagnosis
from tuner.model.evidence import measured_of, traffic_of_record
from tuner.model.forecast_today import Baseline, BrokerToday
from tuner.spec.clients import kind_of
from tuner.store.figures import BrokerStats
from tuner.store.recommendation import SLOBounds
from tuner.store.record import RunRecord
from tuner.store.snapshot import BrokerSnapshot

# A diagnosis does not say its topics' replication factor: without --replication-factor the floor
# is this (Kafka's usual production setting, so that min.insync.replicas 2 survives a broker's loss),
# or today's broker count when that is smaller.
ASSUMED_REPLICATION_FACTOR = 3


class TopicPlacement(Frozen):
    """Where a live cluster's produced topics sit (tuner.runner.target_facts reads it)."""

    replication_factor: int = Field(ge=1)  # the largest of the topics'
    partitions: int = Field(ge=1)
    leaders: dict[str, int] = Field(default_factory=dict)  # broker id -> partitions it leads
    source: str  # "<target>'s metadata, topic(s) a, b"


def baseline_from_brokers(
    label: str,
    role: Literal["current", "recommended"],
    per_broker: Sequence[tuple[float, float]],
    source: str,
) -> Baseline:
    """A baseline from (produce requests/s, bytes in/s) per broker."""
    reqs = [r for r, _ in per_broker]
    mean = sum(reqs) / len(reqs) if reqs else 0.0
    return Baseline(
        label=label,
        role=role,
        brokers=max(len(per_broker), 1),
        requests_per_s=sum(reqs),
        bytes_per_s=sum(b for _, b in per_broker),
        skew=max(reqs) / mean if mean > 0 else 1.0,
        source=source,
    )


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
    """The run met its own SLO as the recommender judges a run (evidence.measured_of): clean, its
    delivery verified with nothing lost, and within the plan's p99, memory and network idle."""
    return measured_of(record, SLOBounds.model_validate(record.plan.slo.model_dump())).meets_slo


def record_baseline(record: RunRecord, role: Literal["current", "recommended"]) -> Baseline:
    per_broker = _per_broker(record)
    if not per_broker or record.broker is None:
        raise BadInput(f"run {record.run_id} has no broker produce figures to forecast from")
    base = baseline_from_brokers(f"{role}: {record.name}", role, per_broker, record.run_id)
    stats = [b for b in record.broker.brokers if b.produce_requests_per_s is not None]
    busiest = max(stats, key=lambda b: b.produce_requests_per_s or 0.0)
    ppr = 1.0
    if kind_of(record.plan.profile).multi_partition_requests and busiest.produce_requests_per_s:
        # the run's own partition appends on the busiest broker over all its produce requests
        ppr = max(1.0, (busiest.topic_produce_requests_per_s or 0.0) / busiest.produce_requests_per_s)
    topics = record.plan.workload.topics
    traffic = traffic_of_record(record)
    led = [traffic.partitions_led(b) for b in range(traffic.brokers)]
    rf = max(t.replication_factor for t in topics)
    partitions = sum(t.partitions for t in topics)
    return base.model_copy(
        update={
            "today": [_today(b) for b in stats],
            "partitions_per_request": ppr,
            "partitions": partitions,
            "busiest_leaders": max(led) if led else None,
            "min_brokers": rf,
            "min_brokers_from": (
                f"replication factor {rf}: the largest of workload {record.plan.workload.name}'s topics"
            ),
            "placement_from": (
                f"placement from workload {record.plan.workload.name}: {partitions} partitions led "
                f"round-robin by {traffic.brokers} brokers, the busiest broker keeps at least its share "
                f"of them; {ppr:.1f} partition batches per produce request (run {record.name})"
            ),
        }
    )


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
    ours = sorted((r for r in records if r.sweep == sweep), key=lambda r: r.created_at)
    latest = {r.name: r for r in ours if _per_broker(r)}  # the newest run of each name
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
                f"no run of sweep {sweep!r} met its SLO (clean, delivery verified with nothing lost, within"
                " its p99, memory and network idle bounds); name one with --recommended"
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


def _today(s: BrokerSnapshot | BrokerStats) -> BrokerToday:
    """A broker today from a diagnosis' snapshot or a run's broker figures (the same fields)."""
    return BrokerToday(
        broker=s.broker,
        requests_per_s=s.produce_requests_per_s or 0.0,
        bytes_per_s=s.bytes_in_per_s or 0.0,
        network_idle=s.network_idle_ratio,
        handler_idle=s.request_handler_idle_ratio,
        request_queue=s.request_queue_size,
    )


def diagnosis_baselines(
    d: Diagnosis, replication_factor: int | None = None, placement: TopicPlacement | None = None
) -> list[Baseline]:
    """Current: the live brokers; recommended: requests cut per broker as the diagnosis estimated.
    `replication_factor`: the largest of the cluster's topics (None: from `placement`, the cluster's
    metadata, else assumed and said); `placement` also gives partitions and leaders."""
    snaps = {b.broker: b for b in d.snapshot.brokers if b.measured and b.produce_requests_per_s is not None}
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
    busiest = max(snaps.values(), key=lambda s: s.produce_requests_per_s or 0.0)
    ppr = busiest.partitions_per_produce_request
    rf, rf_from = _replication_floor(replication_factor, placement, len(snaps))
    extra: dict[str, object] = {
        "partitions_per_request": max(ppr or 1.0, 1.0),
        "min_brokers": rf,
        "min_brokers_from": rf_from,
    }
    if placement is not None:
        led = placement.leaders.get(busiest.broker)  # Prometheus' broker label is the node id
        where = (
            f"placement from {placement.source}: {placement.partitions} partitions, broker {busiest.broker} "
            f"(the busiest) leads {led if led is not None else 'an unknown number'} of them and keeps at "
            "least that share"
        )
        extra |= {"partitions": placement.partitions, "busiest_leaders": led}
    else:
        where = (
            "partition placement not in a diagnosis: the busiest broker keeps its measured share of the "
            "bytes and of one-partition requests as brokers are added"
        )
    if ppr is not None and ppr > 1:
        where += (
            f"; its produce requests carry {ppr:.1f} partition batches each (one request per producer "
            "flush per broker), so their count per broker falls only once a request would carry less "
            "than one partition"
        )
    elif ppr is None:
        where += "; partition batches per produce request not measured: taken as one"
    extra["placement_from"] = where
    current = baseline_from_brokers("current: live cluster", "current", cur, source)
    return [
        current.model_copy(update={**extra, "today": [_today(s) for s in snaps.values()]}),
        baseline_from_brokers(label, "recommended", rec, source).model_copy(update=extra),
    ]


def _replication_floor(given: int | None, placement: TopicPlacement | None, brokers: int) -> tuple[int, str]:
    """The fewest brokers the topics' replicas need, and where that comes from."""
    if given is not None:
        return given, f"replication factor {given}: given (--replication-factor)"
    if placement is not None:
        rf = placement.replication_factor
        return rf, f"replication factor {rf}: the largest in {placement.source}"
    rf = min(ASSUMED_REPLICATION_FACTOR, brokers)
    return rf, (
        f"replication factor {rf}: assumed (a diagnosis does not hold the topics' replication factor; "
        f"the usual {ASSUMED_REPLICATION_FACTOR}, at most today's {brokers} brokers): "
        "give --replication-factor"
    )
