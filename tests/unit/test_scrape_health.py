"""Scrape health: a broker whose exporter answered too few of the window's scrapes is unmeasured (no
rate is reported for it, diagnose names the scrape figures); one that answered enough is measured."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.units import Millis
from tuner.measure.cluster_snapshot import SCRAPE_FIELDS, unmeasured
from tuner.measure.prometheus import PrometheusError
from tuner.model.diagnosis import diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.runner.live_diagnosis import measured_by_broker, snapshot_of
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot


def _health(answered: float, attempted: float) -> dict[str, float]:
    return {
        "scrape_attempts": attempted,
        "scrape_samples": answered,
        "scrape_coverage": answered / attempted if attempted else 0.0,
    }


@given(st.integers(0, 400), st.integers(1, 400))
def test_unmeasured_below_the_coverage_or_sample_floor(answered: int, attempted: int) -> None:
    answered = min(answered, attempted)
    low = answered < THRESHOLDS.scrape_samples_min or answered / attempted < THRESHOLDS.scrape_coverage_min
    assert unmeasured(_health(answered, attempted)) == low
    # One more answered scrape never turns a measured broker into an unmeasured one.
    if not low and answered < attempted:
        assert not unmeasured(_health(answered + 1, attempted))


def test_no_scrape_figures_is_unmeasured() -> None:
    assert unmeasured({})


def test_the_issue_s_failing_scrapes_are_unmeasured() -> None:
    # up 0.17 and 0.31 over a 300 s window scraped every 15 s (20 scrapes)
    assert unmeasured(_health(3.4, 20)) and unmeasured(_health(6.2, 20))
    assert not unmeasured(_health(20, 20)) and not unmeasured(_health(19, 20))


def test_scrape_queries_use_the_target_scope() -> None:
    for template in SCRAPE_FIELDS.values():
        expr = template.format(scope='job="kafka",namespace="kafka"', w="300000ms")
        assert 'job="kafka",namespace="kafka"' in expr and "[300000ms]" in expr and "by (broker)" in expr


def test_diagnose_reports_an_unmeasured_broker_without_rates() -> None:
    ok = BrokerSnapshot(
        broker="1",
        network_idle_ratio=0.9,
        request_handler_idle_ratio=0.9,
        produce_requests_per_s=40.0,
        bytes_in_per_s=40 * 30_000.0,
        network_threads=3,
    )
    stalled = BrokerSnapshot(
        broker="2",
        measured=False,
        scrape_attempts=20,
        scrape_samples=4,
        scrape_coverage=0.2,
        scrape_duration_max_s=2.0,
    )
    snap = ClusterSnapshot(prometheus="http://p", end=1.0, window_s=300, step_s=15, brokers=[ok, stalled])
    result = diagnose(snap, DiagnoseThresholds())
    by = {b.broker: b for b in result.brokers}
    assert by["1"].status == "healthy"
    assert by["2"].status == "warning" and by["2"].cause == "unmeasured"
    summary = by["2"].findings[0].summary
    assert "4 of 20 scrapes" in summary and "up 0.20" in summary and "2.0 s" in summary
    assert result.status == "warning" and "2" in result.headline


def test_a_window_of_too_few_scrapes_says_widen_it() -> None:
    """Every scrape answered, but the window held 2 (scraped every 60 s, diagnosed over 2 min)."""
    few = BrokerSnapshot(broker="1", measured=False, scrape_attempts=2, scrape_samples=2, scrape_coverage=1.0)
    snap = ClusterSnapshot(prometheus="http://p", end=1.0, window_s=120, step_s=15, brokers=[few])
    finding = diagnose(snap, DiagnoseThresholds()).brokers[0].findings[0]
    assert "2 of 2 scrapes" in finding.summary
    assert finding.advice.startswith("Prometheus attempted 2 scrape(s) of it in the window: widen --window")
    # A window of many scrapes, few answered: the exporter is the problem, as before.
    stalled = BrokerSnapshot(
        broker="1", measured=False, scrape_attempts=20, scrape_samples=4, scrape_coverage=0.2
    )
    snap = ClusterSnapshot(prometheus="http://p", end=1.0, window_s=300, step_s=15, brokers=[stalled])
    assert "scrape timeout" in diagnose(snap, DiagnoseThresholds()).brokers[0].findings[0].advice


_FIGURES: dict[str, Any] = {"prometheus": "http://prom:9090", "end": 1.8e9, "window_s": 300.0, "step_s": 15.0}


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        (
            {"brokers": [{"broker": "1"}, {"broker": "2", "scrape_attempts": 1e308}]},
            "broker 2: scrape_attempts:",
        ),
        ({"topics": [{"topic": "logs", "bytes_in_per_s": float("inf")}]}, "topic logs: bytes_in_per_s:"),
        ({"clients": [{"broker": "1", "client_id": "fb", "produce_bytes_per_s": 1e300}]}, "client fb:"),
        ({"end": 1e308}, "end:"),
        # below zero: no latency, rate, ratio or queue is negative (diagnosed as it came before)
        (
            {"brokers": [{"broker": "1", "produce_local_p99_ms": -5.0}]},
            "broker 1: produce_local_p99_ms: must be 0",
        ),
        (
            {"brokers": [{"broker": "1", "network_idle_ratio": -0.2}]},
            "broker 1: network_idle_ratio: must be 0",
        ),
        ({"topics": [{"topic": "logs", "partition_appends_per_s": -1.0}]}, "topic logs: partition_appends"),
    ],
)
def test_a_figure_past_its_bound_is_one_line_naming_it(rows: dict[str, Any], named: str) -> None:
    """A Prometheus (or a recording rule) answering 1e308 scrapes was a ValidationError traceback."""
    with pytest.raises(PrometheusError) as exc:
        snapshot_of({**_FIGURES, **rows})
    message = exc.value.message
    assert message.startswith("Prometheus at http://prom:9090 answered a figure kbt cannot use: " + named)
    assert "\n" not in message and "pydantic" not in message


def test_figures_within_their_bounds_are_the_snapshot() -> None:
    snap = snapshot_of({**_FIGURES, "brokers": [{"broker": "1", "scrape_attempts": 20.0}]})
    assert snap.brokers[0].scrape_attempts == 20.0


def test_a_zero_figure_is_kept() -> None:
    snap = snapshot_of({**_FIGURES, "brokers": [{"broker": "1", "produce_local_p99_ms": 0.0}]})
    assert snap.brokers[0].produce_local_p99_ms == 0.0


@pytest.mark.parametrize(
    ("value", "problem"),
    [(-5.0, "must be 0 or more (got -5)"), (1e20, "must be less than or equal to 31622400000 (got 1e+20)")],
)
def test_a_figure_read_beside_the_snapshot_is_held_to_its_unit(value: float, problem: str) -> None:
    """compare's produce p99 was shown as Prometheus answered it (-5.0 ms)."""
    assert measured_by_broker("http://p", "p99", Millis, {"1": 3.0}) == {"1": 3.0}
    with pytest.raises(PrometheusError) as exc:
        measured_by_broker("http://p", "p99", Millis, {"1": 3.0, "2": value})
    assert (
        exc.value.message
        == f"Prometheus at http://p answered a figure kbt cannot use: broker 2: p99: {problem}"
    )
