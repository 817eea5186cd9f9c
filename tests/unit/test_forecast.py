"""Capacity forecast: idle at the peak, brokers needed, baselines from runs and from diagnose."""

from __future__ import annotations

import math

import pytest

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.core.errors import BadInput
from tuner.model.cost import BrokerCostModel, LinearFit
from tuner.model.diagnosis import diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.forecast import brokers_needed, forecast
from tuner.model.forecast_baseline import diagnosis_baselines, pick_runs, records_baselines
from tuner.model.forecast_today import Baseline
from tuner.store.figures import BrokerStats
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot


def _model(a: float = 1e-3, b: float = 0.0, c: float = 0.0, ha: float = 1e-4) -> BrokerCostModel:
    def fit(req: float) -> LinearFit:
        return LinearFit(requests_coef=req, bytes_coef=b, intercept=c, r2=0.95, n=9, rmse=0.01)

    return BrokerCostModel(network=fit(a), handler=fit(ha))


def _base(reqs: float, brokers: int = 3, skew: float = 1.0, role: str = "current") -> Baseline:
    return Baseline(label=role, role=role, brokers=brokers, requests_per_s=reqs, bytes_per_s=1e6, skew=skew)  # type: ignore[arg-type]


def test_idle_at_peak_and_brokers_needed() -> None:
    model = _model(a=1e-3)  # network busy = 0.001 per req/s per broker
    base = _base(600.0)  # 200 req/s per broker: busy 0.2 today
    f = forecast(model, [base], peak=3.0)
    row = f.rows[0]
    assert row.today_network_idle == pytest.approx(0.8)
    assert row.requests_per_s == pytest.approx(1800)
    assert row.network_idle == pytest.approx(1 - 0.6)  # 600 req/s per broker
    # idle >= 0.3 needs <= 700 req/s per broker: ceil(1800 / 700) = 3 brokers.
    assert row.brokers_needed == 3 and row.limited_by == "network"
    assert forecast(model, [base], peak=5.0).rows[0].brokers_needed == math.ceil(3000 / 700)


def test_skew_needs_more_brokers() -> None:
    model = _model(a=1e-3)
    even = brokers_needed(model, _base(3000.0), 1.0, 0.3)[0]
    skewed = brokers_needed(model, _base(3000.0, skew=1.5), 1.0, 0.3)[0]
    assert (even, skewed) == (5, 7)  # 3000/700 -> 5; 4500/700 -> 7


def test_handler_can_be_the_limit() -> None:
    model = _model(a=1e-5, ha=2e-3)
    needed, limited = brokers_needed(model, _base(3000.0), 1.0, 0.3)
    assert (needed, limited) == (9, "handler")  # 350 req/s per broker for the handlers


def test_intercept_too_high_is_unreachable() -> None:
    model = _model(c=0.75)
    needed, limited = brokers_needed(model, _base(100.0), 1.0, 0.3)
    assert needed is None and limited == "network"


def test_tiny_load_needs_one_broker() -> None:
    assert brokers_needed(_model(), _base(10.0), 3.0, 0.3) == (1, "none")


def _stats(reqs: float, broker: str = "1") -> BrokerStats:
    return BrokerStats(
        broker=broker,
        produce_requests_per_s=reqs,
        bytes_in_per_s=5e5,
        network_idle_ratio=0.9,
        request_handler_idle_ratio=0.9,
    )


def test_pick_runs_defaults_and_names() -> None:
    plans = {p.name: p for p in qunar_plans()}
    fb = record_with_brokers([_stats(300, "1"), _stats(330, "2")], 1_700_000_000.0, plans["filebeat-like"])
    snappy = record_with_brokers([_stats(70, "1"), _stats(75, "2")], 1_700_000_100.0, plans["batched-snappy"])
    zstd = record_with_brokers(
        [_stats(15, "1"), _stats(16, "2")], 1_700_000_200.0, plans["batched-zstd"], p99_ms=5000.0
    )
    # zstd misses the SLO (p99 2000 ms): the recommended default is snappy.
    cur, rec = pick_runs([fb, snappy, zstd])
    assert (cur.name, rec.name) == ("filebeat-like", "batched-snappy")
    cur, rec = pick_runs([fb, snappy, zstd], recommended="batched-zstd")
    assert rec.name == "batched-zstd"
    with pytest.raises(BadInput, match='did you mean "batched-zstd"'):
        pick_runs([fb, snappy, zstd], recommended="batched-zstdd")
    with pytest.raises(BadInput, match="no runs of sweep"):
        pick_runs([fb], sweep="nope")
    bases = records_baselines([fb, snappy, zstd])
    assert bases[0].requests_per_s == pytest.approx(630) and bases[0].brokers == 2
    assert bases[0].skew == pytest.approx(330 / 315)
    assert bases[1].label == "recommended: batched-snappy"


def test_diagnosis_baselines_cut_requests() -> None:
    brokers = [
        BrokerSnapshot(
            broker=str(i),
            network_threads=3,
            produce_requests_per_s=320.0,
            bytes_in_per_s=320 * 650.0,
            network_idle_ratio=0.9,
            request_handler_idle_ratio=0.9,
        )
        for i in (1, 2, 3)
    ]
    snap = ClusterSnapshot(prometheus="http://p", end=1, window_s=300, step_s=15, brokers=brokers)
    d = diagnose(snap, DiagnoseThresholds())
    cur, rec = diagnosis_baselines(d)
    assert cur.requests_per_s == pytest.approx(960) and cur.brokers == 3
    assert rec.requests_per_s == pytest.approx(960 * 650 / 16384)
    assert rec.bytes_per_s == cur.bytes_per_s
    assert rec.label == "recommended: batched to ~16 KB requests"
