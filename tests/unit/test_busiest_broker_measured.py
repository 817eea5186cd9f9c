"""Recommend's busiest broker is a broker's rate, never the all-broker total: the client's own
per-broker split where it has one, else the brokers' count of the run's requests on the busiest."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.model.evidence import measured_of
from tuner.store.figures import BrokerStats
from tuner.store.recommendation import SLOBounds

SLO = SLOBounds(p99_ms=2000.0)


PLAN = qunar_plans()[0]  # librdkafka: one partition per request, counted on the run's topics


@settings(deadline=None, max_examples=40)
@given(st.lists(st.floats(1.0, 5000.0), min_size=1, max_size=5))
def test_without_a_client_split_the_busiest_broker_is_measured_on_the_brokers(rates: list[float]) -> None:
    brokers = [
        BrokerStats(
            broker=str(i), produce_requests_per_s=r, topic_produce_requests_per_s=r, messages_in_per_s=r
        )
        for i, r in enumerate(rates, 1)
    ]
    record = record_with_brokers(brokers, 1_700_000_000.0, plan=PLAN)
    assert not record.client.produce_requests_by_broker
    m = measured_of(record, SLO)
    assert m.busiest_broker_measured_on == "brokers"
    assert m.busiest_broker_requests_per_s == max(rates)
    if len(rates) > 1:
        assert m.busiest_broker_requests_per_s < sum(rates)


def test_the_client_s_own_split_comes_first() -> None:
    brokers = [BrokerStats(broker=str(b), topic_produce_requests_per_s=100.0) for b in (1, 2, 3)]
    record = record_with_brokers(brokers, 1_700_000_000.0, plan=PLAN)
    client = record.client.model_copy(
        update={"produce_requests_by_broker": {"1": 1000, "2": 3000, "3": 1000}}
    )
    m = measured_of(record.model_copy(update={"client": client}), SLO)
    assert m.busiest_broker_measured_on == "client"
    assert m.busiest_broker_requests_per_s == 3000 / client.window_s
