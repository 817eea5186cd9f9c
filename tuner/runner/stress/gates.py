"""Judge one stage of a stress run against the spec's gates, and sum up consumer groups.

A judged stage fails when any gate fails:
  network_idle   NetworkProcessorAvgIdlePercent (mean over the stage, worst broker) < the minimum
  request_queue  RequestQueueSize (mean over the stage, worst broker) > the maximum: saturated
  p99            producer delivery latency p99 (from the intended send time) > the SLO; records not
                 acked yet count as slower than every acked one
  e2e_p99        real-time consumers' end-to-end p99 > its limit
  failed         records whose delivery failed
  lost           acked records missing when the topic is read back (after the ramp)
A gate without data (no Prometheus, no records) does not fail the stage; its detail says so.

Not a gate: when the producers' own process fell behind its schedule (send lag p99 above
thresholds.yml's send_lag_p99_ms, the limit that makes a sweep run "unclean"), the stage carries a
note: that part of the latency was spent before produce() was called (the load generator short of
CPU), not in the client's queue or the brokers.
"""

from __future__ import annotations

from dataclasses import dataclass

from tuner.driver.stress.consumer_tally import GroupTally, HalfTally
from tuner.driver.stress.tally import StageTally
from tuner.spec.stress_spec import Gates, Stage
from tuner.spec.thresholds import THRESHOLDS
from tuner.spec.workload import ConsumerGroupSpec
from tuner.store.figures import BrokerWindow, ClientResult, DeliveryResult
from tuner.store.stress_section import ConsumerHalf, ConsumerStage, GateCheck


def broker_gates(gates: Gates, broker: BrokerWindow | None) -> list[GateCheck]:
    out: list[GateCheck] = []
    # (gate, limit, field, the worst broker is the lowest value)
    for gate, limit, field, lowest in (
        ("network_idle", gates.network_idle_min, "network_idle_ratio", True),
        ("request_queue", gates.request_queue_max, "request_queue_size", False),
    ):
        if limit is None:
            continue
        values = broker.values(field) if broker is not None else []
        worst = (min(values) if lowest else max(values)) if values else None
        out.append(
            GateCheck(
                gate=gate,
                limit=limit,
                value=worst,
                passed=worst is None or (worst >= limit if lowest else worst <= limit),
                detail="no broker measurement" if worst is None else "",
            )
        )
    return out


@dataclass(frozen=True)
class ProducerFigures:
    """A stage's producer side as the gates read it, from locust's tally or an engine's result."""

    sent: int
    unacked: int  # sent, neither acked nor failed by the end
    failed: int
    p99_ms: float | None  # counting unacked records as slower than every acked one

    @classmethod
    def of_tally(cls, tally: StageTally) -> ProducerFigures:
        return cls(tally.sent, tally.unacked, tally.failed, tally.p_ms(99, unacked_high=True))

    @classmethod
    def of_run(cls, client: ClientResult, delivery: DeliveryResult) -> ProducerFigures:
        """An engine's run: the records whose outcome it never learned count as unacked (an
        engine's latency histogram holds acked records only, so the p99 is then unknown)."""
        unacked = delivery.indeterminate
        p99 = client.delivery_latency_ms.p99 if unacked == 0 else None
        return cls(client.records_sent, unacked, max(client.records_failed, delivery.failed), p99)


def producer_gates(gates: Gates, producers: StageTally | ProducerFigures) -> list[GateCheck]:
    figures = producers if isinstance(producers, ProducerFigures) else ProducerFigures.of_tally(producers)
    out: list[GateCheck] = []
    if gates.p99_ms is not None:
        p99 = figures.p99_ms
        if figures.sent == 0:
            out.append(GateCheck(gate="p99", limit=gates.p99_ms, passed=True, detail="no records"))
        elif p99 is None:
            unacked = f"{figures.unacked} of {figures.sent} records not acked: p99 is above every ack"
            out.append(GateCheck(gate="p99", limit=gates.p99_ms, passed=False, detail=unacked))
        else:
            out.append(GateCheck(gate="p99", limit=gates.p99_ms, value=p99, passed=p99 <= gates.p99_ms))
    out.append(
        GateCheck(
            gate="failed",
            limit=0,
            value=float(figures.failed),
            passed=figures.failed == 0,
            detail=f"{figures.failed} records failed delivery" if figures.failed else "",
        )
    )
    return out


def generator_note(tally: StageTally) -> str | None:
    """A note when the load generator fell behind its schedule in this stage, else None."""
    lag = tally.send_lag.percentile_ms(99)
    if lag is None or lag <= THRESHOLDS.send_lag_p99_ms:
        return None
    return (
        f"load generator behind schedule: send lag p99 {lag:.0f} ms (counted in the delivery p99:"
        " the producing process itself ran late)"
    )


def e2e_gate(gates: Gates, realtime: list[HalfTally]) -> list[GateCheck]:
    if gates.e2e_p99_ms is None:
        return []
    merged = HalfTally()
    for half in realtime:
        merged.merge(half)
    p99 = merged.e2e.percentile_ms(99)
    return [
        GateCheck(
            gate="e2e_p99",
            limit=gates.e2e_p99_ms,
            value=p99,
            passed=p99 is None or p99 <= gates.e2e_p99_ms,
            detail="no real-time records" if p99 is None else "",
        )
    ]


def loss_gates(lost: int | None, verified: bool) -> list[GateCheck]:
    if not verified:
        return [GateCheck(gate="verified", passed=False, detail="delivery was not verified")]
    return [
        GateCheck(
            gate="lost",
            limit=0,
            value=float(lost or 0),
            passed=not lost,
            detail=f"{lost} acked records lost" if lost else "",
        )
    ]


def stage_gates(
    gates: Gates,
    stage: Stage,
    broker: BrokerWindow | None,
    producers: StageTally | ProducerFigures,
    readers: list[HalfTally],
    loss: list[GateCheck],
) -> list[GateCheck]:
    """Every gate of a judged stage (`readers`: the real-time groups' tallies); a stage not judged
    has its loss gates only."""
    if not stage.judged:
        return loss
    return [*broker_gates(gates, broker), *producer_gates(gates, producers), *e2e_gate(gates, readers), *loss]


def failed_gates(checks: list[GateCheck]) -> list[GateCheck]:
    return [c for c in checks if not c.passed]


def describe(check: GateCheck) -> str:
    if check.detail and check.value is None:
        return check.detail if check.gate == "verified" else f"{check.gate}: {check.detail}"
    names = {
        "network_idle": "network idle {v:.2f} < {l:g}",
        "request_queue": "request queue {v:.1f} > {l:g}",
        "p99": "p99 {v:.0f} ms > {l:g} ms",
        "e2e_p99": "real-time e2e p99 {v:.0f} ms > {l:g} ms",
    }
    template = names.get(check.gate)
    if template is None or check.value is None or check.limit is None:
        return check.detail or check.gate
    return template.format(v=check.value, l=check.limit)


# ---- consumers -----------------------------------------------------------------------------------


def consumer_half(tally: HalfTally, seconds: float, lagging_readers: bool) -> ConsumerHalf:
    return ConsumerHalf(
        seconds=seconds,
        records=tally.records,
        records_per_s=tally.records / seconds if seconds > 0 else 0.0,
        e2e_p50_ms=tally.e2e.percentile_ms(50),
        e2e_p99_ms=tally.e2e.percentile_ms(99),
        mean_age_s=tally.mean_age_s,
        lag_mean=tally.mean_lag,
        lag_max=tally.lag_max if tally.lag_samples else None,
        rewinds=tally.rewinds,
        active_s=tally.active_s,
        lagging_readers=lagging_readers,
    )


def consumer_stage(group: ConsumerGroupSpec, tally: GroupTally, stage: Stage) -> ConsumerStage:
    half_s = stage.duration_s / 2
    first = stage.lagging == "on"
    second = stage.lagging in ("on", "split")
    return ConsumerStage(
        group=group.name,
        mode=group.mode,
        whole=consumer_half(tally.stage(stage.index), stage.duration_s, first and second),
        first_half=consumer_half(tally.half(stage.index, 0), half_s, first),
        second_half=consumer_half(tally.half(stage.index, 1), half_s, second),
    )


def whole_stage_consumer(group: ConsumerGroupSpec, tally: GroupTally, stage: Stage) -> ConsumerStage:
    """A stage run through a kind's engine has no halves (no lagging readers read beside it): the
    whole stage, its halves left empty."""
    empty = consumer_half(HalfTally(), stage.duration_s / 2, False)
    whole = consumer_half(tally.stage(stage.index), stage.duration_s, False)
    return ConsumerStage(group=group.name, mode=group.mode, whole=whole, first_half=empty, second_half=empty)
