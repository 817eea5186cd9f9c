"""The search for the longest fitting linger when short lingers fail too: under a heavy load the
shortest lingers send so many requests that the broker's capacity bound (or the queueing they cause)
rules them out, so the lingers that fit form an interval [a, b] that need not start at 0. The search
finds b, as long as the interval is not narrower than its grid step."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.model.search import GRID_POINTS, GRID_RATIO, Searcher
from tuner.store.recommendation import Prediction, SLOBounds

TOP = 1000.0


@dataclass(frozen=True)
class _Family:
    """A family whose profile is its knob (the fake searcher's predictions read it back)."""

    name: str = "linger"
    knob_max: float = TOP

    def make(self, knob: float, codec: str) -> float:
        return knob


class _Interval(Searcher):
    """Predictions that fit exactly for knobs in [low, high]."""

    def __init__(self, low: float, high: float) -> None:
        self.slo, self.margin, self.evaluated = SLOBounds(p99_ms=1000.0), 1.0, 0
        self.low, self.high = low, high

    def predict(self, profile) -> Prediction:  # type: ignore[no-untyped-def,override]
        self.evaluated += 1
        inside = self.low <= profile <= self.high
        return Prediction(
            requests_per_s=1000 / (1 + profile), busiest_broker_requests_per_s=1000 / (1 + profile),
            records_per_request=1, p50_ms=1, p99_ms=500.0 if inside else 5000.0,
        )  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    high=st.floats(TOP * GRID_RATIO**GRID_POINTS, TOP),
    width=st.floats(1 / GRID_RATIO, 1e6),
    from_zero=st.booleans(),
)
def test_the_longest_fitting_knob_is_found_when_short_knobs_fail(
    high: float, width: float, from_zero: bool
) -> None:
    low = 0.0 if from_zero else high / width
    searcher = _Interval(low, high)
    found = searcher.longest(_Family(), "none")  # type: ignore[arg-type]
    assert found is not None
    assert low <= found.knob <= high
    # bisection stops within 1 ms or 1% of the knob above it
    assert high - found.knob <= max(1.0, 0.011 * high) + 1e-9
    assert searcher.evaluated <= 3 + GRID_POINTS + 8


def test_nothing_fits_gives_none() -> None:
    assert _Interval(2 * TOP, 3 * TOP).longest(_Family(), "none") is None  # type: ignore[arg-type]


def test_the_top_fitting_is_taken_at_once() -> None:
    searcher = _Interval(TOP / 10, TOP)
    found = searcher.longest(_Family(), "none")  # type: ignore[arg-type]
    assert found is not None and found.knob == TOP and searcher.evaluated == 1
