"""The record schema's figures (store/figures.py) and what measures them are one class each: the
client's, the broker's and the attribution, in tuner/core (test_record_schema_pinned.py fails when a
field is added without a schema bump). A driver's result copies into the record unchanged."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tuner.driver import result
from tuner.measure import attribution, broker_window, threads
from tuner.store import figures

# One class for both: nothing to drift apart.
SHARED = [
    (result.LatencyMs, figures.LatencyMs),
    (result.DeliveryResult, figures.DeliveryResult),
    (result.ClientResult, figures.ClientResult),
    (broker_window.BrokerStats, figures.BrokerStats),
    (broker_window.BrokerWindow, figures.BrokerWindow),
    (threads.ThreadTime, figures.ThreadTime),
    (threads.ThreadWindow, figures.ThreadWindow),
    (attribution.Attribution, figures.Attribution),
]


def test_the_shared_figures_are_one_class() -> None:
    assert [a.__name__ for a, b in SHARED if a is not b] == []


LATENCY = st.builds(
    result.LatencyMs,
    count=st.integers(0, 10**9),
    p50=st.none() | st.floats(0, 1e6),
    p99=st.none() | st.floats(0, 1e6),
)


@given(
    latency=LATENCY,
    acked=st.integers(0, 10**12),
    by_broker=st.dictionaries(st.sampled_from(["1", "2", "3"]), st.integers(0, 10**9)),
    metrics=st.none()
    | st.dictionaries(st.sampled_from(["request-rate", "batch-size-avg"]), st.floats(0, 1e9)),
)
def test_a_driver_result_copies_into_the_record_unchanged(
    latency: result.LatencyMs, acked: int, by_broker: dict[str, int], metrics: dict[str, float] | None
) -> None:
    client = result.ClientResult(
        engine="java", producers=2, processes=1, started_at=1.0, window_start=2.0, window_end=3.0,
        finished_at=4.0, records_acked=acked, produce_requests_by_broker=by_broker,
        delivery_latency_ms=latency, send_lag_ms=latency, client_metrics=metrics,
    )  # fmt: skip
    copied = figures.ClientResult.model_validate(client.model_dump())
    assert copied.model_dump() == client.model_dump()
