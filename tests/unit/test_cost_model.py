"""The broker cost model: recovers known coefficients, never goes negative, round-trips as JSON."""

from __future__ import annotations

import json
import random

import pytest

from tests.unit.synthetic_records import record_with_brokers
from tuner.core.errors import BadInput
from tuner.model.cost import BrokerCostModel, fit_cost_model, fit_linear, nnls
from tuner.store import RunRecord
from tuner.store.figures import BrokerStats

NET_A, NET_B, NET_C = 8e-5, 4e-8, 0.01  # busy per request/s, per byte/s, idle cluster's own work
HND_A, HND_B = 2e-4, 1e-8


def _records(noise: float = 0.0, intercept: float = NET_C, seed: int = 7) -> list[RunRecord]:
    rng = random.Random(seed)
    out = []
    for i, (reqs, kb) in enumerate(
        [(50, 400), (300, 500), (900, 500), (1500, 900), (120, 2000), (2500, 300)]
    ):
        brokers = []
        for broker in ("1", "2", "3"):
            r = reqs * rng.uniform(0.8, 1.2)
            b = kb * 1000 * rng.uniform(0.8, 1.2)
            net = NET_A * r + NET_B * b + intercept + rng.gauss(0, noise)
            hnd = HND_A * r + HND_B * b + rng.gauss(0, noise)
            brokers.append(
                BrokerStats(
                    broker=broker,
                    produce_requests_per_s=r,
                    bytes_in_per_s=b,
                    network_idle_ratio=1 - net,
                    request_handler_idle_ratio=1 - hnd,
                    cpu_cores=0.05 + 3e-4 * r,
                )
            )
        out.append(record_with_brokers(brokers, 1_700_000_000.0 + 100 * i))
    return out


def test_exact_data_recovers_coefficients_and_intercept() -> None:
    model = fit_cost_model(_records())
    assert model.n == 18
    assert model.network.requests_coef == pytest.approx(NET_A, rel=1e-6)
    assert model.network.bytes_coef == pytest.approx(NET_B, rel=1e-6)
    assert model.network.intercept == pytest.approx(NET_C, rel=1e-6)
    assert model.network.r2 == pytest.approx(1.0)
    # The handler data has no intercept: the fit through the origin is kept.
    assert model.handler.intercept == 0.0
    assert model.handler.requests_coef == pytest.approx(HND_A, rel=1e-6)
    assert model.cpu is not None and model.cpu.requests_coef == pytest.approx(3e-4, rel=1e-6)
    assert model.brokers == ["1", "2", "3"] and len(model.runs) == 6


def test_predict_idle() -> None:
    model = fit_cost_model(_records())
    net, handler = model.predict_idle(1000, 1e6)
    assert net == pytest.approx(1 - (NET_A * 1000 + NET_B * 1e6 + NET_C), abs=1e-9)
    assert handler == pytest.approx(1 - (HND_A * 1000 + HND_B * 1e6), abs=1e-9)
    assert model.predict_idle(1e9, 1e12) == (0.0, 0.0)  # clamped, never negative
    assert model.predict_idle(0, 0)[1] == 1.0


def test_noisy_data_keeps_good_fit_quality() -> None:
    model = fit_cost_model(_records(noise=0.003))
    assert model.network.r2 > 0.9
    assert model.network.requests_coef == pytest.approx(NET_A, rel=0.15)
    assert 0 < model.network.rmse < 0.01


def test_coefficients_never_negative() -> None:
    # Busy falls as bytes rise here: unconstrained least squares would give bytes a negative cost.
    fit = fit_linear([100, 200, 300, 400], [4e6, 3e6, 2e6, 1e6], [0.05, 0.04, 0.06, 0.05])
    assert fit.requests_coef >= 0 and fit.bytes_coef >= 0 and fit.intercept >= 0


def test_nnls_matches_unconstrained_when_feasible() -> None:
    import numpy as np

    x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [5.0, 1.0]])
    y = x @ np.array([0.5, 0.25])
    assert nnls(x, y) == pytest.approx([0.5, 0.25])


def test_json_roundtrip() -> None:
    model = fit_cost_model(_records(noise=0.002))
    text = json.dumps(model.model_dump(mode="json"))
    again = BrokerCostModel.model_validate(json.loads(text))
    assert again == model
    assert again.predict_idle(500, 2e5) == model.predict_idle(500, 2e5)


def test_break_even() -> None:
    model = fit_cost_model(_records())
    assert model.network.break_even_request_bytes == pytest.approx(NET_A / NET_B, rel=1e-6)  # 2 KB


def test_too_few_windows_is_bad_input() -> None:
    with pytest.raises(BadInput, match="at least 3 broker windows"):
        fit_cost_model(_records()[:0])
    one = record_with_brokers([BrokerStats(broker="1", produce_requests_per_s=5.0)], 1_700_000_000.0)
    with pytest.raises(BadInput, match="gave 0"):
        fit_cost_model([one])
