"""`kbt compare`'s model and lines (tuner.model.compare, tuner.render.compare): per broker and per
client group, before -> after."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.model.compare import compare, group_figures
from tuner.render.compare import compare_lines
from tuner.store.capture import ClientTraffic
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot


def _snap(end: float, idle: float, requests: float, bytes_in: float) -> ClusterSnapshot:
    brokers = [
        BrokerSnapshot(
            broker=str(b),
            network_idle_ratio=idle,
            request_queue_size=16.0 * (1 - idle),
            request_handler_idle_ratio=idle,
            produce_requests_per_s=requests,
            bytes_in_per_s=bytes_in,
        )
        for b in (1, 2)
    ]
    return ClusterSnapshot(prometheus="http://p", end=end, window_s=300, step_s=15, brokers=brokers)


def _rows(requests: int, times: list[float]) -> list[ClientTraffic]:
    return [
        ClientTraffic(
            client_id=f"beats-{i}",
            software="sarama",
            broker="b1",
            requests=requests,
            record_bytes=requests * 400,
            partitions=requests,
            total_time_ms=times,
        )
        for i in range(2)
    ]


def test_before_after_per_broker_and_group() -> None:
    before = _snap(1000.0, 0.31, 355.0, 355.0 * 400)
    after = _snap(5000.0, 0.93, 48.0, 355.0 * 400)
    groups_before = group_figures(_rows(3000, [5.0] * 99 + [90.0]), 300)
    groups_after = group_figures(_rows(400, [20.0] * 100), 300)
    result = compare(before, after, {"1": 40.0}, {"1": 25.0}, groups_before, groups_after)
    one = result.brokers[0]
    assert (one.name, one.before.network_idle, one.after.network_idle) == ("1", 0.31, 0.93)
    assert one.before.bytes_per_request == pytest.approx(400.0)
    assert one.after.bytes_per_request == pytest.approx(355 * 400 / 48)
    assert (one.before.produce_p99_ms, one.after.produce_p99_ms) == (40.0, 25.0)
    (group,) = result.groups
    assert group.name == "beats (sarama)"
    assert group.before.produce_requests_per_s == pytest.approx(20.0)
    assert group.after.produce_requests_per_s == pytest.approx(400 * 2 / 300)
    lines = compare_lines(result)
    assert "  network idle          0.31 -> 0.93" in lines
    assert "  produce requests/s    355 -> 48" in lines
    assert "client group beats (sarama), before -> after:" in lines


def test_without_request_logs_says_how_to_get_groups() -> None:
    result = compare(_snap(1.0, 0.5, 10, 100), _snap(900.0, 0.5, 10, 100), {}, {}, {}, {})
    assert any("--request-log" in line for line in compare_lines(result))
    assert result.brokers[0].before.produce_p99_ms is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 10**9), st.lists(st.floats(0, 1e6), max_size=4)),
        max_size=6,
    ),
    st.floats(0.001, 1e6),
)
def test_any_group_rows_give_finite_figures(rows: list[tuple[int, int, list[float]]], window: float) -> None:
    traffic = [
        ClientTraffic(
            client_id=f"c-{i}", broker="b", requests=r, record_bytes=b, partitions=r, total_time_ms=t
        )
        for i, (r, b, t) in enumerate(rows)
    ]
    for figures in group_figures(traffic, window).values():
        assert figures.produce_requests_per_s is not None and figures.produce_requests_per_s >= 0
        if figures.bytes_per_request is not None:
            assert figures.bytes_per_request >= 0
