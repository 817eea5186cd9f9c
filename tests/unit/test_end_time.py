"""The one reader of a window's end (`kbt diagnose --end`, `kbt compare --before/--after`): now,
now-<duration> as Grafana writes it, unix seconds, ISO 8601; anything else one line naming the flag."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.cli.diagnose import YEAR_3000_S, end_time, seconds
from tuner.core.errors import BadInput


def test_relative_and_absolute_times() -> None:
    now = time.time()
    assert abs(end_time("now") - now) < 5
    assert abs(end_time("now-1h", "--before") - (now - 3600)) < 5
    assert abs(end_time(" now-90s ") - (now - 90)) < 5
    assert end_time("1700000000") == 1700000000
    assert end_time("2026-01-01T20:00:00Z") == end_time("2026-01-01T20:00:00") == 1767297600


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1h", "give now, now-1h, unix seconds or an ISO 8601 time"),
        ("now-", "now-<duration> takes a duration like 5m"),
        ("now-0s", "now-<duration> takes a duration like 5m"),
        ("now-soon", "now-<duration> takes a duration like 5m"),
        ("-5", "must lie between 1970 and the year 3000"),
        ("1e400", "must lie between 1970 and the year 3000"),
        ("0001-01-01", "must lie between 1970 and the year 3000"),
        ("9999-01-01T00:00:00Z", "must lie between 1970 and the year 3000"),
    ],
)
def test_bad_times_are_one_line_naming_the_flag(value: str, says: str) -> None:
    with pytest.raises(BadInput) as info:
        end_time(value, "--after")
    assert info.value.message.startswith("--after ") and says in info.value.message, info.value.message
    assert "\n" not in info.value.message


@given(st.text(max_size=60))
def test_any_text_is_a_time_or_one_line(value: str) -> None:
    try:
        when = end_time(value, "--before")
    except BadInput as exc:
        assert exc.message.startswith("--before ") and "\n" not in exc.message
    else:
        assert 0 <= when <= YEAR_3000_S


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("9999h", "--window '9999h': is longer than a year"),  # it was "must be a duration like 5m"
        ("1e10", "--window '1e10': is longer than a year"),
        ("5x", "--window '5x': must be a duration like 5m, 300s or 1h"),
    ],
)
def test_a_duration_past_a_year_is_named_so(value: str, says: str) -> None:
    with pytest.raises(BadInput) as err:
        seconds(value, "--window")
    assert err.value.message == says
