"""The capacity bound beside p99 (issue 25 item 5): a setting must leave the busiest broker's network
idle at or above `capacity_network_idle_min` at the offered load, predicted and measured."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.core.errors import BadInput
from tuner.model.evidence import measured_of
from tuner.model.search import Searcher
from tuner.runner.recommend_inputs import _slo, gather
from tuner.spec.slo import SLO
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.figures import BrokerStats
from tuner.store.recommendation import Prediction, SLOBounds

WORKLOAD = qunar_plans()[0].workload


def _record(*idles: float):  # type: ignore[no-untyped-def]
    brokers = [
        BrokerStats(broker=str(i + 1), produce_requests_per_s=100.0, messages_in_per_s=300.0,
                    bytes_in_per_s=5e5, network_idle_ratio=idle, request_handler_idle_ratio=0.9)
        for i, idle in enumerate(idles)
    ]  # fmt: skip
    return record_with_brokers(brokers, 1000.0, plan=qunar_plans()[2], p99_ms=600.0)


def test_the_default_bound_is_the_threshold_and_the_spec_or_flag_move_it() -> None:
    assert (
        _slo(None, 1000, None, WORKLOAD, {}).min_network_idle == THRESHOLDS.capacity_network_idle_min == 0.7
    )
    assert _slo(SLO(min_network_idle=0.8), 1000, None, WORKLOAD, {}).min_network_idle == 0.8
    assert _slo(SLO(min_network_idle=0.8), 1000, None, WORKLOAD, {}, 0.6).min_network_idle == 0.6
    assert _slo(None, 1000, None, WORKLOAD, {}, 0.0).min_network_idle is None  # 0 turns it off


def test_a_run_below_the_bound_misses_the_slo_on_its_busiest_broker() -> None:
    slo = SLOBounds(p99_ms=2000.0, min_network_idle=0.7)
    assert measured_of(_record(0.9, 0.85, 0.95), slo).meets_slo
    assert not measured_of(_record(0.9, 0.56, 0.95), slo).meets_slo  # the mean (0.80) would pass
    assert measured_of(_record(0.9, 0.56, 0.95), SLOBounds(p99_ms=2000.0)).meets_slo


@given(idle=st.floats(0.0, 1.0), bound=st.floats(0.01, 0.99))
def test_the_search_keeps_only_settings_the_bound_allows(idle: float, bound: float) -> None:
    slo = SLOBounds(p99_ms=2000.0, min_network_idle=bound)
    searcher = Searcher.__new__(Searcher)  # fits() reads only slo and margin
    searcher.slo, searcher.margin = slo, 1.0
    p = Prediction(
        requests_per_s=100, busiest_broker_requests_per_s=100, records_per_request=3, p50_ms=10, p99_ms=100,
        network_idle_ratio=idle,
    )  # fmt: skip
    assert searcher.fits(p) == (idle >= bound)
    assert searcher.fits(p.model_copy(update={"network_idle_ratio": None}))  # no cost model: p99 alone


@pytest.mark.parametrize("value", [-0.1, 1.0, 3.0])
def test_bad_flag_is_one_line(value: float, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match="--min-network-idle must lie in"):
        gather(
            results=tmp_path, live=None, slo_p99=None, slo_memory=None, clients=["librdkafka"],
            min_network_idle=value, codecs={}, probe=None, baseline=None, workload=None, sweeps=[],
            max_trials=1, lab_dir=None,
        )  # fmt: skip
