"""window_query: the subquery behind a window's mean/min always has evaluation points in it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.measure.broker_window import window_query


def _seconds(text: str) -> float:
    value, unit = re.fullmatch(r"(\d+)(ms|s)", text).groups()  # type: ignore[union-attr]
    return int(value) / (1000 if unit == "ms" else 1)


@given(window=st.floats(min_value=2.0, max_value=3600.0), step=st.sampled_from([1.0, 5.0, 15.0, 30.0, 60.0]))
def test_a_window_shorter_than_the_scrape_step_still_samples_inside_it(window: float, step: float) -> None:
    expr = window_query("NETWORK_IDLE", "avg", window, step)
    match = re.search(r"\)\[(\d+m?s):(\d+m?s)\]\)$", expr)
    assert match is not None, expr
    span, resolution = (_seconds(g) for g in match.groups())
    assert resolution <= step
    assert span / resolution >= 2  # at least two evaluation points in the window, whatever alignment


@pytest.mark.parametrize(
    ("window", "step", "subquery"), [(10.0, 15.0, "[10000ms:2500ms]"), (60.0, 5.0, "[60000ms:5000ms]")]
)
def test_short_windows_sample_finer_and_long_ones_keep_the_scrape_step(
    window: float, step: float, subquery: str
) -> None:
    assert window_query("NETWORK_IDLE", "avg", window, step).endswith(subquery + ")")
