"""The model over valid run records of unusual shape (one run, identical runs, one broker or fifty,
traffic from 1e-12 to 1e7 requests/s, idle ratios at 0 or 1, runs failing their SLO): the cost model
and the forecast built on it answer with finite figures inside their bounds, or refuse in one
KbtError, never an exception of another kind."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.core.errors import KbtError
from tuner.model.cost import MAX_CORES, BrokerCostModel, LinearFit, fit_cost_model
from tuner.model.forecast import forecast
from tuner.model.forecast_baseline import records_baselines
from tuner.model.forecast_today import fit_warnings
from tuner.store import RunRecord
from tuner.store.figures import BrokerStats

RATES = st.sampled_from([0.0, 1e-12, 1e-6, 0.5, 40.0, 1000.0, 1e5, 1e7])
IDLES = st.sampled_from([0.0, 1e-9, 0.3, 0.8, 0.999999, 1.0])


@st.composite
def run(draw: st.DrawFn, index: int) -> RunRecord:
    n = draw(st.sampled_from([1, 3, 50]))
    rps, msgs = draw(RATES), draw(RATES)
    idle, handler = draw(IDLES), draw(IDLES)
    brokers = [
        BrokerStats(
            broker=str(i),
            produce_requests_per_s=rps / n,
            messages_in_per_s=msgs / n,
            bytes_in_per_s=min(1e12, msgs * draw(st.sampled_from([1.0, 1620.0, 1048576.0]))) / n,
            network_idle_ratio=idle,
            request_handler_idle_ratio=handler,
            cpu_cores=draw(st.sampled_from([0.0, 0.5, 8.0])),
        )
        for i in range(n)
    ]
    plans = qunar_plans()
    plan = plans[draw(st.integers(0, len(plans) - 1))]
    p99 = draw(st.sampled_from([0.0, 5.0, 50.0, 1e6]))
    return record_with_brokers(brokers, 1.78e9 + index, plan=plan, p99_ms=p99)


@st.composite
def runs(draw: st.DrawFn) -> list[RunRecord]:
    first = draw(run(0))
    if draw(st.booleans()):  # identical runs: zero variance
        return [first.model_copy(update={"created_at": first.created_at + i}) for i in range(3)]
    return [first] + [draw(run(i)) for i in range(1, draw(st.integers(1, 4)))]


def _sane_fit(fit: LinearFit) -> None:
    for value in (fit.requests_coef, fit.bytes_coef, fit.intercept, fit.r2, fit.rmse):
        assert math.isfinite(value)
    assert 0 <= fit.requests_coef <= MAX_CORES and 0 <= fit.bytes_coef <= MAX_CORES


@settings(max_examples=60)
@given(runs())
def test_the_cost_model_and_the_forecast_answer_or_refuse_in_one_line(records: list[RunRecord]) -> None:
    try:
        model = fit_cost_model(records)
    except KbtError as refused:
        assert str(refused) and "\n" not in str(refused)
        return
    assert isinstance(model, BrokerCostModel)
    for fit in (model.network, model.handler, model.cpu):
        if fit is not None:
            _sane_fit(fit)
    for requests, bytes_ in ((0.0, 0.0), (1e-12, 1e-12), (1e7, 1e12)):
        net, hnd = model.predict_idle(requests, bytes_)
        assert 0.0 <= net <= 1.0 and 0.0 <= hnd <= 1.0
    try:
        result = forecast(model, records_baselines(records), 3.0, require_measured=True)
    except KbtError as refused:
        assert str(refused) and "\n" not in str(refused)
        return
    for row in result.rows:
        figures = (row.requests_per_s, row.bytes_per_s, row.busiest_broker_requests_per_s)
        assert all(math.isfinite(v) and v >= 0 for v in figures)
        assert 0.0 <= row.network_idle <= 1.0 and 0.0 <= row.handler_idle <= 1.0
        assert row.brokers_needed is None or row.brokers_needed >= 1


def _even(requests_per_s: float, bytes_per_s: float, idle: float) -> list[BrokerStats]:
    """Three brokers taking the same traffic at the same idle ratios."""
    return [
        BrokerStats(
            broker=str(i),
            produce_requests_per_s=requests_per_s,
            messages_in_per_s=requests_per_s,
            bytes_in_per_s=bytes_per_s,
            network_idle_ratio=idle,
            request_handler_idle_ratio=idle,
        )
        for i in range(3)
    ]


def test_traffic_too_small_to_explain_the_busy_time_puts_it_on_the_intercept() -> None:
    # 1e-12 requests/s at 1% busy: a coefficient through the origin would charge a request 1e10
    # seconds of thread time (past any broker); the broker's own upkeep is the intercept instead.
    plans = qunar_plans()
    brokers = _even(requests_per_s=1e-12, bytes_per_s=1e-12, idle=0.99)
    records = [record_with_brokers(brokers, 1.78e9 + i, plan=p) for i, p in enumerate(plans)]
    model = fit_cost_model(records)
    assert model.network.requests_coef == 0 and model.network.bytes_coef == 0
    assert math.isclose(model.network.intercept, 0.01)
    assert math.isclose(model.predict_idle(1e-12, 1e-12)[0], 0.99)


def test_windows_at_one_traffic_level_are_said_to_tell_no_request_from_a_byte() -> None:
    plan = qunar_plans()[0]
    brokers = _even(requests_per_s=300.0, bytes_per_s=6000.0 * 1620, idle=0.8)
    same = [record_with_brokers(brokers, 1.78e9 + i, plan=plan) for i in range(3)]
    model = fit_cost_model(same)
    assert model.traffic_levels == 1 and model.network.r2 == 1.0
    [said] = [w for w in fit_warnings(model) if "one traffic level" in w]
    assert "9 broker windows" in said and "several rates" in said
    varied = [b.model_copy(update={"produce_requests_per_s": 100.0 * (i + 1)}) for i, b in enumerate(brokers)]
    model = fit_cost_model([record_with_brokers(varied, 1.78e9, plan=plan)])
    assert model.traffic_levels == 3 and not [w for w in fit_warnings(model) if "one traffic level" in w]
