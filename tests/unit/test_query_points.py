"""A window's points a series, held to what Prometheus answers (11,000: its range-query limit, which
kbt holds its window subqueries to as well). Prometheus' own answer is checked against the real
binary in tests/e2e/test_diagnose_cli.py."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.cli.diagnose import window_and_step
from tuner.core.errors import BadInput
from tuner.measure.prometheus import MAX_POINTS_PER_SERIES, Prometheus, fits, fitting_step


@given(st.floats(1.0, 366 * 86_400.0))
def test_the_step_kbt_names_is_the_finest_whole_second_that_fits(span_s: float) -> None:
    step = fitting_step(span_s)
    assert step == math.floor(step) and fits(span_s, step)
    if step > 1:
        assert not fits(span_s, step - 1)


@pytest.mark.parametrize(
    ("window", "step", "fitted"),
    [("24h", "1s", "8"), ("12h", "1s", "4"), ("4h", "1s", "2"), ("31622400", "15", "2875")],
)
def test_a_window_past_the_limit_is_refused_naming_the_step_that_fits(
    window: str, step: str, fitted: str
) -> None:
    with pytest.raises(BadInput) as exc:
        window_and_step(window, step)
    text = str(exc.value)
    assert f"--window {window} at --step {step} is " in text and "\n" not in text
    assert f"past the 11,000 Prometheus answers a query: give a step of {fitted} s or longer" in text


@pytest.mark.parametrize(("window", "step"), [("24h", "8s"), ("5m", "15s"), ("11000", "1")])
def test_a_window_within_the_limit_is_kept(window: str, step: str) -> None:
    window_s, step_s = window_and_step(window, step)
    assert window_s / step_s <= MAX_POINTS_PER_SERIES


def test_a_range_past_the_limit_is_refused_before_any_request() -> None:
    """Nothing listens at port 9: a query would be 'unreachable'; the refusal comes first."""
    with pytest.raises(BadInput, match="86,401 points a series, past the 11,000"):
        Prometheus("http://127.0.0.1:9").range("vector(1)", 0.0, 86_400.0, 1.0)
