"""Capacity forecast: idle ratios and produce requests at k x today's traffic, and brokers needed.

From the fitted broker cost model (tuner.model.cost) and a baseline per settings (today's cluster
produce requests/s and bytes/s on N brokers, and how unevenly the busiest broker is loaded), for
the current and the recommended settings side by side (the Pafka-style "servers needed"):

    peak traffic = k x today's bytes; produce requests = k x today's (records per request kept)
    busiest broker on n brokers = total / n x skew (skew = busiest / mean broker today)
    brokers needed = the smallest n whose busiest broker keeps network and handler idle >= min_idle

Keeping records per request is exact for unbatched clients (one record per request) and an upper
bound for linger-bound batching, whose batches fill up as the rate rises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.model.cost import BrokerCostModel
from tuner.spec.thresholds import THRESHOLDS

MAX_BROKERS = 10_000
MIN_IDLE = THRESHOLDS.network_idle_critical


class Baseline(Frozen):
    """One settings' traffic today."""

    label: str  # "current: filebeat-like", "recommended: batched-zstd"
    role: Literal["current", "recommended"]
    brokers: int
    requests_per_s: float  # cluster produce requests/s
    bytes_per_s: float  # cluster bytes in/s
    skew: float = 1.0  # busiest broker's requests/s over the mean broker's
    source: str = ""  # run id, or "diagnose <prometheus>"


def baseline_from_brokers(
    label: str,
    role: Literal["current", "recommended"],
    per_broker: Sequence[tuple[float, float]],
    source: str,
    requests_factor: float = 1.0,
) -> Baseline:
    """A baseline from (produce requests/s, bytes in/s) per broker; `requests_factor` scales the
    requests (e.g. 1/N for "batching cuts requests ~Nx")."""
    reqs = [r * requests_factor for r, _ in per_broker]
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


class ForecastRow(Frozen):
    label: str
    role: Literal["current", "recommended"]
    peak: float
    brokers: int  # today's broker count
    requests_per_s: float  # cluster, at the peak
    bytes_per_s: float
    busiest_broker_requests_per_s: float  # on today's brokers, at the peak
    network_idle: float  # busiest broker, today's broker count, at the peak
    handler_idle: float
    today_network_idle: float  # the model's figures for today's traffic (a sanity check)
    today_handler_idle: float
    brokers_needed: int | None  # None: no broker count reaches min_idle (the intercept alone is too high)
    limited_by: Literal["network", "handler", "none"]
    source: str = ""
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
    assumptions: list[str] = Field(default_factory=list)

    def row(self, role: str) -> ForecastRow | None:
        return next((r for r in self.rows if r.role == role), None)


def busiest_idle(model: BrokerCostModel, base: Baseline, peak: float, brokers: int) -> tuple[float, float]:
    share = base.skew / brokers
    return model.predict_idle(base.requests_per_s * peak * share, base.bytes_per_s * peak * share)


def brokers_needed(
    model: BrokerCostModel, base: Baseline, peak: float, min_idle: float
) -> tuple[int | None, Literal["network", "handler", "none"]]:
    """Smallest broker count keeping both idle ratios >= min_idle on the busiest broker."""

    def ok(n: int) -> bool:
        net, hnd = busiest_idle(model, base, peak, n)
        return net >= min_idle and hnd >= min_idle

    if not ok(MAX_BROKERS):
        return None, _limit(*busiest_idle(model, base, peak, MAX_BROKERS))
    lo, hi = 1, MAX_BROKERS  # ok() only improves with more brokers: bisect
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    if lo == 1:
        return 1, "none"
    return lo, _limit(*busiest_idle(model, base, peak, lo - 1))  # what one broker fewer would break


def _limit(net: float, hnd: float) -> Literal["network", "handler"]:
    return "network" if net <= hnd else "handler"


def forecast(
    model: BrokerCostModel, baselines: Sequence[Baseline], peak: float, min_idle: float = MIN_IDLE
) -> Forecast:
    rows = []
    for base in baselines:
        needed, limited = brokers_needed(model, base, peak, min_idle)
        net, hnd = busiest_idle(model, base, peak, base.brokers)
        now_net, now_hnd = busiest_idle(model, base, 1.0, base.brokers)
        busiest = base.requests_per_s * peak * base.skew / base.brokers
        knee = headroom = queue = None
        if model.queue is not None:
            knee = model.queue.knee_requests_per_s
            headroom = model.queue.headroom(busiest)
            queue = model.queue.predict(busiest).request_queue
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
                source=base.source,
                knee_requests_per_s=knee,
                headroom_to_knee=headroom,
                request_queue=queue,
            )
        )
    assumptions = [
        f"traffic at the peak is {peak:g}x today's bytes and produce requests (records per request kept: "
        "exact without batching, an upper bound for linger-bound batching)",
        "produce requests spread over n brokers as today (busiest broker = total / n x today's skew)",
        f"brokers needed keep the busiest broker's network and handler idle >= {min_idle:g}",
    ]
    if model.queue is not None:
        q = model.queue
        assumptions.append(
            f"idle from the queueing model (M/G/1 with a request queue of {q.queue_cap}, service time scv "
            f"{q.service_scv:.2f}: knee at {q.knee_requests_per_s:,.0f} produce requests/s per broker, "
            f"fitted on {len(q.runs)} runs, idle RMSE "
            f"{q.rmse_idle if q.rmse_idle is not None else float('nan'):.3f}): past the knee the network "
            "threads block on the full queue; the bytes' cost is not in it"
        )
    return Forecast(
        peak=peak,
        min_idle=min_idle,
        rows=rows,
        network_r2=model.network.r2,
        handler_r2=model.handler.r2,
        n=model.n,
        assumptions=assumptions,
    )
