"""Which clients send the small requests (tuner.model.clients): each broker's measured produce
requests split by the producing clients' shares of Kafka's request-time sensor, summed over brokers."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.unit.rendered import as_text
from tuner.model.clients import SIZE_TIE, ClientEstimate, attribute_clients
from tuner.model.diagnosis import diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.render.diagnosis import client_table
from tuner.store.snapshot import BrokerSnapshot, ClientSnapshot, ClusterSnapshot

TARGET = 16384.0


def _snapshot(brokers: list[BrokerSnapshot], clients: list[ClientSnapshot]) -> ClusterSnapshot:
    return ClusterSnapshot(
        prometheus="http://p", end=1000.0, window_s=60.0, step_s=5.0, brokers=brokers, clients=clients
    )


# (requests/s, bytes per request) per client on one broker, every request costing the same time
_client = st.tuples(st.floats(0.5, 5000), st.floats(50, 200_000))


def _on_one_broker(
    clients: list[tuple[float, float]], cost_s: Callable[[float], float]
) -> list[ClientEstimate]:
    """The estimates for clients (requests/s, bytes per request) on one broker whose requests each
    cost cost_s(bytes) seconds of thread time."""
    rows = [
        ClientSnapshot(
            broker="1", client_id=f"c{i}", request_threads=n * cost_s(size), produce_bytes_per_s=n * size
        )
        for i, (n, size) in enumerate(clients)
    ]
    total = sum(n for n, _ in clients)
    return attribute_clients(
        _snapshot([BrokerSnapshot(broker="1", produce_requests_per_s=total)], rows), TARGET
    )


@given(st.lists(_client, min_size=1, max_size=6), st.floats(1e-6, 1e-3))
def test_exact_when_every_request_costs_the_same(clients: list[tuple[float, float]], cost_s: float) -> None:
    """The method's premise: with a fixed thread time per request the split gives each client's
    rate back, and the estimates add up to the broker's count."""
    found = _on_one_broker(clients, lambda _: cost_s)
    by_id = {e.client_id: e for e in found}
    for i, (n, size) in enumerate(clients):
        e = by_id[f"c{i}"]
        assert e.produce_requests_per_s == pytest.approx(n, rel=1e-6)
        assert e.bytes_per_request == pytest.approx(size, rel=1e-6)
        assert (e.requests_cut is not None) == (1.0 <= size < TARGET)
    assert sum(e.time_share for e in found) == pytest.approx(1.0)
    rates = [e.produce_requests_per_s or 0.0 for e in found]
    assert rates == sorted(rates, reverse=True)


@given(
    st.dictionaries(
        st.sampled_from(["1", "2", "3"]),
        st.tuples(
            st.floats(0, 2000),
            st.lists(st.tuples(st.floats(0, 2), st.floats(0, 1e6)), min_size=3, max_size=3),
        ),
        min_size=1,
    )
)
def test_estimates_add_up_to_each_broker_s_count(
    per_broker: dict[str, tuple[float, list[tuple[float, float]]]],
) -> None:
    brokers = [BrokerSnapshot(broker=b, produce_requests_per_s=n) for b, (n, _) in per_broker.items()]
    rows = [
        ClientSnapshot(broker=b, client_id=f"c{i}", request_threads=t, produce_bytes_per_s=by)
        for b, (_, cs) in per_broker.items()
        for i, (t, by) in enumerate(cs)
    ]
    found = attribute_clients(_snapshot(brokers, rows), TARGET)
    for b, (n, cs) in per_broker.items():
        split = sum(e.by_broker.get(b, 0.0) for e in found)
        if any(t > 0 and by > 0 for t, by in cs):
            assert split == pytest.approx(n, rel=1e-9, abs=1e-9)
        else:
            assert split == 0.0
    for e in found:
        assert e.produce_requests_per_s is None or e.produce_requests_per_s >= 0
        assert 0.0 <= e.time_share <= 1.0 + 1e-9
        if e.threads_freed is not None:
            assert 0.0 <= e.threads_freed <= e.request_threads


def test_consumers_and_unmeasured_brokers_get_no_request_estimate() -> None:
    brokers = [
        BrokerSnapshot(broker="1", produce_requests_per_s=100.0),
        BrokerSnapshot(broker="2", measured=False),
    ]
    rows = [
        ClientSnapshot(broker="1", client_id="producer", request_threads=0.02, produce_bytes_per_s=50_000),
        ClientSnapshot(broker="1", client_id="consumer", request_threads=0.01),
        ClientSnapshot(broker="2", client_id="producer", request_threads=0.5, produce_bytes_per_s=1e6),
    ]
    found = {e.client_id: e for e in attribute_clients(_snapshot(brokers, rows), TARGET)}
    assert found["producer"].produce_requests_per_s == pytest.approx(100.0)
    assert found["producer"].by_broker == {"1": pytest.approx(100.0)}
    assert found["consumer"].produce_requests_per_s is None
    assert found["consumer"].time_share == pytest.approx(0.01 / 0.53)


def test_no_sensors_no_clients_and_the_table_names_them() -> None:
    broker = BrokerSnapshot(
        broker="1", produce_requests_per_s=300.0, bytes_in_per_s=150_000, network_idle_ratio=0.9
    )
    assert diagnose(_snapshot([broker], []), DiagnoseThresholds()).clients == []
    rows = [
        ClientSnapshot(
            broker="1", client_id="filebeat", user="logs", request_threads=0.06, produce_bytes_per_s=90_000
        ),
        ClientSnapshot(broker="1", client_id="batched", request_threads=0.004, produce_bytes_per_s=60_000),
    ]
    d = diagnose(_snapshot([broker], rows), DiagnoseThresholds())
    assert [c.client for c in d.clients] == ["filebeat (user logs)", "batched"]
    filebeat = d.clients[0]
    assert filebeat.produce_requests_per_s == pytest.approx(300 * 0.06 / 0.064)
    assert filebeat.bytes_per_request is not None
    assert filebeat.requests_cut == pytest.approx(
        d.thresholds.target_request_bytes / filebeat.bytes_per_request
    )
    table = client_table(d)
    assert table is not None
    out = as_text(table, width=200)
    assert "filebeat (user logs)" in out and "94%" in out
    assert math.isfinite(filebeat.threads_freed or math.nan)


@given(
    st.lists(_client, min_size=1, max_size=6),
    st.floats(1e-5, 1e-3),
    st.floats(0, 1e-6),
    st.floats(0.05, 1.0),
)
@example(  # two sizes 0.16% apart, costs nearly all size term: their estimates tie
    clients=[(1.0, 50.0), (1.0, 171845.0), (1.0, 172127.0)], fixed_s=7.78e-05, scale=9.53e-07, power=1.0
)
def test_each_estimate_is_the_bound_it_says(
    clients: list[tuple[float, float]], fixed_s: float, scale: float, power: float
) -> None:
    """A request's thread time grows with its size (here fixed + scale x size^power, linear or
    concave as measured): the split overstates the client of the largest requests and understates
    the client of the smallest, and their estimates say so."""
    found = _on_one_broker(clients, lambda size: fixed_s + scale * size**power)
    by_id = {e.client_id: e for e in found}
    for i, (n, size) in enumerate(clients):
        e = by_id[f"c{i}"]
        assert e.produce_requests_per_s is not None
        sizes = [s for _, s in clients]
        if max(sizes) > min(sizes) * 1.01:  # the clients of the largest and the smallest requests say so
            # sizes within SIZE_TIE of the largest (smallest) are that size
            largest, smallest = size >= max(sizes) / (1 + SIZE_TIE), size <= min(sizes) * (1 + SIZE_TIE)
            # A size within 1% of the largest (smallest) but not it may estimate as tied with it (the
            # split compresses sizes whose cost is nearly all size term): either label is true then,
            # and the bound itself is checked below.
            near = size >= max(sizes) / 1.01 or size <= min(sizes) * 1.01
            if largest or smallest or not near:
                assert e.rate_bound == ("at_most" if largest else "at_least" if smallest else None)
        if e.rate_bound == "at_most":
            assert e.produce_requests_per_s >= n * (1 - 1e-9)
        elif e.rate_bound == "at_least":
            assert e.produce_requests_per_s <= n * (1 + 1e-9)
