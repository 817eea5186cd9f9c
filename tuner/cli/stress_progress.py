"""kbt stress's running account: each profile's stages as they start and are judged, with live
figures (imported when a stress test runs, not for --help)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from rich.console import Console

from tuner.cli.live import LiveFigures
from tuner.driver.stress.plan import StressPlan
from tuner.driver.stress.tally import Tally
from tuner.measure.live import LiveSample
from tuner.runner.stress.gates import describe, failed_gates
from tuner.runner.stress.records import ProfileOutcome
from tuner.runner.stress.run_stages import StressObserver
from tuner.spec.stress_spec import Stage
from tuner.store.stress_section import GateCheck


class ConsoleObserver(StressObserver):
    def __init__(
        self, console: Console, heading: list[str] | None = None, live: LiveFigures | None = None
    ) -> None:
        self.console = console
        self.heading = heading or []  # the run's opening lines, once its start checks pass
        self.last_stage: dict[str, int] = {}
        self.live = live  # figures every 5 s while a profile runs
        self.tallies: dict[str, Tally] = {}  # the runner's latest tally per profile (its ticks)

    def started(self) -> None:
        for line in self.heading:
            self.console.print(line)

    def phase(self, label: str, text: str) -> None:
        self.console.print(f"[dim]{label}: {text}[/dim]")

    def profile_started(self, label: str, plan: StressPlan) -> None:
        total = plan.stages[-1].end_s if plan.stages else 0
        self.console.print(
            f"[bold]{label}[/bold]: {len(plan.stages)} stages, {total:.0f} s,"
            f" {plan.rate_per_producer:g} msgs/s per producer, topics {', '.join(plan.topics)}"
        )
        if self.live is not None:
            self.live.start(label, fill=lambda s: self._fill(label, plan, s))

    def engine_profile_started(self, label: str) -> None:
        """The brokers' and the client's own series from Prometheus (no locust tally to add)."""
        if self.live is not None:
            self.live.start(label)

    def _fill(self, label: str, plan: StressPlan, s: LiveSample) -> LiveSample:
        """The locust producers export no latency quantiles: p99 of the current stage (and acked
        and failed so far) from the runner's own tally."""
        tally = self.tallies.get(label)
        stage = plan.stage_at(time.time())
        if tally is None:
            return s
        current = tally.stages.get(stage.index) if stage is not None else None
        p99 = s.p99_ms if s.p99_ms is not None else (current.p_ms(99) if current else None)
        acked = sum(t.acked for t in tally.stages.values())
        failed = sum(t.failed for t in tally.stages.values())
        return replace(
            s,
            p99_ms=p99,
            acked=s.acked if s.acked is not None else acked,
            lost=s.lost if s.lost is not None else failed,
        )

    def tick(self, label: str, plan: StressPlan, tally: Tally) -> None:
        self.tallies[label] = tally
        stage = plan.stage_at(time.time())
        if stage is None or self.last_stage.get(label) == stage.index:
            return
        self.last_stage[label] = stage.index
        self.console.print(f"{label}: stage {stage.name} ({stage.users} producers, {stage.duration_s:g} s)")

    def stage_judged(self, label: str, stage: Stage, checks: list[GateCheck]) -> None:
        failing = failed_gates(checks)
        if failing:
            why = "; ".join(describe(c) for c in failing)
            self.console.print(f"[red]{label}: {stage.name} failed[/red]: {why}")
        else:
            shown = ", ".join(_short(c) for c in checks if c.value is not None)
            self.console.print(f"[green]{label}: {stage.name} held[/green] ({shown})")

    def profile_finished(self, outcome: ProfileOutcome) -> None:
        if self.live is not None:
            self.live.stop()
        self.console.print(f"[dim]{outcome.label}: {len(outcome.records)} stage records written[/dim]")


def _short(check: GateCheck) -> str:
    unit = {"p99": " ms", "e2e_p99": " ms"}.get(check.gate, "")
    value = check.value if check.value is not None else 0.0
    digits = 2 if check.gate == "network_idle" else 0
    return f"{check.gate} {value:.{digits}f}{unit}"


@contextmanager
def closing(observer: ConsoleObserver) -> Iterator[None]:
    """The live figures stop with the run, however it ends."""
    try:
        yield
    finally:
        if observer.live is not None:
            observer.live.close()
