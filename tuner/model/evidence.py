"""Run records as evidence: what each measured, its traffic, whether it met an SLO, and the
calibration and model truth fitted from a set of them."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import ValidationError

from tuner.core.errors import BadInput
from tuner.model.predict import (
    DEFAULT_SERVICE_P50_MS,
    DEFAULT_SERVICE_P99_MS,
    Calibration,
    ClientCalibration,
    calibrated_rules,
    predict,
    predict_rules,
    simulated,
)
from tuner.model.traffic import Traffic, traffic_of
from tuner.model.uncertainty import HeldOutError
from tuner.spec.clients import kind_of, rules_of
from tuner.spec.clients.filebeat import REAL_ENGINE_NAME
from tuner.spec.clients.rules import FilebeatRules
from tuner.spec.thresholds import THRESHOLDS
from tuner.spec.workload import WorkloadSpec
from tuner.store.document import field_problem
from tuner.store.figures import BrokerStats, LatencyMs
from tuner.store.recommendation import ClientKind, Measured, ModelTruth, SLOBounds
from tuner.store.record import RunRecord

DEFAULT_BROKERS = 3


def brokers_of(record: RunRecord) -> int:
    return record.environment.broker_count or len(record.client.produce_requests_by_broker) or DEFAULT_BROKERS


def traffic_of_record(record: RunRecord) -> Traffic:
    """The traffic a run offered, with the mean event size it actually sent."""
    client = record.client
    size = client.bytes_acked / client.records_acked if client.records_acked else None
    return traffic_of(record.plan.workload, brokers_of(record), message_bytes=size)


def workload_key(workload: WorkloadSpec, brokers: int) -> str:
    """Workloads with the same key offer the same traffic (duration, warm-up and names aside)."""
    data = workload.model_dump(
        mode="json", exclude={"name", "description", "duration_s", "warmup_s", "consumer_groups"}
    )
    data["topics"] = [{"partitions": t["partitions"], "rf": t["replication_factor"]} for t in data["topics"]]
    return json.dumps([data, brokers], sort_keys=True)


def measured_of(record: RunRecord, slo: SLOBounds) -> Measured:
    client, delivery, broker = record.client, record.delivery, record.broker
    window = client.window_s
    by_broker = client.produce_requests_by_broker
    busiest = max(by_broker.values()) / window if by_broker else None
    busiest_on: Literal["client", "brokers"] | None = "client" if busiest is not None else None
    p99 = client.delivery_latency_ms.p99
    memory = client.max_producer_rss_mb
    multi = kind_of(record.plan.profile).multi_partition_requests
    broker_rate = broker.run_produce_requests_per_s(multi) if broker else None
    meets = record.status == "ok" and delivery.verified and delivery.lost == 0 and client.records_acked > 0
    if slo.p99_ms is not None:
        meets = meets and p99 is not None and p99 <= slo.p99_ms
    if slo.max_producer_memory_mb is not None and memory is not None:
        meets = meets and memory <= slo.max_producer_memory_mb
    busiest_idle = min(broker.values("network_idle_ratio"), default=None) if broker else None
    if slo.min_network_idle is not None and busiest_idle is not None:
        meets = meets and busiest_idle >= slo.min_network_idle  # the capacity bound
    wire = None
    if client.batch_bytes and client.records_per_request:
        wire = client.records_per_s / client.records_per_request * client.batch_bytes
    requests_per_s = client.requests_per_s
    records_per_request = client.records_per_request
    counted_by: Literal["client", "brokers"] = "client"
    if not client.counts_requests and broker_rate:
        counted_by = "brokers"
        # Real Filebeat cannot count its requests (it turns Sarama's metrics into no-ops): the
        # brokers' count of the run's requests stands in.
        requests_per_s = broker_rate
        records_per_request = client.records_per_s / broker_rate
    if busiest is None and broker is not None:
        # No per-broker split of the client's own: the busiest broker as the brokers counted it
        # (once per request for multi-partition clients), never the all-broker total.
        field = "produce_requests_per_s" if multi else "topic_produce_requests_per_s"
        if rates := broker.values(field):
            busiest, busiest_on = max(rates), "brokers"
    try:
        return Measured(
            run_id=record.run_id,
            requests_per_s=requests_per_s,
            requests_counted_by=counted_by,
            busiest_broker_requests_per_s=busiest,
            busiest_broker_measured_on=busiest_on,
            broker_requests_per_s=broker_rate,
            records_per_s=client.records_per_s,
            records_per_request=records_per_request,
            p50_ms=client.delivery_latency_ms.p50,
            p99_ms=p99,
            lost=delivery.lost,
            verified=delivery.verified,
            network_idle_ratio=broker.network_idle_ratio if broker else None,
            handler_idle_ratio=broker.request_handler_idle_ratio if broker else None,
            broker_cpu_cores=broker.cpu_cores if broker else None,
            producer_memory_mb=memory,
            wire_bytes_per_s=wire,
            meets_slo=meets,
        )
    except ValidationError as exc:
        # Each count is within its unit, yet a foreign or hand-edited record can divide a large one
        # by a window of a millisecond (or one that ends before it starts, kept at 1 ns)
        raise BadInput(
            f"run record {record.run_id}: {field_problem(exc)}, from its counts over a measured"
            f" window of {window:.3g} s: not a measurement kbt can use"
        ) from None


# A run whose brokers' request handlers were idle less than this, whose busiest broker kept requests
# waiting in its request queue, or whose client could not send what was offered, measured an
# overloaded cluster: its latency says how overload queues requests, not how a setting with far fewer
# requests will fare, so it calibrates service latency only when no other run of the client kind
# exists. (make demo's linger-0 baseline on a loaded host: handlers 0.64-0.80 idle, yet 11 requests
# queued per broker and a p99 of 4.8 s, which made every batched librdkafka setting miss the SLO.)
SATURATED_HANDLER_IDLE = THRESHOLDS.handler_idle_critical
SATURATED_QUEUE = THRESHOLDS.request_queue_queueing
SATURATED_SHORTFALL = THRESHOLDS.offered_shortfall


def saturated(record: RunRecord) -> bool:
    """Whether the run overloaded the cluster or the client (see SATURATED_HANDLER_IDLE)."""
    client, broker = record.client, record.broker
    idle = broker.request_handler_idle_ratio if broker is not None else None
    if idle is not None and idle < SATURATED_HANDLER_IDLE:
        return True
    queued = max(broker.values("request_queue_size"), default=None) if broker is not None else None
    if queued is not None and queued >= SATURATED_QUEUE:
        return True
    offered = client.offered_records
    return (
        record.plan.workload.rate_per_producer != "max"
        and offered > 0
        and (1 - client.records_sent / offered > SATURATED_SHORTFALL)
    )


def calibrate(records: Iterable[RunRecord]) -> Calibration:
    """Service latency and memory base per client kind: medians over ok runs of (measured -
    simulated batching delay) and (measured memory - bytes held while batching). Runs that
    saturated the cluster or the client are left out while unsaturated runs of the kind exist;
    runs on busy brokers (LOADED_BUSY) calibrate the service times at their load apart
    (_with_load). Real Filebeat's per-line pipeline cost is refitted from its synchronous flush runs
    among them (fitted_harvest_spacing) and used for its batching delay."""
    ok = [r for r in records if _calibrates(r)]
    calm_kinds = {_kind(r) for r in ok if not saturated(r)}
    kept = [r for r in ok if not saturated(r) or _kind(r) not in calm_kinds]
    spacing = fitted_harvest_spacing(kept)
    calm = [r for r in kept if not on_busy_brokers(r)]
    loaded = [r for r in ok if on_busy_brokers(r)]  # saturated or not: their load is known
    unloaded, at_load = _calibrate(calm, spacing).clients, _calibrate(loaded, spacing).clients
    kinds = sorted({*unloaded, *at_load})
    return Calibration({kind: _with_load(unloaded.get(kind), at_load.get(kind)) for kind in kinds})


def _with_load(calm: ClientCalibration | None, loaded: ClientCalibration | None) -> ClientCalibration:
    """A kind's calibration from its calm runs and its runs on busy brokers: the calm runs' service
    times unloaded (without any, the loaded ones' cut to the kind's defaults), the loaded ones' and
    their load beside them (ClientCalibration.service_at)."""
    if loaded is None:
        assert calm is not None
        return calm
    unloaded = calm or replace(
        loaded,
        service_p50_ms=min(loaded.service_p50_ms, DEFAULT_SERVICE_P50_MS),
        service_p99_ms=min(loaded.service_p99_ms, DEFAULT_SERVICE_P99_MS),
    )
    return replace(
        unloaded,
        runs=unloaded.runs + loaded.runs if calm is not None else loaded.runs,
        loaded_p50_ms=loaded.service_p50_ms,
        loaded_p99_ms=loaded.service_p99_ms,
        load_busy=loaded.load_busy,
        load_share=loaded.load_share,
        load_requests_per_s=loaded.load_requests_per_s,
    )


# Real Filebeat's per-line pipeline cost follows the host's speed, and on the synchronous flush path
# (flush.timeout 0s) a read's requests follow it: the time its lines take to enter Sarama over
# Sarama's cycle (docs/benchmarks.md "Real Filebeat's pipeline cost, fitted per host"). Each such
# run implies the cost that makes the model meet its measured rate, searched in this range (the
# rate grows about linearly with the cost: regula falsi, Illinois variant, to SPACING_TOLERANCE of
# the rate or SPACING_STEPS steps); a run whose prediction the whole range moves by less than
# SPACING_SENSITIVE of its rate does not depend on it and fits nothing.
SPACING_RANGE_S = (5e-6, 400e-6)
SPACING_STEPS = 8
SPACING_TOLERANCE = 0.005
SPACING_SENSITIVE = 0.10


def fitted_harvest_spacing(records: Iterable[RunRecord]) -> dict[str, tuple[float, int]]:
    """Per client kind with a harvester on the synchronous flush path: the median per-line cost
    its runs imply, and how many runs implied one (kinds without such runs: absent)."""
    implied: dict[str, list[float]] = {}
    for record in records:
        if record.status != "ok" or off_schedule(record) is not None:
            continue
        try:
            traffic = traffic_of_record(record)
            rules = rules_of(record.plan.profile)
        except Exception:  # a record the model cannot read fits nothing
            continue
        if not isinstance(rules, FilebeatRules) or rules.harvest_spacing_s <= 0 or not rules.sync_flush:
            continue
        if record.client.engine != REAL_ENGINE_NAME:  # the pipeline of real pods, nothing else
            continue
        measured = measured_of(record, SLOBounds()).requests_per_s
        value = _implied_spacing(traffic, rules, measured) if measured else None
        if value is not None:
            implied.setdefault(rules.kind, []).append(value)
    return {kind: (statistics.median(v), len(v)) for kind, v in implied.items()}


def _implied_spacing(traffic: Traffic, rules: FilebeatRules, measured: float) -> float | None:
    def gap(spacing: float) -> float:
        return predict_rules(traffic, replace(rules, harvest_spacing_s=spacing)).requests_per_s - measured

    lo, hi = SPACING_RANGE_S
    g_lo, g_hi = gap(lo), gap(hi)
    if g_hi - g_lo < SPACING_SENSITIVE * measured or not g_lo <= 0 <= g_hi:
        return None
    side = 0  # which end the last steps kept (Illinois: halve the other end's weight on a repeat)
    at = lo
    for _ in range(SPACING_STEPS):
        at = hi - g_hi * (hi - lo) / (g_hi - g_lo) if g_hi != g_lo else (lo + hi) / 2
        g = gap(at)
        if abs(g) <= SPACING_TOLERANCE * measured:
            return at
        if g < 0:
            lo, g_lo = at, g
            if side == -1:
                g_hi /= 2
            side = -1
        else:
            hi, g_hi = at, g
            if side == 1:
                g_lo /= 2
            side = 1
    return at


def _kind(record: RunRecord) -> str | None:
    try:
        return rules_of(record.plan.profile).kind
    except Exception:  # a profile the model cannot read calibrates nothing
        return None


def _calibrates(record: RunRecord) -> bool:
    client = record.client
    return record.status == "ok" and client.delivery_latency_ms.p99 is not None and client.records_acked > 0


def _calibrate(records: Iterable[RunRecord], spacing: dict[str, tuple[float, int]]) -> Calibration:
    p50s: dict[str, list[float]] = {}  # per client kind
    p99s: dict[str, list[float]] = {}
    bases: dict[str, list[float]] = {}
    # (busy share, the run's share of it, its predicted busiest-broker requests/s)
    loads: dict[str, list[tuple[float, float, float]]] = {}
    for record in records:
        client = record.client
        p99 = client.delivery_latency_ms.p99
        if p99 is None:
            continue
        try:
            traffic = traffic_of_record(record)
            rules = rules_of(record.plan.profile)
        except Exception:  # a record the model cannot read (closed loop, unknown client) calibrates nothing
            continue
        kind: str = rules.kind
        calib = ClientCalibration(harvest_spacing_s=spacing.get(kind, (None, 0))[0])
        sim = simulated(traffic, calibrated_rules(rules, calib))
        p99s.setdefault(kind, []).append(p99 - sim.wait_quantile(0.99) * 1000)
        if on_busy_brokers(record):  # a calm run's load scales nothing: its rate is not predicted
            busy = busiest_busy(record) or 0.0
            own = predict_rules(traffic, rules, calib).busiest_broker_requests_per_s
            loads.setdefault(kind, []).append((busy, own_share(record), own))
        if client.delivery_latency_ms.p50 is not None:
            p50s.setdefault(kind, []).append(client.delivery_latency_ms.p50 - sim.wait_quantile(0.5) * 1000)
        if client.max_producer_rss_mb is not None:
            mean_wait = sum(sim.waits_s) / max(len(sim.waits_s), 1)
            held = traffic.rate * mean_wait * traffic.message_bytes / 1e6
            bases.setdefault(kind, []).append(client.max_producer_rss_mb - held)
    out: dict[str, ClientCalibration] = {}
    for kind, values in p99s.items():
        default = ClientCalibration()
        p50 = max(0.5, statistics.median(p50s[kind])) if p50s.get(kind) else default.service_p50_ms
        base = max(1.0, statistics.median(bases[kind])) if bases.get(kind) else default.memory_base_mb
        out[kind] = ClientCalibration(
            service_p50_ms=p50,
            service_p99_ms=max(1.0, statistics.median(values)),
            memory_base_mb=base,
            runs=len(values),
            harvest_spacing_s=spacing[kind][0] if kind in spacing else None,
            spacing_runs=spacing[kind][1] if kind in spacing else 0,
            **_load_of(loads.get(kind, []), len(values)),
        )
    return Calibration(out)


# A run's service times carry its brokers' queueing when its busiest broker was at least this busy
# (network or handler idle below the warning band): they are scaled to each setting's request rate
# (ClientCalibration.service_at), apart from calm runs' unloaded times. Below it, queueing is a small
# part of the service time and the times hold at any load.
LOADED_BUSY = 1 - THRESHOLDS.network_idle_warning


def on_busy_brokers(record: RunRecord) -> bool:
    busy = busiest_busy(record)
    return busy is not None and busy >= LOADED_BUSY


def busiest_busy(record: RunRecord) -> float | None:
    """The busy share of the run's busiest broker: 1 - its lowest network or handler idle."""
    busiest = _busiest(record)
    return None if busiest is None else 1 - _idle_of(busiest)


def _busiest(record: RunRecord) -> BrokerStats | None:
    """The run's broker with the lowest network or handler idle (None: no broker measured one)."""
    broker = record.broker
    measured = [b for b in broker.brokers if _idles(b)] if broker is not None else []
    return min(measured, key=_idle_of, default=None)


def own_share(record: RunRecord) -> float:
    """The run's share of the produce requests its busiest broker took: the rest (other clients on
    the cluster, another group replayed beside it) keeps the broker as busy whatever this setting
    sends. The client's own count on that broker where it keeps one (once per request, as the
    broker's counter), else its topics' count for clients whose requests carry one partition; 1
    when neither can tell it from other traffic."""
    busiest = _busiest(record)
    if busiest is None or not busiest.produce_requests_per_s:
        return 1.0
    client = record.client
    counted = client.produce_requests_by_broker.get(busiest.broker) if client.counts_requests else None
    if counted:
        own: float | None = counted / client.window_s
    elif not kind_of(record.plan.profile).multi_partition_requests:
        own = busiest.topic_produce_requests_per_s
    else:
        return 1.0
    return min(1.0, own / busiest.produce_requests_per_s) if own else 1.0


def _idles(stats: BrokerStats) -> list[float]:
    return [v for v in (stats.network_idle_ratio, stats.request_handler_idle_ratio) if v is not None]


def _idle_of(stats: BrokerStats) -> float:
    """A broker's lowest idle, network or request handlers (what fills first)."""
    return min(_idles(stats))


def _load_of(loads: list[tuple[float, float, float]], runs: int) -> dict[str, float]:
    """The load of a kind's runs on busy brokers (every one measured its brokers at LOADED_BUSY or
    more: calibrate sorts them out)."""
    if len(loads) < runs or not loads:
        return {}
    busy = statistics.median(b for b, _, _ in loads)
    rate = statistics.median(r for _, _, r in loads)
    if busy < LOADED_BUSY or rate <= 0:
        return {}
    share = statistics.median(s for _, s, _ in loads)
    return {"load_busy": busy, "load_share": share, "load_requests_per_s": rate}


@dataclass(frozen=True)
class TruthRow:
    """One ok run: the produce requests/s the model predicts for its setting and load, and what was
    measured (the client's own count, or the brokers' where the client has none: real Filebeat)."""

    record: RunRecord
    predicted: float
    measured: float
    regime: str = ""  # the model's regime of the setting (tuner/model/uncertainty.py)
    predicted_p99_ms: float | None = None

    @property
    def error(self) -> float:
        return (self.predicted - self.measured) / self.measured

    @property
    def p99_error(self) -> float | None:
        p99 = self.record.client.delivery_latency_ms.p99
        return None if not p99 or self.predicted_p99_ms is None else self.predicted_p99_ms / p99 - 1


# More than one record in ten sent after the next one was due: the client saw bursts, not the
# plan's schedule (thresholds.yml, send_lag_p90_intervals).
OFF_SCHEDULE_INTERVALS = THRESHOLDS.send_lag_p90_intervals


def off_schedule(record: RunRecord) -> str | None:
    """Why an open-loop run's arrivals were not its plan's, or None. The model predicts from the
    schedule; when the load generator fell behind (a starved host, a stalled JVM) by more than a
    schedule interval for over a tenth of its records, the client batched bursts instead, and the
    run tests no prediction. (A Java run on a host at load ~59: send lag p90 9.5 ms against a 4 ms
    interval, the sender's own queue time up to 372 ms, 19% fewer requests than its quiet repeats.)"""
    return schedule_slip(record.plan.workload.rate_per_producer, record.client.send_lag_ms)


def schedule_slip(rate: float | Literal["max"], lag: LatencyMs | None) -> str | None:
    """off_schedule from a run's planned rate per producer and its client's send lag."""
    if rate == "max" or lag is None or lag.p90 is None or float(rate) <= 0:
        return None
    interval_ms = 1000 / float(rate)
    if lag.p90 <= OFF_SCHEDULE_INTERVALS * interval_ms:
        return None
    return (
        f"off its schedule: send lag p90 {lag.p90:.1f} ms above"
        f" {OFF_SCHEDULE_INTERVALS:g} x its {interval_ms:.1f} ms interval"
    )


def truth_rows(records: Iterable[RunRecord], calibration: Calibration | None = None) -> list[TruthRow]:
    """The model against each ok run with a measured request rate (unreadable or closed-loop runs
    have no prediction, and runs off their schedule test none: both are left out)."""
    rows: list[TruthRow] = []
    for record in records:
        if record.status != "ok" or off_schedule(record) is not None:
            continue
        measured = measured_of(record, SLOBounds()).requests_per_s
        if not measured:
            continue
        try:
            predicted = predict(traffic_of_record(record), record.plan.profile, calibration)
        except Exception:  # closed-loop or unreadable records have no prediction
            continue
        rows.append(
            TruthRow(record, predicted.requests_per_s, measured, predicted.regime or "", predicted.p99_ms)
        )
    return rows


def held_out_errors(records: Iterable[RunRecord], calibration: Calibration) -> list[HeldOutError]:
    """The signed errors of each ok held-out run, the input of the error table (bands_from)."""
    return [
        HeldOutError(
            kind=row.record.plan.profile.client,
            regime=row.regime,
            run=row.record.run_id,
            requests_error=row.error,
            p99_error=row.p99_error,
            shape=f"{row.record.sweep}/{row.record.name}",
            predicted_p99_ms=row.predicted_p99_ms,
        )
        for row in truth_rows(records, calibration)
    ]


def model_truth(records: Sequence[RunRecord], calibration: Calibration | None = None) -> list[ModelTruth]:
    """Median and largest |error| of truth_rows, per client kind, with the count of ok runs left
    out as off their schedule."""
    errors: dict[ClientKind, list[float]] = {}
    for row in truth_rows(records, calibration):
        errors.setdefault(row.record.plan.profile.client, []).append(abs(row.error))
    apart: Counter[str] = Counter(
        r.plan.profile.client for r in records if r.status == "ok" and off_schedule(r) is not None
    )
    return [
        ModelTruth(
            client=kind,
            runs=len(v),
            median_abs_error=statistics.median(v),
            max_abs_error=max(v),
            off_schedule=apart[kind],
        )
        for kind, v in sorted(errors.items())
    ]
