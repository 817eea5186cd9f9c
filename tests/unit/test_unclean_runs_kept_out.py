"""An "unclean" run (delivered, but its client fell behind its schedule or its request count
disagrees with the broker's) calibrates nothing and backs no recommendation."""

from __future__ import annotations

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.model.cost import observations
from tuner.model.evidence import calibrate, measured_of
from tuner.model.forecast_baseline import meets_slo
from tuner.store import RunRecord
from tuner.store.figures import BrokerStats
from tuner.store.recommendation import SLOBounds


def _pair() -> tuple[RunRecord, RunRecord]:
    brokers = [
        BrokerStats(broker=str(b), produce_requests_per_s=100.0, messages_in_per_s=320.0,
                    bytes_in_per_s=5e5, network_idle_ratio=0.9, request_handler_idle_ratio=0.9)
        for b in (1, 2, 3)
    ]  # fmt: skip
    clean = record_with_brokers(brokers, 1000.0, plan=qunar_plans()[2], p99_ms=600.0)
    unclean = clean.model_copy(update={"status": "unclean", "problems": ["client behind schedule"]})
    return clean, unclean


def test_unclean_runs_do_not_calibrate() -> None:
    clean, unclean = _pair()
    assert calibrate([clean]).of("librdkafka").runs == 1
    assert calibrate([unclean]).of("librdkafka").runs == 0
    assert len(observations([clean])) == 3 and observations([unclean]) == []


def test_unclean_runs_never_meet_the_slo_nor_serve_as_a_tuning_result() -> None:
    clean, unclean = _pair()
    slo = SLOBounds(p99_ms=2000.0)
    assert measured_of(clean, slo).meets_slo and not measured_of(unclean, slo).meets_slo
    assert clean.tuning_result and not unclean.tuning_result
    assert meets_slo(clean) and not meets_slo(unclean)  # forecast baselines


def test_a_forecast_baseline_needs_the_delivery_verified() -> None:
    """A run whose read-back never finished lost "nothing" only because nothing was checked: it
    cannot stand for the recommended setting, in the forecast as in the recommender."""
    clean, _ = _pair()
    unverified = clean.model_copy(update={"delivery": clean.delivery.model_copy(update={"verified": False})})
    assert meets_slo(clean) and not meets_slo(unverified)
