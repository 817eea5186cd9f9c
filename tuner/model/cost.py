"""The broker cost model: how busy a broker's threads are per produce request and per byte.

Fitted from run records. Each broker in each record's measured window is one observation: its
produce requests/s `r`, bytes in/s `B` and the busy fraction (1 - idle) of its network threads
(NetworkProcessorAvgIdlePercent) and of its request handler threads. For each thread pool

    busy = a * r + b * B (+ c)

by least squares with a, b, c >= 0 (a request cannot free a thread). The intercept c (the idle
cluster's own work: replication fetches, metadata, the controller) is kept only when it earns its
parameter: the adjusted R^2 with it must beat the fit through the origin. Brokers of one cluster are
alike, so observations of every broker are pooled into one model of "a broker".

    model = fit_cost_model(store.records("qunar-logs"))
    net_idle, handler_idle = model.predict_idle(requests_per_s=300, bytes_per_s=500e3)
    model.model_dump(mode="json")             # JSON form; BrokerCostModel.model_validate(...) reads it

R^2 is always 1 - SS_res / SS_tot about the mean, with or without an intercept, so fits compare.
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
from tuner.model.queueing import (
    MAX_FITTED_RUNS,
    Label,
    QueueModel,
    clip_ratio,
    curve_points,
    fit_queue_model,
    saturated_curve,
)
from tuner.spec.limits import MAX_COUNT, MAX_ITEMS, MAX_RATIO, MAX_THREADS
from tuner.store.record import RunRecord

# A fit's bounds: busy fractions are at most 1 and the CPU fit counts cores, so no term passes a
# broker's every thread; a coefficient is held to that at one request (or byte) a second, which a
# fit from runs of a few requests a second still stays under.
MAX_CORES = float(MAX_THREADS)
MIN_OBSERVATIONS = 3  # two slopes need at least three points to say anything about their fit
# The lowest R^2 a fit records: past it (a fit through the origin of nearly constant busy
# fractions) every fit is equally useless, and a saved model stays within its bound.
MIN_R2 = -MAX_RATIO


class LinearFit(Frozen):
    """busy = requests_coef * requests/s + bytes_coef * bytes/s + intercept, all >= 0."""

    # busy fraction per produce request/s (seconds of thread time per request)
    requests_coef: float = Field(ge=0, le=MAX_CORES)
    bytes_coef: float = Field(ge=0, le=MAX_CORES)  # busy fraction per byte/s
    intercept: float = Field(0.0, ge=0, le=MAX_CORES)
    # 1 - SS_res/SS_tot (about the mean); a fit through the origin can be far below 0 (held at MIN_R2)
    r2: float = Field(ge=MIN_R2, le=1)
    n: int = Field(ge=0, le=MAX_COUNT)  # observations (broker windows)
    rmse: float = Field(ge=0, le=MAX_CORES)  # root mean square residual, busy fraction (cores for cpu)

    def predict(self, requests_per_s: float, bytes_per_s: float) -> float:
        return self.requests_coef * requests_per_s + self.bytes_coef * bytes_per_s + self.intercept

    @property
    def break_even_request_bytes(self) -> float | None:
        """The request size at which a request's fixed cost equals the cost of its bytes; requests
        smaller than this cost the threads more for being a request than for what they carry."""
        if self.bytes_coef <= 0:
            return None if self.requests_coef <= 0 else math.inf
        return self.requests_coef / self.bytes_coef


class BrokerCostModel(Frozen):
    """Busy fractions of one broker's thread pools as a function of its produce traffic."""

    network: LinearFit  # network threads (1 - NetworkProcessorAvgIdlePercent)
    handler: LinearFit  # request handler threads (1 - handler idle)
    cpu: LinearFit | None = None  # broker JVM CPU cores (not a fraction), when every window has it
    # The request path as a finite queue (tuner.model.queueing), when the records hold a capacity
    # curve: one broker run past its knee. It then sets both idle ratios: the knee is in it.
    queue: QueueModel | None = None
    # run ids of the records it was fitted from
    runs: list[Label] = Field(default_factory=list, max_length=MAX_FITTED_RUNS)
    brokers: list[Label] = Field(default_factory=list, max_length=MAX_ITEMS)  # broker ids
    # distinct (requests/s, bytes/s) among the windows fitted; one level cannot tell a request's cost
    # from a byte's (None: a model saved before they were counted)
    traffic_levels: int | None = Field(default=None, ge=0, le=MAX_COUNT)

    def predict_idle(self, requests_per_s: float, bytes_per_s: float) -> tuple[float, float]:
        """(network idle, handler idle) of a broker taking this produce traffic, each in [0, 1]."""
        if self.queue is not None:
            point = self.queue.predict(requests_per_s)
            return point.network_idle, point.handler_idle
        return (
            clip_ratio(1.0 - self.network.predict(requests_per_s, bytes_per_s)),
            clip_ratio(1.0 - self.handler.predict(requests_per_s, bytes_per_s)),
        )

    @property
    def n(self) -> int:
        return self.network.n


# ---- observations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """One broker over one run's measured window."""

    run_id: str
    broker: str
    requests_per_s: float
    bytes_per_s: float
    network_busy: float
    handler_busy: float
    cpu_cores: float | None


def observations(records: Sequence[RunRecord]) -> list[Observation]:
    """Every broker window that has requests, bytes and both idle ratios."""
    out: list[Observation] = []
    for record in records:
        # An unclean run's broker window does not match what its client says it sent.
        if record.broker is None or record.status == "unclean":
            continue
        for b in record.broker.brokers:
            r, by = finite(b.produce_requests_per_s), finite(b.bytes_in_per_s)
            net, hnd = finite(b.network_idle_ratio), finite(b.request_handler_idle_ratio)
            if r is None or by is None or net is None or hnd is None:
                continue
            out.append(
                Observation(
                    run_id=record.run_id,
                    broker=b.broker,
                    requests_per_s=r,
                    bytes_per_s=by,
                    network_busy=1.0 - min(1.0, net),
                    handler_busy=1.0 - min(1.0, hnd),
                    cpu_cores=finite(b.cpu_cores),
                )
            )
    return out


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


# ---- fitting ------------------------------------------------------------------------------------


def nnls(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0 (scipy's Lawson-Hanson NNLS). The columns are
    scaled to a common size first: requests/s and bytes/s are some 1e3 apart."""
    scale = np.where(np.abs(x).max(axis=0) > 0, np.abs(x).max(axis=0), 1.0)
    coef, _ = scipy.optimize.nnls(x / scale, y)
    return np.asarray(coef) / scale


def _r2(y: np.ndarray, fitted: np.ndarray) -> float:
    # The coefficient of determination as scikit-learn's r2_score computes it, without that
    # dependency for one line; a constant y is explained exactly (1) or not at all (0).
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    ss_res = float(np.sum((y - fitted) ** 2))
    if ss_tot <= 0:
        return 1.0 if ss_res <= 1e-18 else 0.0
    return max(MIN_R2, 1.0 - ss_res / ss_tot)


def _adjusted(r2: float, n: int, params: int) -> float:
    return r2 if n - params <= 0 else 1.0 - (1.0 - r2) * (n - 1) / (n - params)


def fit_linear(requests: Sequence[float], bytes_: Sequence[float], busy: Sequence[float]) -> LinearFit:
    """busy ~ a*requests + b*bytes (+ c when the adjusted R^2 says the intercept is worth it)."""
    n = len(busy)
    if n < MIN_OBSERVATIONS:
        raise BadInput(f"the cost model needs at least {MIN_OBSERVATIONS} broker windows, got {n}")
    r, b, y = (np.asarray(v, dtype=float) for v in (requests, bytes_, busy))
    candidates: list[tuple[float, np.ndarray]] = []
    for with_intercept in (False, True):
        columns = [r, b, np.ones(n)] if with_intercept else [r, b]
        x = np.column_stack(columns)
        coef = nnls(x, y)
        params = int(np.count_nonzero(coef)) or 1
        r2 = _r2(y, x @ coef)
        full = np.zeros(3)
        full[: len(coef)] = coef
        candidates.append((_adjusted(r2, n, params), full))
    # A fit that charges a request or a byte more than a broker's every thread is not a cost: traffic
    # too small to explain the busy time (an idle broker's own upkeep) puts it all on the intercept.
    physical = [c for c in candidates if float(c[1].max()) <= MAX_CORES]
    if not physical:
        physical = [(0.0, np.array([0.0, 0.0, float(y.mean())]))]
    # Ties (the intercept came out 0) go to the simpler fit.
    _, coef = max(physical, key=lambda c: (round(c[0], 12), -int(np.count_nonzero(c[1]))))
    fitted = coef[0] * r + coef[1] * b + coef[2]
    return LinearFit(
        requests_coef=float(coef[0]),
        bytes_coef=float(coef[1]),
        intercept=float(coef[2]),
        r2=_r2(y, fitted),
        n=n,
        rmse=float(np.sqrt(np.mean((y - fitted) ** 2))),
    )


def fit_cost_model(records: Sequence[RunRecord]) -> BrokerCostModel:
    """Fit network-thread and handler busy fractions (and CPU cores) from run records."""
    obs = observations(records)
    if len(obs) < MIN_OBSERVATIONS:
        raise BadInput(
            f"the cost model needs at least {MIN_OBSERVATIONS} broker windows with requests, bytes and idle "
            f"ratios; {len(records)} run record(s) gave {len(obs)}"
        )
    requests = [o.requests_per_s for o in obs]
    bytes_ = [o.bytes_per_s for o in obs]
    with_cpu = all(o.cpu_cores is not None for o in obs)
    cpu = fit_linear(requests, bytes_, [o.cpu_cores or 0.0 for o in obs]) if with_cpu else None
    points = curve_points(records)
    return BrokerCostModel(
        network=fit_linear(requests, bytes_, [o.network_busy for o in obs]),
        handler=fit_linear(requests, bytes_, [o.handler_busy for o in obs]),
        cpu=cpu,
        queue=fit_queue_model(points) if saturated_curve(points) else None,
        runs=sorted({o.run_id for o in obs}),
        brokers=sorted({o.broker for o in obs}, key=lambda s: (len(s), s)),
        traffic_levels=len({(o.requests_per_s, o.bytes_per_s) for o in obs}),
    )
