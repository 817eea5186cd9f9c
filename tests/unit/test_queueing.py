"""The finite-queue model of a broker's request path: its knee, and its fit on a capacity curve."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.model.queueing import CurvePoint, QueueModel, fit_queue_model, occupancy

LAB = QueueModel(service_rate_per_s=400.0, queue_cap=16, network_base_busy=0.02, network_s_per_request=2e-4)


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
    below, at, past = (LAB.predict(k * LAB.knee_requests_per_s) for k in (0.5, 1.0, 1.5))
    # Below the knee the network threads only do their own work; the queue is nearly empty.
    assert below.blocked < 1e-4 and below.request_queue < 1.5
    assert below.network_idle == pytest.approx(1 - 0.02 - 2e-4 * 200, abs=1e-3)
    # At the knee a full queue is 1 in K + 1 of the time (M/M/1/K at rho = 1).
    assert at.p_full == pytest.approx(1 / 18) and at.request_queue == pytest.approx(16 / 2 + 0.5 - 17 / 18)
    # Past it the queue sits near its cap: a third of the arrivals find it full, and the network
    # thread blocks ~1/mu on each (x = rho P(K) = 0.5), up to its blocked cap (1 here).
    assert past.p_full == pytest.approx(1 / 3, abs=0.01)
    assert past.request_queue > 13 and past.blocked == pytest.approx(1 - math.exp(-0.5), abs=0.01)
    capped = LAB.model_copy(update={"blocked_cap": 0.3}).predict(3 * LAB.knee_requests_per_s)
    assert 0.25 < capped.blocked <= 0.3  # Kafka mutes a connection while its request is in the broker
    assert past.served_requests_per_s == pytest.approx(400, rel=0.01)
    assert below.network_idle > at.network_idle > past.network_idle
    assert LAB.headroom(200) == 2.0 and LAB.headroom(0) is None and LAB.headroom(1e-320) is None


@settings(max_examples=200, deadline=None)
@given(rho=st.floats(0.0, 50.0), k=st.integers(1, 2000))
def test_occupancy_is_a_distribution(rho: float, k: int) -> None:
    p = occupancy(rho, k)
    assert len(p) == k + 1 and abs(p.sum() - 1) < 1e-9 and (p >= 0).all()
    if rho > 1:
        assert p[-1] >= p[0]


@settings(max_examples=100, deadline=None)
@given(offered=st.floats(0.0, 1e6), cap=st.integers(1, 1000), threads=st.integers(1, 16))
def test_predictions_stay_in_range(offered: float, cap: int, threads: int) -> None:
    m = LAB.model_copy(update={"queue_cap": cap, "network_threads": threads})
    p = m.predict(offered)
    assert 0 <= p.network_idle <= 1 and 0 <= p.handler_idle <= 1 and 0 <= p.blocked <= 1
    assert (
        0 <= p.request_queue <= cap and p.served_requests_per_s <= min(offered, m.service_rate_per_s) * 1.0001
    )


def test_fit_recovers_the_model_from_its_curve() -> None:
    curve = [_point(LAB, o, noise=0.01 * (-1) ** i) for i, o in enumerate((60, 120, 200, 300, 380, 450, 600))]
    fitted = fit_queue_model(curve)
    assert fitted.queue_cap == 16
    assert fitted.knee_requests_per_s == pytest.approx(400, rel=0.05)
    assert fitted.rmse_idle is not None and fitted.rmse_idle < 0.02
    for k in (0.5, 1.0, 1.5):
        o = k * 400
        assert abs(fitted.predict(o).network_idle - LAB.predict(o).network_idle) < 0.03


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
    from tuner.model.forecast import Baseline, forecast
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
