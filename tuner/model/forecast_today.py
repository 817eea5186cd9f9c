"""A forecast reproduces today before it predicts a peak.

The cost model (tuner.model.cost) is fitted on other records than the cluster a forecast is for: a
model fitted on a lab whose network threads were 2-8% busy says nothing about a production broker at
79%. So the forecast first puts today's traffic through the model and compares the busiest broker's
figures with what the brokers measured (network idle, handler idle; the request queue where both
have one):

- at most `forecast_today_idle_tolerance` below the measurement (pessimistic): kept as fitted;
- above it (optimistic), or further off either way: calibrated. The pool's cost per produce request
  and per byte is scaled by one factor, so that the busiest broker's idle for today's traffic equals
  the lowest idle any broker measured (the factor is said). Where no factor can (no produce traffic
  to scale, or the fitted fixed share alone is busier than measured) the difference is added as fixed
  busy time instead (the offset is said);
- further off than the tolerance on a fit whose R^2 is below `forecast_fit_r2_min`, or (when asked)
  with nothing measured: refused (ForecastRefused, one line, exit 6).

A forecast from a saturated cluster therefore never shows more idle today than the brokers measured,
and every figure at a higher peak or on fewer brokers shows less.

Where the busiest broker's load goes on n brokers (busiest_traffic): bytes and one-partition produce
requests follow the busiest broker's share of the partitions, never below the share its own
partitions carry today (a hot partition cannot be split by adding brokers); produce requests that
carry batches of several partitions (Sarama/Filebeat, the Java producer, franz-go) are one request
per producer flush per broker, so their count per broker does not fall with more brokers until a
request would carry less than one partition.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import Field

from tuner.core.errors import ExitStatus, KbtError
from tuner.core.frozen import Frozen
from tuner.model.cost import BrokerCostModel, LinearFit
from tuner.model.queueing import clip_ratio
from tuner.spec.thresholds import THRESHOLDS

TOLERANCE = THRESHOLDS.forecast_today_idle_tolerance
MIN_R2 = THRESHOLDS.forecast_fit_r2_min
# Above this many partition batches per produce request the brokers' requests are multi-partition
# (one per producer flush per broker); librdkafka's one-partition requests measure 1.00-1.01.
MULTI_PARTITION = 1.1
_FACTOR_RANGE = (1e-6, 1e6)  # calibration factors outside it are no calibration but a different model

Pool = Literal["network", "handler"]


class ForecastRefused(KbtError):
    """The forecast cannot reproduce today: the cost model does not describe the cluster it was given
    (exit 6, REFUSED: a script tells it from a typo's exit 2 and can go on to measure instead)."""

    status = ExitStatus.REFUSED


class BrokerToday(Frozen):
    """What one broker carried and measured today (None: not measured)."""

    broker: str
    requests_per_s: float
    bytes_per_s: float
    network_idle: float | None = None
    handler_idle: float | None = None
    request_queue: float | None = None  # mean produce requests waiting for a handler


class Baseline(Frozen):
    """One settings' traffic today."""

    label: str  # "current: filebeat-like", "recommended: batched-zstd"
    role: Literal["current", "recommended"]
    brokers: int
    requests_per_s: float  # cluster produce requests/s
    bytes_per_s: float  # cluster bytes in/s
    skew: float = 1.0  # busiest broker's requests/s over the mean broker's
    source: str = ""  # run id, or "diagnose <prometheus>"
    # measured per broker (empty: a baseline nobody ran, e.g. today's bytes with requests cut)
    today: list[BrokerToday] = Field(default_factory=list)
    partitions_per_request: float = 1.0  # the busiest broker's partition batches per produce request
    partitions: int | None = None  # partitions the traffic is spread over (None: not known)
    busiest_leaders: int | None = None  # of them, led by the busiest broker today
    min_brokers: int = 1  # the largest replication factor of the topics
    min_brokers_from: str = ""  # where that comes from, said in the forecast's assumptions
    placement_from: str = ""  # where partitions and leaders come from

    @property
    def measured(self) -> bool:
        return any(b.network_idle is not None or b.handler_idle is not None for b in self.today)


def _lead_ratio(base: Baseline, n: int) -> float:
    """The busiest broker's partitions on n brokers over today's (round-robin leadership)."""
    if base.partitions is None:
        return base.brokers / n
    led_today = base.busiest_leaders or math.ceil(base.partitions / base.brokers)
    return math.ceil(base.partitions / n) / max(led_today, 1)


def busiest_traffic(base: Baseline, peak: float, n: int) -> tuple[float, float]:
    """(produce requests/s, bytes/s) of the busiest broker at `peak` x today on n brokers."""
    share_today = base.skew / base.brokers
    # its share of the traffic: today's skew spread over n, but never thinner than its partitions
    spread = max(base.brokers / n, _lead_ratio(base, n))
    bytes_ = base.bytes_per_s * peak * share_today * spread
    requests_today = base.requests_per_s * share_today
    if base.partitions_per_request > MULTI_PARTITION:
        ppr = base.partitions_per_request
        requests = peak * requests_today * spread * ppr / max(1.0, ppr * _lead_ratio(base, n))
    else:
        requests = peak * requests_today * spread
    return requests, bytes_


class Calibration(Frozen):
    """Factors on the cost model's per-request and per-byte cost of each pool (1: as fitted)."""

    network_factor: float = Field(1.0, gt=0)
    handler_factor: float = Field(1.0, gt=0)
    # busy share added where no factor reaches the measurement (an idle cluster has no traffic to scale)
    network_offset: float = 0.0
    handler_offset: float = 0.0
    from_label: str = ""  # a baseline nobody measured takes the factors of this measured one

    def predict_idle(
        self, model: BrokerCostModel, requests_per_s: float, bytes_per_s: float
    ) -> tuple[float, float]:
        fn, fh = self.network_factor, self.handler_factor
        net = model.predict_idle(requests_per_s * fn, bytes_per_s * fn)[0] - self.network_offset
        hnd = model.predict_idle(requests_per_s * fh, bytes_per_s * fh)[1] - self.handler_offset
        return clip_ratio(net), clip_ratio(hnd)


class PoolCheck(Frozen):
    """One thread pool's busiest broker today: the model against the measurement."""

    pool: Pool
    broker: str  # the broker that measured the lowest idle of this pool
    measured_idle: float
    model_idle: float  # the fitted model, the busiest broker's traffic today
    forecast_idle: float  # what the forecast uses (after calibration)
    r2: float | None  # the linear fit's (None: the queueing model sets this pool's idle)
    action: Literal["reproduced", "calibrated"]
    factor: float = 1.0
    offset: float = 0.0  # busy share added to every figure, when no factor could calibrate


class BrokerCheck(Frozen):
    """One broker today: the fitted model at its own traffic beside its measurement."""

    broker: str
    requests_per_s: float
    network_idle_model: float
    network_idle_measured: float | None
    handler_idle_model: float
    handler_idle_measured: float | None
    request_queue_model: float | None  # with a queueing model
    request_queue_measured: float | None


class TodayCheck(Frozen):
    label: str
    tolerance: float
    brokers: list[BrokerCheck]
    pools: list[PoolCheck]
    notes: list[str] = Field(default_factory=list)


def _fit(model: BrokerCostModel, pool: Pool) -> LinearFit | None:
    """The linear fit that sets this pool's idle (None when the queueing model does)."""
    if model.queue is not None:
        return None
    return model.network if pool == "network" else model.handler


def _solve(idle: Callable[[float], float], measured: float) -> float | None:
    """The smallest factor f whose idle(f) <= measured (idle never rises with f); None when none
    in range reaches it, or the smallest already goes below it (the fixed part is too busy)."""
    lo, hi = (math.log(v) for v in _FACTOR_RANGE)
    if idle(math.exp(hi)) > measured or idle(math.exp(lo)) < measured:
        return None
    for _ in range(60):  # 2^-60 of the log range: far below any figure shown
        mid = (lo + hi) / 2
        if idle(math.exp(mid)) <= measured:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def _pool_check(model: BrokerCostModel, base: Baseline, pool: Pool) -> PoolCheck | None:
    index = 0 if pool == "network" else 1
    measured = [(b.broker, v) for b in base.today if (v := getattr(b, f"{pool}_idle")) is not None]
    if not measured:
        return None
    broker, meas = min(measured, key=lambda m: m[1])
    requests, bytes_ = busiest_traffic(base, 1.0, base.brokers)

    def idle(f: float) -> float:
        return model.predict_idle(requests * f, bytes_ * f)[index]

    fit = _fit(model, pool)
    r2 = fit.r2 if fit is not None else None
    predicted = idle(1.0)
    diff = predicted - meas
    common = {"pool": pool, "broker": broker, "measured_idle": meas, "model_idle": predicted, "r2": r2}
    if -TOLERANCE <= diff <= 0:
        return PoolCheck(**common, forecast_idle=predicted, action="reproduced")
    where = (
        f"{base.label}: the cost model gives the busiest broker {pool} idle {predicted:.3f} for today's "
        f"traffic where broker {broker} measured {meas:.3f} ({diff:+.2f}, past {TOLERANCE:g})"
    )
    if abs(diff) > TOLERANCE and r2 is not None and r2 < MIN_R2:
        raise ForecastRefused(
            f"forecast refused: {where} and its {pool} fit is too poor to calibrate (R^2 {r2:.2f} < "
            f"{MIN_R2:g}): give --cost-model fitted on records of this cluster or one set up like it"
        )
    factor = _solve(idle, meas)
    if factor is not None:
        return PoolCheck(**common, forecast_idle=idle(factor), action="calibrated", factor=factor)
    # No factor on the traffic's cost reaches it (no produce traffic to scale, or the fixed share alone
    # is busier than measured): the difference is taken as fixed busy time instead.
    return PoolCheck(**common, forecast_idle=meas, action="calibrated", offset=diff)


def _broker_checks(model: BrokerCostModel, base: Baseline) -> list[BrokerCheck]:
    out = []
    for b in base.today:
        net, hnd = model.predict_idle(b.requests_per_s, b.bytes_per_s)
        queue = model.queue.predict(b.requests_per_s).request_queue if model.queue is not None else None
        out.append(
            BrokerCheck(
                broker=b.broker,
                requests_per_s=b.requests_per_s,
                network_idle_model=net,
                network_idle_measured=b.network_idle,
                handler_idle_model=hnd,
                handler_idle_measured=b.handler_idle,
                request_queue_model=queue,
                request_queue_measured=b.request_queue,
            )
        )
    return out


def _queue_notes(checks: list[BrokerCheck]) -> list[str]:
    queued = [c for c in checks if (c.request_queue_measured or 0.0) >= THRESHOLDS.request_queue_queueing]
    if not queued:
        return []
    worst = max(queued, key=lambda c: c.request_queue_measured or 0.0)
    waiting = worst.request_queue_measured or 0.0
    measured = f"broker {worst.broker} held {waiting:.1f} produce requests waiting for a handler"
    if worst.request_queue_model is None:
        return [
            f"{measured} today: its request path queues, which the linear cost model does not model; "
            "past the knee idle falls faster than forecast (fit a queueing model: a capacity curve's records)"
        ]
    return [f"{measured} today; the queueing model gives {worst.request_queue_model:.1f} for its traffic"]


def check_baseline(model: BrokerCostModel, base: Baseline) -> tuple[TodayCheck, Calibration]:
    pools = [p for p in (_pool_check(model, base, "network"), _pool_check(model, base, "handler")) if p]
    checks = _broker_checks(model, base)
    notes = _queue_notes(checks)
    for pool in ("network", "handler"):
        if not any(p.pool == pool for p in pools):
            notes.append(f"no broker measured {pool} idle: the model's {pool} figures stand unchecked")
    factors = {f"{p.pool}_factor": p.factor for p in pools} | {f"{p.pool}_offset": p.offset for p in pools}
    check = TodayCheck(label=base.label, tolerance=TOLERANCE, brokers=checks, pools=pools, notes=notes)
    return check, Calibration(**factors)


def check_today(
    model: BrokerCostModel, baselines: Sequence[Baseline], require_measured: bool = False
) -> tuple[list[TodayCheck], list[Calibration]]:
    """Each measured baseline checked (and calibrated); a baseline nobody measured takes the
    factors of the measured current one (the same cluster), or stands as fitted."""
    checks: list[TodayCheck] = []
    cals: dict[int, Calibration] = {}
    for i, base in enumerate(baselines):
        if base.measured:
            check, cals[i] = check_baseline(model, base)
            checks.append(check)
    if not checks and require_measured:
        raise ForecastRefused(
            "forecast refused: the baseline measured no network or handler idle on any broker, so the "
            "cost model cannot be checked against today"
        )
    current = [i for i, b in enumerate(baselines) if i in cals and b.role == "current"]
    donor = next(iter(current or cals), None)
    lent = Calibration()
    if donor is not None:
        lent = cals[donor].model_copy(update={"from_label": baselines[donor].label})
    return checks, [cals.get(i, lent) for i in range(len(baselines))]


def fit_warnings(model: BrokerCostModel) -> list[str]:
    out = []
    for pool in ("network", "handler"):
        fit = _fit(model, pool)
        if fit is not None and fit.r2 < MIN_R2:
            out.append(
                f"the cost model's {pool} fit is poor: R^2 {fit.r2:.2f} < {MIN_R2:g} over {fit.n} broker "
                "windows; its cost per request, which the peak extrapolates, is mostly noise"
            )
    if model.traffic_levels == 1:
        out.append(
            f"the cost model's {model.n} broker windows are all at one traffic level: it cannot tell a"
            " request's cost from a byte's (its R^2 says nothing), so settings that change the requests"
            " per byte are a guess; fit it on runs at several rates"
        )
    return out
