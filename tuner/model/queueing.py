"""The broker's request path as a queue with a finite room: where the knee is, and what lies past it.

Network threads put each request into the request queue (cap `queued.max.requests`); the request
handlers take them out. Kafka never drops a request: when the queue is full the network thread
holding the next one blocks until a slot frees, and the requests behind it wait in their sockets.
Seen from the handlers the broker is an M/G/1 queue: requests offered at rate lambda (Poisson),
served at rate mu by the handler pool (mu = handler threads / mean time per request), with a
service time whose squared coefficient of variation `scv` is fitted from the data (0: the same
time every request, M/D/1; 1: exponential, M/M/1; between and above: gamma). With rho = lambda / mu
and N the requests in the path (in service, queued, held by a blocked network thread or unread):

    handler busy   = min(rho, 1)                  served = min(lambda, mu)
    request queue  = E[min(max(N - 1, 0), cap)]   (requests waiting for a handler)
    blocked        = bcap x P(N >= cap + 2)       (the queue full and a network thread holding one
                                                   more; 1 past the knee), at most `bcap`: Kafka
                                                   mutes a connection while its request is in the
                                                   broker, so with few client connections the
                                                   network thread may find nothing left to read
    network idle   = 1 - (base + own x served) / network threads - blocked

P(N = n) comes from the M/G/1 queue's embedded chain at departures (`occupancy`): the number of
arrivals during one service is Poisson (scv 0) or negative binomial (gamma service), P(N = 0) =
1 - rho, and the rest follows by level crossing, a sum of positive terms (stable). Past
rho = 1 the queue grows without bound: the request queue sits at its cap, the handlers never idle
and the network threads are blocked `bcap` of their time.

Kafka's idle meter counts the blocked time as busy (Qunar's mechanism), so network idle has a knee
at rho = 1 (lambda = mu, `knee_requests_per_s`): below it the network threads only do their own
work per request, until the queue's room (cap + 2 requests) is rarely enough; past it they block on
the full queue. The less the service time varies, the sharper the knee: with scv 0 and a room of 18
the blocked time is under 1% up to rho = 0.8. The parameters are fitted on a capacity curve (run
records of one broker at rising offered load): mu (at least the most any run served), scv, base,
own and the blocked cap by robust least squares on the measured network and handler idle; the
queue cap is the records' (the lab's queued.max.requests), else the largest request queue the runs
saw (a saturated run sits at it), unless given.

    model = fit_queue_model(curve_points(records))
    model.predict(1.5 * model.knee_requests_per_s).network_idle
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import scipy.optimize
import scipy.stats
from pydantic import Field

from tuner.core.errors import BadInput
from tuner.core.frozen import Frozen
from tuner.spec.limits import MAX_QUEUE_CAP, MAX_RATE_PER_S, MAX_TEXT_CHARS, MAX_THREADS
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.figures import BrokerStats
from tuner.store.record import RunRecord

MIN_POINTS = 3
MAX_SCV = 4.0  # the most variable service time the fit considers (a gamma with shape 1/4)
_DETERMINISTIC_SCV = 1e-6  # below this the service time is taken as constant (Poisson arrivals per service)


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
    served_requests_per_s: float
    handler_idle: float
    request_queue: float  # mean requests waiting for a handler
    blocked: float  # per network thread, fraction of its time blocked on the full queue
    network_idle: float


# Run ids a fitted model names (a results directory of more runs than this is no one's), and a
# run or broker id.
MAX_FITTED_RUNS = 100_000
Label = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


class QueueModel(Frozen):
    """One broker's request path (see the module doc); rates per broker."""

    # mu: produce requests/s the handlers serve flat out
    service_rate_per_s: float = Field(gt=0, le=MAX_RATE_PER_S)
    # queued.max.requests; predict builds arrays of cap + 3
    queue_cap: int = Field(ge=1, le=MAX_QUEUE_CAP)
    # The handler's time per request: squared coefficient of variation (0 constant, 1 exponential).
    service_scv: float = Field(1.0, ge=0, le=MAX_SCV)
    network_threads: int = Field(1, ge=1, le=MAX_THREADS)
    # network thread-seconds per second with no produce traffic
    network_base_busy: float = Field(0.0, ge=0, le=MAX_THREADS)
    network_s_per_request: float = Field(0.0, ge=0, le=1)  # network thread-seconds of own work per request
    blocked_cap: float = Field(1.0, gt=0, le=1)  # the most of its time a network thread spends blocked
    rmse_idle: float | None = Field(None, ge=0, le=1)  # fit residual over network and handler idle
    runs: list[Label] = Field(default_factory=list, max_length=MAX_FITTED_RUNS)

    @property
    def knee_requests_per_s(self) -> float:
        return self.service_rate_per_s

    def predict(self, offered_requests_per_s: float) -> QueuePoint:
        lam = max(0.0, offered_requests_per_s)
        mu = self.service_rate_per_s
        rho = lam / mu
        cap = self.queue_cap
        probs = occupancy(rho, cap + 2, self.service_scv)  # N = 0..cap+1, then N >= cap+2
        waiting = np.minimum(np.maximum(np.arange(cap + 3) - 1, 0), cap)
        blocked = self.blocked_cap * float(probs[-1])  # the queue full and a network thread holding one more
        served = min(lam, mu)
        own = (self.network_base_busy + self.network_s_per_request * served) / self.network_threads
        return QueuePoint(
            offered_requests_per_s=lam,
            served_requests_per_s=served,
            handler_idle=clip_ratio(1.0 - min(rho, 1.0)),
            request_queue=min(float(cap), max(0.0, float(np.dot(waiting, probs)))),
            blocked=clip_ratio(blocked),
            network_idle=clip_ratio(1.0 - own - blocked),
        )

    def headroom(self, requests_per_s: float) -> float | None:
        """How many times today's produce requests/s fit below the knee (None with no requests:
        no finite multiple)."""
        if requests_per_s <= 0:
            return None
        ratio = self.knee_requests_per_s / requests_per_s
        return ratio if math.isfinite(ratio) else None


def arrivals_beyond(rho: float, n: int, scv: float) -> tuple[float, np.ndarray]:
    """(P(no arrival during one service), P(more than j arrivals during it) for j = 0..n-1): Poisson
    arrivals at lambda = rho mu during a service time of mean 1 / mu and squared coefficient of
    variation scv (gamma, so the count is negative binomial; constant below _DETERMINISTIC_SCV)."""
    j = np.arange(n)
    if scv < _DETERMINISTIC_SCV:
        return math.exp(-rho), np.asarray(scipy.stats.poisson.sf(j, rho))
    shape = 1.0 / scv
    p = shape / (shape + rho)
    return float(p**shape), np.asarray(scipy.stats.nbinom.sf(j, shape, p))


def occupancy(rho: float, levels: int, scv: float = 1.0) -> np.ndarray:
    """P(N = n), n = 0..levels-1, then P(N >= levels): the requests in an M/G/1 queue (service scv
    as in `arrivals_beyond`); past rho = 1 all of the mass is at or above `levels`."""
    out = np.zeros(levels + 1)
    if rho <= 0:
        out[0] = 1.0
        return out
    if rho >= 1:
        out[-1] = 1.0
        return out
    # The departure chain (the same distribution as over time, for Poisson arrivals) by level
    # crossing: a departure leaving j + 1 behind is balanced by those crossing up from j or below,
    # a0 P(j + 1) = P(0) P(A > j) + sum_{i=1..j} P(i) P(A > j - i + 1). Every term is positive, so
    # the recursion is stable where the textbook one, a difference of near-equal terms, is not.
    a0, beyond = arrivals_beyond(rho, levels, scv)
    out[0] = 1.0 - rho
    total = out[0]
    for j in range(levels - 1):
        if total >= 1.0 - 1e-15:  # what is left is below rounding
            break
        up = out[0] * beyond[j] + float(np.dot(out[1 : j + 1], beyond[j:0:-1]))
        out[j + 1] = min(up / a0, 1.0 - total)
        total += out[j + 1]
    out[-1] = max(0.0, 1.0 - total)
    return out


def clip_ratio(x: float) -> float:
    """`x` held to [0, 1]."""
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
        scheduled = float(workload.rate_per_producer) * workload.producers
        offered = max(served, scheduled / calm[r.plan.profile.name])
        cap = (r.broker.request_queue_cap if r.broker else None) or b.request_queue_size_max
        if not pushed_back(b.request_queue_size, cap):
            # A broker that kept up took what the clients sent: linger-bound batching packs more
            # records per request as the rate rises, so the calm run's ratio would overstate it.
            offered = served
        points.append(
            CurvePoint(
                run_id=r.run_id,
                profile=r.plan.profile.name,
                # A run that served more than that was offered at least what it served.
                offered_requests_per_s=offered,
                served_requests_per_s=served,
                network_idle=net,
                handler_idle=hnd,
                request_queue=b.request_queue_size,
                request_queue_max=b.request_queue_size_max,
                request_queue_cap=r.broker.request_queue_cap if r.broker else None,
            )
        )
    return points


def pushed_back(queue_mean: float | None, cap: float | None) -> bool:
    """Whether a run's request queue sat near its cap (the broker pushed back on its clients); a run
    without the figures is taken as pushed back (its offered rate is then the schedule's)."""
    return queue_mean is None or not cap or queue_mean >= THRESHOLDS.request_queue_near_fraction * cap


def saturated_curve(points: Sequence[CurvePoint]) -> bool:
    """Whether the points make a capacity curve: enough runs, and at least one past the knee (its
    request queue at the cap, on average near the largest queue any run saw)."""
    seen = [p.request_queue_max for p in points if p.request_queue_max is not None]
    if len(points) < MIN_POINTS or not seen or max(seen) < 2:
        return False
    near = THRESHOLDS.request_queue_near_fraction * max(seen)
    return any(p.request_queue is not None and p.request_queue >= near for p in points)


def fit_queue_model(points: Sequence[CurvePoint], queue_cap: int | None = None) -> QueueModel:
    """mu, scv, base, own and the blocked cap by robust least squares on network and handler idle
    (see the module doc); mu is at least the most produce requests/s any run served."""
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
    # The handlers cannot serve more than mu: the most any run served is its floor (the knee of a
    # curve that went past it), and served / busy of the busiest handlers' run a start.
    floor = max(p.served_requests_per_s for p in points)
    busiest = max(points, key=lambda p: 1.0 - p.handler_idle)
    mu0 = max(floor, busiest.served_requests_per_s / max(1.0 - busiest.handler_idle, 0.05))
    scale = max(offered.max(), mu0, 1.0)

    def model_of(x: np.ndarray) -> QueueModel:
        return QueueModel(
            service_rate_per_s=float(x[0]) * scale,
            queue_cap=queue_cap,
            service_scv=float(x[4]),
            network_base_busy=float(x[1]),
            network_s_per_request=float(x[2]) / scale,
            blocked_cap=float(x[3]),
        )

    def residuals(x: np.ndarray) -> np.ndarray:
        m = model_of(x)
        pred = [m.predict(o) for o in offered]
        return np.concatenate([[p.network_idle for p in pred] - net, [p.handler_idle for p in pred] - hnd])

    low = max(floor / scale, 1e-6)
    lower, upper = [low, 0.0, 0.0, 0.01, 0.0], [max(100.0, 2 * low), 1.0, 1.0, 1.0, MAX_SCV]
    # The blocked cap shows only in runs whose queue sat near its cap; with none it stays at 1 (a
    # network thread with a request in hand blocks for as long as the queue is full).
    if not any(pushed_back(p.request_queue, queue_cap) for p in points):
        lower[3], upper[3] = 1.0 - 1e-9, 1.0
    # soft_l1: a run the host, not the broker, slowed (a busy shared machine) pulls the fit less.
    # Started from a constant and an exponential service time, with the knee at and a little above
    # the most served (a run at the knee sits on a cliff); the best fit is kept.
    fits = [
        scipy.optimize.least_squares(
            residuals,
            x0=np.clip(np.array([mu / scale, 0.0, 0.0, 1.0, scv0]), lower, upper),
            bounds=(lower, upper),
            loss="soft_l1",
            f_scale=0.05,
        )
        for mu in (mu0, 1.05 * mu0)
        for scv0 in (0.0, 1.0)
    ]
    fit = min(fits, key=lambda f: float(f.cost))
    best = model_of(fit.x)
    rmse = float(np.sqrt(np.mean(residuals(fit.x) ** 2)))
    return best.model_copy(update={"rmse_idle": rmse, "runs": sorted(p.run_id for p in points)})
