"""A run's produce requests from the brokers' counters: counted from the last scrape before the
run, and across a broker restart within it (its counters start again from 0): each reset is added
back, as Prometheus' rate() does, instead of the fall reading as no requests or a negative rate."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from tuner.measure.broker_window import measure_window, without_resets
from tuner.measure.prometheus import RangeSeries, Sample


def _scraped(steps: list[tuple[int, bool]], at: float = 0.0) -> tuple[list[tuple[float, float]], float]:
    """A counter scraped every 10 s from `at`, and the requests it counted: each step adds its
    requests; after a restart (True) the count starts from 0 again. A restart shows as a fall below
    the last sample, as Prometheus sees one (a restart that counted past it is invisible to all)."""
    out: list[tuple[float, float]] = []
    value = total = 0.0
    for i, (added, restarted) in enumerate(steps):
        if restarted and value > 0:
            added %= int(value)
            value = 0.0
        value += added
        total += added
        out.append((at + 10.0 * i, value))
    return out, total


steps = st.lists(st.tuples(st.integers(0, 10_000), st.booleans()), min_size=1, max_size=40)


@given(steps)
def test_resets_are_added_back(counted: list[tuple[int, bool]]) -> None:
    points, total = _scraped(counted)
    fixed = without_resets(points)
    assert all(b[1] >= a[1] for a, b in itertools.pairwise(fixed))
    assert [t for t, _ in fixed] == [t for t, _ in points]
    # Every request counted once: a restarted counter's first sample holds what it counted since.
    assert fixed[-1][1] == total


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=40))
def test_a_counter_without_resets_is_kept(added: list[int]) -> None:
    points, _ = _scraped([(a, False) for a in added])
    assert without_resets(points) == points


class _Prom:
    """A broker's produce request counter, as scraped."""

    def __init__(self, points: list[tuple[float, float]]) -> None:
        self.points = points

    def instant(self, expr: str, at: float | None = None) -> list[Sample]:
        return []

    def samples(self, selector: str, start: float, end: float) -> list[RangeSeries]:
        if "kafka_network_requests_total" not in selector:
            return []
        return [RangeSeries(labels={"broker": "1"}, points=self.points)]


def test_a_run_across_a_broker_restart_counts_every_request() -> None:
    # 5000 before the run; 100 requests every 10 s from t=100; the broker restarts before t=150.
    points, _ = _scraped([(5000, False), *[(100, False)] * 5, (60, True), *[(100, False)] * 5], at=90.0)
    window = measure_window(_Prom(points), 100.0, 190.0, ["t"], 5.0, 200.0, run_started=95.0)
    assert window.produce_requests_total == 5 * 100 + 60 + 5 * 100
    # From the window's start: the one scrape's requests before it left out. (Read as scraped, the
    # fall from 5500 to 60 counted none at all.)
    assert window.produce_requests == window.produce_requests_total - 100 * (100 - 90) / 10


def test_run_count_starts_at_the_last_scrape_before_the_run() -> None:
    """A run's first requests between two scrapes all belong to it (the counter is flat before)."""
    prom = _Prom([(95.0, 1000.0), (100.0, 1000.0), (105.0, 1300.0), (140.0, 1600.0)])
    window = measure_window(prom, 105.0, 130.0, ["t"], 5.0, 141.0, run_started=102.0)
    assert window.produce_requests_total == 600.0
