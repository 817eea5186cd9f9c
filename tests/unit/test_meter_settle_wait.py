"""A run on brokers that started moments ago waits until its measured window starts past the
start-up padding of their idle meters (tuner.measure.meter_warmup); a settled cluster does not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tuner.core.paths import repo_root
from tuner.driver.result import DriverResult
from tuner.measure.broker_window import BrokerWindow
from tuner.runner.sweep import Observer, SweepRunner, Target
from tuner.spec import load_sweep
from tuner.spec.sweep import RunPlan
from tuner.store.results import ResultsStore


class _Phases(Observer):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def phase(self, plan: RunPlan, text: str) -> None:
        self.seen.append(text)


class _Measurer:
    def __init__(self, settled: float | None) -> None:
        self.settled = settled

    def measure(self, run_started: float, start: float, end: float, topics: list[str]) -> BrokerWindow:
        raise AssertionError("not measured here")

    def settled_at(self) -> float | None:
        return self.settled


class _Engine:
    def run(self, plan: RunPlan, topics: list[str], run_id: str, target: Target) -> DriverResult:
        raise AssertionError("not run here")


def _runner(tmp_path: Path, settled: float | None) -> tuple[SweepRunner, _Phases]:
    observer = _Phases()
    runner = SweepRunner(
        target=Target(bootstrap_servers="127.0.0.1:1", prometheus_url=None),
        engine=_Engine(),
        measurer=_Measurer(settled),
        store=ResultsStore(tmp_path),
        observer=observer,
    )
    return runner, observer


@pytest.fixture
def plan() -> RunPlan:
    return load_sweep(repo_root() / "loadtests" / "smoke.yaml").runs[0]


def test_waits_until_the_window_starts_past_the_padding(tmp_path: Path, plan: RunPlan) -> None:
    warmup = plan.workload.warmup_s
    runner, observer = _runner(tmp_path, settled=time.time() + warmup + 1.2)
    began = time.monotonic()
    runner._await_settled_meters(plan)
    waited = time.monotonic() - began
    assert 1.0 <= waited < 3.0, waited
    assert len(observer.seen) == 1 and "idle meters to settle" in observer.seen[0]


@pytest.mark.parametrize("settled", [None, "past", "within warm-up"])
def test_no_wait_when_settled_or_unknown(tmp_path: Path, plan: RunPlan, settled: str | None) -> None:
    at = {None: None, "past": time.time() - 100, "within warm-up": time.time() + plan.workload.warmup_s / 2}
    runner, observer = _runner(tmp_path, settled=at[settled])
    began = time.monotonic()
    runner._await_settled_meters(plan)
    assert time.monotonic() - began < 0.5
    assert observer.seen == []
