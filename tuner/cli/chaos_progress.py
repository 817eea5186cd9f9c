"""kbt chaos's running account: each fault run as it starts, its events, and its verdict
(imported when the matrix runs, not for --help)."""

from __future__ import annotations

from rich.console import Console

from tuner.runner.chaos.run_matrix import ChaosObserver, ChaosRun
from tuner.store.record import RunRecord


class PrintObserver(ChaosObserver):
    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total
        self.done = 0

    def run_started(self, run: ChaosRun) -> None:
        s = run.scenario
        self.console.print(
            f"[bold]{run.plan.name}[/bold] ({self.done + 1}/{self.total}, {s.duration_s:g} s of load or"
            f" until the fault is done, expect {s.expect}): {s.summary}"
        )

    def event(self, run: ChaosRun, at_s: float, what: str) -> None:
        self.console.print(f"  [dim]{at_s:+7.1f}s[/dim] {what}")

    def run_failed(self, run: ChaosRun, message: str) -> None:
        self.done += 1
        self.console.print(f"  [red]error[/red] {message}")

    def run_finished(self, run: ChaosRun, record: RunRecord, path: str) -> None:
        self.done += 1
        fault = record.fault
        verdict = fault.verdict if fault else "?"
        colour = "green" if verdict == "pass" else "red"
        self.console.print(f"  [{colour}]{verdict}[/{colour}] -> {path}")
        for reason in fault.reasons if fault else []:
            self.console.print(f"       {reason}")
