"""Capacity forecast: idle ratios and produce requests at k x today's traffic, and brokers needed.

From the fitted broker cost model (tuner.model.cost) and a baseline per settings (today's cluster
produce requests/s and bytes/s on N brokers, how unevenly the busiest broker is loaded, and what
its brokers measured), for the current and the recommended settings side by side (the Pafka-style
"servers needed"):

    peak traffic = k x today's bytes; produce requests = k x today's (records per request kept)
    busiest broker on n brokers = total / n x skew (skew = busiest / mean broker today), but never
        less than its partitions allow (tuner.model.forecast_today.busiest_traffic)
    brokers needed = the smallest n whose busiest broker keeps network and handler idle >= min_idle,
        and never fewer than the largest replication factor of the topics

Before any of that the forecast reproduces today (tuner.model.forecast_today): the model's idle
for today's traffic on the busiest broker is compared with what the brokers measured and, past
`forecast_today_idle_tolerance`, calibrated to the measurement (or refused).

Keeping records per request is exact for unbatched clients (one record per request) and an upper
bound for linger-bound batching, whose batches fill up as the rate rises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.model.cost import BrokerCostModel
from tuner.model.forecast_today import (
    Baseline,
    Calibration,
    TodayCheck,
    busiest_traffic,
    check_today,
    fit_warnings,
)
from tuner.spec.thresholds import THRESHOLDS

MAX_BROKERS = 10_000
MIN_IDLE = THRESHOLDS.network_idle_critical

Limit = Literal["network", "handler", "replication", "placement", "none"]


class ForecastRow(Frozen):
    label: str
    role: Literal["current", "recommended"]
    peak: float
    brokers: int  # today's broker count
    requests_per_s: float  # cluster, at the peak (on today's brokers)
    bytes_per_s: float
    busiest_broker_requests_per_s: float  # on today's brokers, at the peak
    network_idle: float  # busiest broker, today's broker count, at the peak
    handler_idle: float
    today_network_idle: float  # the (calibrated) model's figures for today's traffic
    today_handler_idle: float
    brokers_needed: int | None  # None: no broker count reaches min_idle
    # what sets brokers_needed: an idle ratio of one broker fewer, the replication factor (the load
    # alone needs fewer), the busiest broker's partitions (no broker count spreads them thinner), none
    limited_by: Limit
    brokers_needed_by_load: int | None = None  # before the replication factor's floor
    min_brokers: int = 1
    source: str = ""
    calibration: Calibration = Field(default_factory=Calibration)
    # With a queueing model (tuner.model.queueing): the busiest broker's knee, how many times its
    # produce requests at the peak fit below it (< 1: past the knee), and its request queue there.
    knee_requests_per_s: float | None = None
    headroom_to_knee: float | None = None
    request_queue: float | None = None


class Forecast(Frozen):
    peak: float
    min_idle: float
    rows: list[ForecastRow]
    network_r2: float
    handler_r2: float
    n: int
    # today reproduced: per measured baseline, the model against the brokers' figures
    today: list[TodayCheck] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)

    def row(self, role: str) -> ForecastRow | None:
        return next((r for r in self.rows if r.role == role), None)


def busiest_idle(
    model: BrokerCostModel, base: Baseline, peak: float, brokers: int, cal: Calibration | None = None
) -> tuple[float, float]:
    requests, bytes_ = busiest_traffic(base, peak, brokers)
    return (cal or Calibration()).predict_idle(model, requests, bytes_)


def brokers_needed(
    model: BrokerCostModel,
    base: Baseline,
    peak: float,
    min_idle: float,
    cal: Calibration | None = None,
) -> tuple[int | None, Limit]:
    """Smallest broker count keeping both idle ratios >= min_idle on the busiest broker (the load's
    need alone; forecast() adds the replication factor's floor)."""

    def ok(n: int) -> bool:
        net, hnd = busiest_idle(model, base, peak, n, cal)
        return net >= min_idle and hnd >= min_idle

    if not ok(MAX_BROKERS):
        if busiest_traffic(base, peak, MAX_BROKERS) == busiest_traffic(base, peak, MAX_BROKERS // 2):
            return None, "placement"  # more brokers no longer take load off the busiest one
        return None, _limit(*busiest_idle(model, base, peak, MAX_BROKERS, cal))
    lo, hi = 1, MAX_BROKERS  # ok() only improves with more brokers: bisect
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    if lo == 1:
        return 1, "none"
    return lo, _limit(*busiest_idle(model, base, peak, lo - 1, cal))  # what one broker fewer would break


def _limit(net: float, hnd: float) -> Literal["network", "handler"]:
    return "network" if net <= hnd else "handler"


def forecast(
    model: BrokerCostModel,
    baselines: Sequence[Baseline],
    peak: float,
    min_idle: float = MIN_IDLE,
    require_measured: bool = False,
) -> Forecast:
    """The forecast at `peak` x today. Raises ForecastRefused (tuner.model.forecast_today) when
    today cannot be reproduced: too far off on a poor fit, or (with `require_measured`) nothing
    measured to compare with."""
    checks, cals = check_today(model, baselines, require_measured)
    rows = []
    for base, cal in zip(baselines, cals, strict=True):
        by_load, limited = brokers_needed(model, base, peak, min_idle, cal)
        needed: int | None = by_load
        if by_load is not None and by_load < base.min_brokers:
            needed, limited = base.min_brokers, "replication"
        net, hnd = busiest_idle(model, base, peak, base.brokers, cal)
        now_net, now_hnd = busiest_idle(model, base, 1.0, base.brokers, cal)
        busiest, _ = busiest_traffic(base, peak, base.brokers)
        knee = headroom = queue = None
        if model.queue is not None:
            # a calibrated network cost stands for more work per request: the knee comes closer
            effective = busiest * cal.network_factor
            knee = model.queue.knee_requests_per_s / cal.network_factor
            headroom = model.queue.headroom(effective)
            queue = model.queue.predict(effective).request_queue
        rows.append(
            ForecastRow(
                label=base.label,
                role=base.role,
                peak=peak,
                brokers=base.brokers,
                requests_per_s=base.requests_per_s * peak,
                bytes_per_s=base.bytes_per_s * peak,
                busiest_broker_requests_per_s=busiest,
                network_idle=net,
                handler_idle=hnd,
                today_network_idle=now_net,
                today_handler_idle=now_hnd,
                brokers_needed=needed,
                limited_by=limited,
                brokers_needed_by_load=by_load,
                min_brokers=base.min_brokers,
                source=base.source,
                calibration=cal,
                knee_requests_per_s=knee,
                headroom_to_knee=headroom,
                request_queue=queue,
            )
        )
    return Forecast(
        peak=peak,
        min_idle=min_idle,
        rows=rows,
        network_r2=model.network.r2,
        handler_r2=model.handler.r2,
        n=model.n,
        today=checks,
        warnings=fit_warnings(model),
        assumptions=_assumptions(model, baselines, peak, min_idle),
    )


def _assumptions(
    model: BrokerCostModel, baselines: Sequence[Baseline], peak: float, min_idle: float
) -> list[str]:
    out = [
        f"traffic at the peak is {peak:g}x today's bytes and produce requests (records per request kept: "
        "exact without batching, an upper bound for linger-bound batching)",
        "bytes and produce requests spread over n brokers as today (busiest broker = total / n x today's "
        "skew), as far as partition placement allows",
        f"brokers needed keep the busiest broker's network and handler idle >= {min_idle:g}",
    ]
    for field in ("min_brokers_from", "placement_from"):
        notes = [(base.label, getattr(base, field)) for base in baselines if getattr(base, field)]
        if len({note for _, note in notes}) == 1:
            out.append(notes[0][1])
        else:  # each settings' own (runs of a sweep differ in partition batches per request)
            out += [f"{label}: {note}" for label, note in notes]
    if model.queue is not None:
        q = model.queue
        out.append(
            f"idle from the queueing model (M/G/1 with a request queue of {q.queue_cap}, service time scv "
            f"{q.service_scv:.2f}: knee at {q.knee_requests_per_s:,.0f} produce requests/s per broker, "
            f"fitted on {len(q.runs)} runs, idle RMSE "
            f"{q.rmse_idle if q.rmse_idle is not None else float('nan'):.3f}): past the knee the network "
            "threads block on the full queue; the bytes' cost is not in it"
        )
    return out
