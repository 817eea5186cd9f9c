"""The finite-queue model of a broker's request path: its knee, and its fit on a capacity curve."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.core.errors import BadInput
from tuner.model.queueing import CurvePoint, QueueModel, curve_points, fit_queue_model, occupancy
from tuner.spec.sweep import RunPlan
from tuner.store import RunRecord
from tuner.store.figures import BrokerStats

# The pressure lab's shape: a handler that takes the same time every request (scv 0).
LAB = QueueModel(
    service_rate_per_s=400.0,
    queue_cap=16,
    service_scv=0.0,
    network_base_busy=0.02,
    network_s_per_request=2e-4,
)


def _point(model: QueueModel, offered: float, noise: float = 0.0) -> CurvePoint:
    p = model.predict(offered)
    return CurvePoint(
        run_id=f"curve/{offered:.0f}",
        profile="filebeat-like",
        offered_requests_per_s=offered,
        served_requests_per_s=p.served_requests_per_s,
        network_idle=min(1.0, p.network_idle + noise),
        handler_idle=min(1.0, p.handler_idle - noise / 2),
        request_queue=p.request_queue,
        request_queue_max=float(model.queue_cap),
    )


def test_the_knee() -> None:
    below, near, past = (LAB.predict(k * LAB.knee_requests_per_s) for k in (0.5, 0.95, 1.5))
    # Below the knee the network threads only do their own work; the queue is nearly empty.
    assert below.blocked < 1e-6 and below.request_queue < 0.5
    assert below.network_idle == pytest.approx(1 - 0.02 - 2e-4 * 200, abs=1e-6)
    assert below.handler_idle == pytest.approx(0.5)
    # Close below it a constant service time still leaves the queue room most of the time.
    assert 0.0 < near.blocked < 0.5 and 1.0 < near.request_queue < 16
    # Past it the queue never drains: at its cap, handlers never idle, the network thread blocked.
    assert past.request_queue == 16 and past.handler_idle == 0 and past.blocked == 1.0
    assert past.network_idle == 0 and past.served_requests_per_s == 400
    capped = LAB.model_copy(update={"blocked_cap": 0.3}).predict(3 * LAB.knee_requests_per_s)
    assert capped.blocked == pytest.approx(0.3)  # Kafka mutes a connection while its request is in the broker
    assert capped.network_idle == pytest.approx(1 - 0.02 - 2e-4 * 400 - 0.3)
    # The more the service time varies, the earlier the queue fills.
    exp = LAB.model_copy(update={"service_scv": 1.0}).predict(0.95 * LAB.knee_requests_per_s)
    assert exp.blocked > near.blocked and exp.request_queue > near.request_queue
    assert LAB.headroom(200) == 2.0 and LAB.headroom(0) is None and LAB.headroom(1e-320) is None


def test_occupancy_matches_the_textbook() -> None:
    # M/M/1 (scv 1): P(N = n) = (1 - rho) rho^n, P(N >= L) = rho^L.
    p = occupancy(0.7, 20, 1.0)
    assert p[:20] == pytest.approx([0.3 * 0.7**n for n in range(20)], rel=1e-9)
    assert p[-1] == pytest.approx(0.7**20, rel=1e-6)
    # M/D/1 (scv 0): P(N = 0) = 1 - rho, P(N = 1) = (1 - rho)(e^rho - 1).
    d = occupancy(0.8, 30, 0.0)
    assert d[0] == pytest.approx(0.2) and d[1] == pytest.approx(0.2 * (math.exp(0.8) - 1))
    # Pollaczek-Khinchine: E[N] = rho + rho^2 (1 + scv) / (2 (1 - rho)), for any scv.
    for scv in (0.0, 0.5, 1.0, 3.0):
        g = occupancy(0.6, 400, scv)
        assert g[-1] < 1e-12
        assert float(np.dot(np.arange(401), g)) == pytest.approx(0.6 + 0.36 * (1 + scv) / 0.8, rel=1e-6)


SCV = st.floats(0.0, 4.0)


@settings(max_examples=150, deadline=None)
@given(rho=st.floats(0.0, 50.0), levels=st.integers(1, 600), scv=SCV)
def test_occupancy_is_a_distribution(rho: float, levels: int, scv: float) -> None:
    p = occupancy(rho, levels, scv)
    assert len(p) == levels + 1 and abs(p.sum() - 1) < 1e-9 and (p >= 0).all()
    if rho >= 1:
        assert p[-1] == 1.0  # past the knee the queue grows without bound
    else:
        assert p[0] == pytest.approx(1 - rho, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(rho=st.floats(0.0, 0.999), levels=st.integers(1, 200), scv=SCV)
def test_a_larger_room_fills_less_often(rho: float, levels: int, scv: float) -> None:
    small, large = occupancy(rho, levels, scv), occupancy(rho, levels + 5, scv)
    assert large[-1] <= small[-1] + 1e-9


MODELS = st.builds(
    lambda cap, threads, scv, bcap: LAB.model_copy(
        update={"queue_cap": cap, "network_threads": threads, "service_scv": scv, "blocked_cap": bcap}
    ),
    st.integers(1, 500),
    st.integers(1, 16),
    SCV,
    st.floats(0.01, 1.0),
)


@settings(max_examples=100, deadline=None)
@given(offered=st.floats(0.0, 1e6), m=MODELS)
def test_predictions_stay_in_range(offered: float, m: QueueModel) -> None:
    p = m.predict(offered)
    assert 0 <= p.network_idle <= 1 and 0 <= p.handler_idle <= 1 and 0 <= p.blocked <= m.blocked_cap + 1e-12
    assert 0 <= p.request_queue <= m.queue_cap
    assert p.served_requests_per_s <= min(offered, m.service_rate_per_s)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(0.0, 1200.0), b=st.floats(0.0, 1200.0), m=MODELS)
def test_more_requests_never_help(a: float, b: float, m: QueueModel) -> None:
    lo, hi = m.predict(min(a, b)), m.predict(max(a, b))
    assert hi.network_idle <= lo.network_idle + 1e-9 and hi.handler_idle <= lo.handler_idle + 1e-9
    assert hi.request_queue >= lo.request_queue - 1e-9 and hi.blocked >= lo.blocked - 1e-9


CURVE = (60, 120, 200, 300, 340, 360, 380, 450, 600)


@pytest.mark.parametrize("scv", [0.0, 1.0])
def test_fit_recovers_the_model_from_its_curve(scv: float) -> None:
    truth = LAB.model_copy(update={"service_scv": scv})
    curve = [_point(truth, o, noise=0.01 * (-1) ** i) for i, o in enumerate(CURVE)]
    fitted = fit_queue_model(curve)
    assert fitted.queue_cap == 16
    assert fitted.knee_requests_per_s == pytest.approx(400, rel=0.05)
    assert fitted.service_scv == pytest.approx(scv, abs=0.5)
    assert fitted.rmse_idle is not None and fitted.rmse_idle < 0.02
    for k in (0.5, 0.9, 1.5):
        o = k * 400
        assert abs(fitted.predict(o).network_idle - truth.predict(o).network_idle) < 0.05


def test_fit_holds_out_a_host_slowed_run() -> None:
    # One run below the knee read far lower idle than the broker explains (a busy shared host):
    # the robust fit keeps the knee and the rest of the curve.
    curve = [_point(LAB, o, noise=0.005 * (-1) ** i) for i, o in enumerate(CURVE)]
    curve[1] = _point(LAB, 120, noise=-0.25)
    fitted = fit_queue_model(curve)
    assert fitted.knee_requests_per_s == pytest.approx(400, rel=0.05)
    for o in (200, 300, 600):
        assert abs(fitted.predict(o).network_idle - LAB.predict(o).network_idle) < 0.05


def test_the_blocked_cap_needs_a_run_past_the_knee() -> None:
    calm = [_point(LAB.model_copy(update={"blocked_cap": 0.2}), o) for o in (60, 120, 200, 300)]
    assert fit_queue_model(calm).blocked_cap == pytest.approx(1.0)


def _run(
    plan: RunPlan, rate: float, served: float, records: float, queue: float, created: float
) -> RunRecord:
    return record_with_brokers(
        [
            BrokerStats(
                broker="1",
                produce_requests_per_s=served,
                messages_in_per_s=records,
                network_idle_ratio=0.9,
                request_handler_idle_ratio=0.5,
                request_queue_size=queue,
                request_queue_size_max=16.0,
            )
        ],
        created,
        plan.model_copy(update={"workload": plan.workload.model_copy(update={"rate_per_producer": rate})}),
    )


def test_curve_points_offered_rate() -> None:
    plan = qunar_plans()[0]
    producers = plan.workload.producers
    calm = _run(plan, 2.0, 24.0, 2.0 * producers, 0.1, 1000.0)  # 2 records a request
    batching = _run(plan, 10.0, 60.0, 10.0 * producers, 0.5, 2000.0)  # linger-bound: 4 a request
    full = _run(plan, 20.0, 80.0, 10.0 * producers, 15.5, 3000.0)  # the broker pushed back
    points = {p.served_requests_per_s: p for p in curve_points([calm, batching, full])}
    assert points[24.0].offered_requests_per_s == pytest.approx(24.0)
    # A broker that kept up took what was sent, not what the calm run's ratio would make of it.
    assert points[60.0].offered_requests_per_s == pytest.approx(60.0)
    # One that pushed back was offered its schedule at the calm run's records per request.
    assert points[80.0].offered_requests_per_s == pytest.approx(20.0 * producers / 2.0)


def test_fit_needs_a_curve() -> None:
    with pytest.raises(BadInput, match="at least 3"):
        fit_queue_model([_point(LAB, 100)])
    no_queue = [
        p.__class__(**{**p.__dict__, "request_queue_max": None}) for p in (_point(LAB, o) for o in (1, 2, 3))
    ]
    with pytest.raises(BadInput, match="queue cap"):
        fit_queue_model(no_queue)
    assert fit_queue_model(no_queue, queue_cap=500).queue_cap == 500


def test_forecast_takes_idle_and_headroom_from_the_queue() -> None:
    from tuner.model.cost import BrokerCostModel, LinearFit
    from tuner.model.forecast import forecast
    from tuner.model.forecast_today import Baseline
    from tuner.render.diagnosis_forecast import forecast_table

    flat = LinearFit(requests_coef=1e-5, bytes_coef=0.0, r2=0.5, n=9, rmse=0.1)
    model = BrokerCostModel(network=flat, handler=flat, queue=LAB)
    bases = [
        Baseline(label="current", role="current", brokers=1, requests_per_s=300.0, bytes_per_s=3e5),
        Baseline(label="recommended", role="recommended", brokers=1, requests_per_s=20.0, bytes_per_s=3e5),
    ]
    f = forecast(model, bases, peak=2.0)
    cur, rec = f.row("current"), f.row("recommended")
    assert cur is not None and rec is not None
    # 600 req/s at the peak is 1.5x past the 400 req/s knee: idle collapses, the queue is near full.
    assert cur.headroom_to_knee == pytest.approx(400 / 600) and cur.request_queue is not None
    assert cur.network_idle == pytest.approx(LAB.predict(600).network_idle) and cur.network_idle < 0.6
    assert rec.headroom_to_knee == pytest.approx(10.0) and rec.network_idle > 0.9
    assert any("knee at 400 produce requests/s" in a for a in f.assumptions)
    assert forecast_table(f).columns[-1].header == "headroom to knee (queue at peak)"
