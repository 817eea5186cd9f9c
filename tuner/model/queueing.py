"""The broker's request path as a finite queue: where the knee is, and what lies past it.

Network threads put each request into the request queue (cap `queued.max.requests`); the request
handlers take them out. Seen from the handlers the broker is an M/M/1/K queue: requests offered at
rate lambda, served at rate mu by the handler pool (mu = handler threads / time per request), at
most K = queue cap + 1 in the system. With rho = lambda / mu, P(n in system) is proportional to
rho^n for n = 0..K, and

    handler busy   = 1 - P(0)                     served = lambda (1 - P(K))
    request queue  = E[n] - handler busy          (requests waiting for a handler)
    blocked        = cap (1 - exp(-x / cap)),     x = lambda P(K) / mu (a network thread holding a
                                                   request while the queue is full waits ~1/mu for a
                                                   slot), at most `cap`: Kafka mutes a connection
                                                   while its request is in the broker, so only the
                                                   connections beyond the queue's room are left to
                                                   read and block on (with N client connections
                                                   and K slots about (N - K) / N of the time)
    network idle   = 1 - (base + own x served + blocked) / network threads

Kafka's idle meter counts the blocked time as busy (Qunar's mechanism), so network idle has a knee
at rho = 1 (lambda = mu, `knee_requests_per_s`): below it the network threads only do their own
work per request; past it they block on the full queue, more the further past. The parameters are
fitted on a capacity curve (run records of one broker at rising offered load): mu, base, own and
the blocked cap by least squares on the measured network and handler idle; the queue cap is the
records' (the lab's queued.max.requests), else the largest request queue the runs saw (a saturated
run sits at it), unless given.

    model = fit_queue_model(curve_points(records))
    model.predict(1.5 * model.knee_requests_per_s).network_idle
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.optimize
from pydantic import Field

from tuner.core.errors import BadInput
from tuner.core.frozen import Frozen
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.figures import BrokerStats
from tuner.store.record import RunRecord

MIN_POINTS = 3


@dataclass(frozen=True)
class CurvePoint:
    """One run on one broker: what was offered and what the broker measured."""

    run_id: str
    profile: str
    offered_requests_per_s: float  # offered records/s over the profile's unhindered records per request
    served_requests_per_s: float
    network_idle: float
    handler_idle: float
    request_queue: float | None  # mean
    request_queue_max: float | None
    request_queue_cap: int | None = None  # queued.max.requests, when the record knows it


class QueuePoint(Frozen):
    offered_requests_per_s: float
    utilisation: float  # rho = offered / knee
    served_requests_per_s: float
    p_full: float  # the share of arrivals that find the queue full
    handler_idle: float
    request_queue: float  # mean requests waiting for a handler
    blocked: float  # per network thread, fraction of its time blocked on the full queue
    network_idle: float


class QueueModel(Frozen):
    """One broker's request path (see the module doc); rates per broker."""

    service_rate_per_s: float = Field(gt=0)  # mu: produce requests/s the handlers serve flat out
    queue_cap: int = Field(ge=1)  # queued.max.requests
    network_threads: int = Field(1, ge=1)
    network_base_busy: float = Field(0.0, ge=0)  # network thread-seconds per second with no produce traffic
    network_s_per_request: float = Field(0.0, ge=0)  # network thread-seconds of own work per request
    blocked_cap: float = Field(1.0, gt=0, le=1)  # the most of its time a network thread spends blocked
    rmse_idle: float | None = None  # fit residual over network and handler idle
    runs: list[str] = Field(default_factory=list)

    @property
    def knee_requests_per_s(self) -> float:
        return self.service_rate_per_s

    def predict(self, offered_requests_per_s: float) -> QueuePoint:
        lam = max(0.0, offered_requests_per_s)
        mu = self.service_rate_per_s
        rho = lam / mu
        probs = occupancy(rho, self.queue_cap + 1)
        p0, pk = float(probs[0]), float(probs[-1])
        busy = 1.0 - p0
        mean = float(np.dot(np.arange(len(probs)), probs))
        served = lam * (1.0 - pk)
        cap = self.blocked_cap
        blocked = cap * (1.0 - math.exp(-lam * pk / mu / cap)) if lam > 0 else 0.0
        threads = self.network_threads
        net_busy = (self.network_base_busy + self.network_s_per_request * served + blocked) / threads
        return QueuePoint(
            offered_requests_per_s=lam,
            utilisation=rho,
            served_requests_per_s=served,
            p_full=pk,
            handler_idle=_clip(1.0 - busy),
            request_queue=max(0.0, mean - busy),
            blocked=min(1.0, blocked / threads),
            network_idle=_clip(1.0 - net_busy),
        )

    def headroom(self, requests_per_s: float) -> float | None:
        """How many times today's produce requests/s fit below the knee (None with no requests:
        no finite multiple)."""
        if requests_per_s <= 0:
            return None
        ratio = self.knee_requests_per_s / requests_per_s
        return ratio if math.isfinite(ratio) else None


def occupancy(rho: float, k: int) -> np.ndarray:
    """P(n in system), n = 0..k, of an M/M/1/K queue (computed in logs: rho^k over- and underflows)."""
    n = np.arange(k + 1, dtype=float)
    if rho <= 0:
        out = np.zeros(k + 1)
        out[0] = 1.0
        return out
    logs = n * math.log(rho)
    weights = np.exp(logs - logs.max())
    return np.asarray(weights / weights.sum())


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


# ---- the curve ----------------------------------------------------------------------------------


def curve_points(records: Sequence[RunRecord]) -> list[CurvePoint]:
    """One point per ok one-broker run with the broker's requests, idle ratios and an offered rate.
    The offered produce requests/s are the offered records/s over the records per request the same
    client profile sent when the broker kept up (its calmest run), and at least the requests served:
    what the clients would send to a broker that never pushed back."""
    usable: list[tuple[RunRecord, BrokerStats, float, float, float, float]] = []
    for r in records:
        if r.status != "ok" or r.broker is None or len(r.broker.brokers) != 1:
            continue
        b = r.broker.brokers[0]
        served, net, hnd = b.produce_requests_per_s, b.network_idle_ratio, b.request_handler_idle_ratio
        if not served or net is None or hnd is None or not r.client.records_per_s:
            continue
        usable.append((r, b, served, net, hnd, r.client.records_per_s / served))
    calm: dict[str, float] = {}
    for r, _, _, _, _, per_request in sorted(usable, key=lambda u: 1.0 - u[4]):  # calmest handlers first
        calm.setdefault(r.plan.profile.name, per_request)
    points = []
    for r, b, served, net, hnd, _ in usable:
        workload = r.plan.workload
        if workload.rate_per_producer == "max":  # closed loop: nothing was offered beyond what was sent
            continue
        offered = float(workload.rate_per_producer) * workload.producers
        points.append(
            CurvePoint(
                run_id=r.run_id,
                profile=r.plan.profile.name,
                # A run that served more than that was offered at least what it served (linger-bound
                # batching sends more records per request as the rate rises, fewer as it falls).
                offered_requests_per_s=max(served, offered / calm[r.plan.profile.name]),
                served_requests_per_s=served,
                network_idle=net,
                handler_idle=hnd,
                request_queue=b.request_queue_size,
                request_queue_max=b.request_queue_size_max,
                request_queue_cap=r.broker.request_queue_cap if r.broker else None,
            )
        )
    return points


def saturated_curve(points: Sequence[CurvePoint]) -> bool:
    """Whether the points make a capacity curve: enough runs, and at least one past the knee (its
    request queue at the cap, on average near the largest queue any run saw)."""
    seen = [p.request_queue_max for p in points if p.request_queue_max is not None]
    if len(points) < MIN_POINTS or not seen or max(seen) < 2:
        return False
    near = THRESHOLDS.request_queue_near_fraction * max(seen)
    return any(p.request_queue is not None and p.request_queue >= near for p in points)


def fit_queue_model(
    points: Sequence[CurvePoint], queue_cap: int | None = None, network_threads: int = 1
) -> QueueModel:
    """mu, base and own by least squares on network and handler idle (see the module doc)."""
    if len(points) < MIN_POINTS:
        raise BadInput(f"the queueing model needs at least {MIN_POINTS} one-broker runs, got {len(points)}")
    known = {p.request_queue_cap for p in points if p.request_queue_cap is not None}
    if queue_cap is None and len(known) == 1:
        queue_cap = known.pop()
    if queue_cap is None:
        seen = [p.request_queue_max for p in points if p.request_queue_max is not None]
        if not seen or max(seen) < 1:
            raise BadInput("no run saw a request queue: give the queue cap (queued.max.requests)")
        queue_cap = round(max(seen))
    offered = np.array([p.offered_requests_per_s for p in points])
    net = np.array([p.network_idle for p in points])
    hnd = np.array([p.handler_idle for p in points])
    # Start mu at what the busiest handlers' run implies: served / busy.
    busiest = max(points, key=lambda p: 1.0 - p.handler_idle)
    mu0 = busiest.served_requests_per_s / max(1.0 - busiest.handler_idle, 0.05)
    scale = max(offered.max(), mu0, 1.0)

    def model_of(x: np.ndarray) -> QueueModel:
        return QueueModel(
            service_rate_per_s=float(x[0]) * scale,
            queue_cap=queue_cap,
            network_threads=network_threads,
            network_base_busy=float(x[1]),
            network_s_per_request=float(x[2]) / scale,
            blocked_cap=float(x[3]),
        )

    def residuals(x: np.ndarray) -> np.ndarray:
        m = model_of(x)
        pred = [m.predict(o) for o in offered]
        return np.concatenate([[p.network_idle for p in pred] - net, [p.handler_idle for p in pred] - hnd])

    fit = scipy.optimize.least_squares(
        residuals,
        x0=np.array([mu0 / scale, 0.0, 0.0, 0.5]),
        bounds=([1e-6, 0.0, 0.0, 0.01], [100.0, 1.0, 1.0, 1.0]),
    )
    best = model_of(fit.x)
    rmse = float(np.sqrt(np.mean(residuals(fit.x) ** 2)))
    return best.model_copy(update={"rmse_idle": rmse, "runs": sorted(p.run_id for p in points)})
