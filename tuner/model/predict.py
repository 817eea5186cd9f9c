"""Predict produce requests/s per broker, latency, memory and wire bytes for one setting.

Requests and the batching delay come from the simulator; delivery latency adds the service time
(request round trip and broker work) calibrated from run records of the same client kind, scaled
to the setting's own request rate when those records measured a busy broker; memory is
a calibrated base plus the bytes a producer holds while batching; wire bytes follow the codec's
ratio at the predicted messages per partition batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from statistics import NormalDist
from typing import Protocol

from tuner.model.codecs import DEFAULTS, CodecCurve, CodecTable, default_curve, default_table
from tuner.model.simulate import DEFAULT_RTT_S, SimResult, simulate
from tuner.model.traffic import Traffic
from tuner.model.uncertainty import regime_of, with_band
from tuner.spec.clients import ClientProfile, rules_of
from tuner.spec.clients.rules import FilebeatRules, JavaRules, Rules
from tuner.spec.error_bands import ErrorBands
from tuner.store.recommendation import Prediction

# Used until run records of the client kind calibrate them.
DEFAULT_SERVICE_P50_MS = 3.0
DEFAULT_SERVICE_P99_MS = 30.0
DEFAULT_MEMORY_BASE_MB = 20.0
# The busiest broker's busy share is held below this when service time is scaled to a load: a
# saturated broker's measured queue is finite (clients wait, the queue has a room), busy / (1 - busy)
# is not.
BUSY_CAP = 0.95


@dataclass(frozen=True)
class ClientCalibration:
    service_p50_ms: float = DEFAULT_SERVICE_P50_MS
    service_p99_ms: float = DEFAULT_SERVICE_P99_MS
    memory_base_mb: float = DEFAULT_MEMORY_BASE_MB
    runs: int = 0  # records it was fitted from (0: defaults)
    # Real Filebeat's per-line pipeline cost on the host its records ran on (FilebeatRules'
    # harvest_spacing_s), when records of its synchronous flush path fitted one; None: the kind's own.
    harvest_spacing_s: float | None = None
    spacing_runs: int = 0  # records that fitted it
    # Service times measured on busy brokers (evidence.LOADED_BUSY), when records did: the load they
    # were measured at (the busiest broker's busy share, the records' share of its produce requests,
    # their busiest-broker requests/s as the model predicts them for the records' own settings) and
    # the times then. 0: the service times above hold at any load.
    loaded_p50_ms: float = 0.0
    loaded_p99_ms: float = 0.0
    load_busy: float = 0.0
    load_requests_per_s: float = 0.0
    load_share: float = 1.0

    def service_at(self, busiest_requests_per_s: float) -> tuple[float, float]:
        """The service p50 and p99 (ms) at a setting's produce request rate on the busiest broker.
        Past the unloaded times (calm runs' own, else at most the kind's defaults: a request's round
        trip and broker work), times measured on busy brokers are the brokers' queueing, which
        follows the M/M/1 waiting time busy / (1 - busy) with the busy share moving with the request
        rate (the small-request regime this tool is for: the number of requests, not their bytes,
        keeps the broker's network and handler threads busy). A setting at the loaded runs' rate
        gets their times back (the model reproduces today); one with fewer requests gets the relief
        fewer requests give; one with more queues longer."""
        if self.load_busy <= 0 or self.load_requests_per_s <= 0:
            return self.service_p50_ms, self.service_p99_ms
        busy = min(BUSY_CAP, self.load_busy)
        # only the records' own share of the requests follows the setting; the rest stays
        share = min(1.0, max(0.0, self.load_share))
        moved = 1 - share + share * busiest_requests_per_s / self.load_requests_per_s
        busy_at = min(BUSY_CAP, busy * moved)
        queueing = busy_at / (1 - busy_at) / (busy / (1 - busy))

        def scaled(unloaded: float, loaded: float) -> float:
            return unloaded + max(0.0, loaded - unloaded) * queueing

        p50 = scaled(self.service_p50_ms, self.loaded_p50_ms)
        return p50, scaled(self.service_p99_ms, self.loaded_p99_ms)


@dataclass(frozen=True)
class Calibration:
    clients: dict[str, ClientCalibration] = field(default_factory=dict)

    def of(self, client: str) -> ClientCalibration:
        return self.clients.get(client, ClientCalibration())


class IdleModel(Protocol):
    """The broker cost model's prediction (tuner.model.cost, fitted from run records)."""

    def predict_idle(self, requests_per_s: float, bytes_per_s: float) -> tuple[float, float]: ...


def simulated(traffic: Traffic, rules: Rules, codecs: CodecTable | None = None) -> SimResult:
    """The simulation of `rules`; Java's batches sized by its compression estimate, which follows
    the compressed fraction of each batch sent by `codecs`' curve for the rules' codec (without a
    probe: the default curve for the traffic's event size)."""
    curve = None
    if isinstance(rules, JavaRules) and rules.compression != "none":
        if codecs is None or codecs.source == DEFAULTS:
            curve = default_curve(rules.compression, traffic.message_bytes)
        else:
            curve = codecs.curve(rules.compression)
    return _simulated(traffic, rules, curve)


class SimulationStore(Protocol):
    """Simulations kept across processes, by key (the runner's, on disk: the model does no I/O)."""

    def get(self, key: str) -> SimResult | None: ...

    def put(self, key: str, result: SimResult) -> None: ...


_STORES: list[SimulationStore] = []


def keep_simulations(store: SimulationStore | None) -> None:
    """Look simulations up in `store` before running them, and put new ones there (None: stop).
    A simulation is a pure function of its key (the same inputs give the same draws), and an
    offline recommend runs the same ones each time: the calibration's fits and the search."""
    _STORES[:] = [store] if store is not None else []


@lru_cache(maxsize=4096)
def _simulated(traffic: Traffic, rules: Rules, codec: CodecCurve | None) -> SimResult:
    # every field of the three frozen dataclasses is in its repr, floats exactly
    key = repr((traffic, rules, codec, DEFAULT_RTT_S))
    for store in _STORES:
        found = store.get(key)
        if found is not None:
            return found
    result = simulate(traffic, rules, rtt_s=DEFAULT_RTT_S, codec=codec)
    for store in _STORES:
        store.put(key, result)
    return result


@lru_cache(maxsize=256)
def _expected_max(means: tuple[float, ...], sds: tuple[float, ...]) -> float:
    """E[max] of independent normals N(mean, sd^2): lo + the integral of 1 - prod CDF over [lo, hi]."""
    lo = min(m - 8 * s for m, s in zip(means, sds, strict=True))
    hi = max(m + 8 * s for m, s in zip(means, sds, strict=True))
    steps = 2000
    width = (hi - lo) / steps
    normal_cdf = NormalDist().cdf
    area = 0.0
    for i in range(steps):
        x = lo + (i + 0.5) * width
        cdf = 1.0
        for m, s in zip(means, sds, strict=True):
            cdf *= normal_cdf((x - m) / s) if s > 0 else float(x >= m)
        area += (1.0 - cdf) * width
    return lo + area


def busiest_share(led: list[int], picks: float | None) -> float:
    """The busiest broker's expected share of a window's produce requests. Without random partition
    choices (round robin, keys, or no window) each broker takes the share of partitions it leads.
    A keyless sticky partitioner sends a stretch of records to one random partition, then picks
    again: with k picks in the window broker b's share is a binomial proportion around p_b (sd
    sqrt(p_b (1 - p_b) / k)), and the busiest share is the expected maximum of those (normal
    approximation, the brokers taken as independent)."""
    total = sum(led)
    if total <= 0:
        return 0.0
    shares = tuple(n / total for n in led if n > 0)
    if not picks or picks <= 0 or len(shares) < 2:
        return max(shares)
    sds = tuple(math.sqrt(p * (1 - p) / picks) for p in shares)
    return min(1.0, max(max(shares), _expected_max(shares, sds)))


def calibrated_rules(rules: Rules, calib: ClientCalibration) -> Rules:
    """`rules` with what the calibration fitted in place of the kind's constants (real Filebeat's
    per-line pipeline cost)."""
    if isinstance(rules, FilebeatRules) and rules.harvest_spacing_s > 0 and calib.harvest_spacing_s:
        return replace(rules, harvest_spacing_s=calib.harvest_spacing_s)
    return rules


def predict(traffic: Traffic, profile: ClientProfile, calibration: Calibration | None = None) -> Prediction:
    rules = rules_of(profile)
    return predict_rules(traffic, rules, (calibration or Calibration()).of(rules.kind))


def predict_rules(
    traffic: Traffic,
    rules: Rules,
    calib: ClientCalibration | None = None,
    codecs: CodecTable | None = None,
    cost: IdleModel | None = None,
    bands: ErrorBands | None = None,
) -> Prediction:
    """The prediction; with `bands` (the held-out error table) it carries the band of its kind and
    regime (tuner/model/uncertainty.py)."""
    calib = calib or ClientCalibration()
    rules = calibrated_rules(rules, calib)
    table = codecs or default_table()
    sim = simulated(traffic, rules, table)
    # Producers pick partitions alike, so over many producers each broker's share is the share of
    # partitions it leads (a few simulated producers would give a noisy split).
    total = sum(sim.per_producer_rps()) * traffic.producers
    led = [traffic.partitions_led(b) for b in range(traffic.brokers)]
    by_broker = [total * n / max(sum(led), 1) for n in led]
    picks = None
    if traffic.window_s and sim.random_picks:
        picks = sim.random_picks / (sim.horizon_s * sim.producers) * traffic.producers * traffic.window_s
    busiest = total * busiest_share(led, picks) if by_broker else 0.0
    per_batch = sim.messages / max(sim.partition_batches, 1)
    payload = traffic.total_rate * traffic.message_bytes
    wire = payload / table.ratio(rules.compression, per_batch)
    mean_wait = sum(sim.waits_s) / max(len(sim.waits_s), 1)
    service_p50, service_p99 = calib.service_at(busiest)
    held = traffic.rate * (mean_wait + service_p50 / 1000) * traffic.message_bytes
    if isinstance(rules, FilebeatRules):
        held = max(held, min(rules.queue_batch, rules.queue_events) * traffic.message_bytes / 2)
    network_idle = handler_idle = None
    if cost is not None and traffic.brokers > 0:
        network_idle, handler_idle = cost.predict_idle(busiest, wire / traffic.brokers)
    prediction = Prediction(
        requests_per_s=total,
        busiest_broker_requests_per_s=busiest,
        requests_per_s_by_broker={str(b + 1): v for b, v in enumerate(by_broker)},
        records_per_request=traffic.total_rate / total if total > 0 else 0.0,
        p50_ms=sim.wait_quantile(0.5) * 1000 + service_p50,
        p99_ms=sim.wait_quantile(0.99) * 1000 + service_p99,
        producer_memory_mb=calib.memory_base_mb + held / 1e6,
        wire_bytes_per_s=wire,
        codec_cpu_ms_per_s=payload / 1e6 * table.cpu_ms_per_mb(rules.compression),
        network_idle_ratio=network_idle,
        handler_idle_ratio=handler_idle,
    )
    # The regime by the records' own bytes, in the batch a record travels in (Java: its full batches,
    # not the one-record ones a partition switch leaves beside them).
    travels_in = sim.batch_records_sq / sim.messages if sim.batch_records_sq and sim.messages else per_batch
    return with_band(prediction, rules.kind, regime_of(rules, travels_in, traffic.message_bytes), bands)
