"""The sweep's progress display: a rich progress bar of runs done, the current run's phase, and
live figures while it produces (imported when a sweep runs, not for its --help)."""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn

from tuner.cli.live import LiveFigures
from tuner.render.fit import bar_width, label
from tuner.render.sweep_table import STATUS_STYLE
from tuner.runner.lifecycle import Observer
from tuner.spec.sweep import RunPlan
from tuner.store.record import RunRecord


class _FromFirstTask(Progress):
    """A Progress whose display starts with its first task. A command enters its bar before the
    runner's start checks (a cluster not there, a topic that does not fit), and the runner adds the
    first task once they pass: a check that fails leaves its error the only line (rich's Progress
    entered and left unused drew an empty line in a pipe, the cursor's codes on a terminal)."""

    def __enter__(self) -> _FromFirstTask:
        return self

    def add_task(self, *args: Any, **kwargs: Any) -> TaskID:
        task = super().add_task(*args, **kwargs)
        if not self.live.is_started:
            self.start()
        return task

    def stop(self) -> None:
        if self.live.is_started:
            super().stop()


def progress_bar(console: Console, *counts: ProgressColumn) -> Progress:
    """A transient bar at the console's width: the task, its bar, `counts`, the time elapsed; shown
    from its first task on."""
    return _FromFirstTask(
        TextColumn("{task.description}"),
        BarColumn(bar_width=bar_width(console.width)),
        *counts,
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


class ProgressObserver(Observer):
    """A rich progress bar: runs done of total, plus the current run's elapsed time and phase."""

    def __init__(self, progress: Progress, console: Console) -> None:
        self.progress = progress
        self.console = console
        self.sweep_task: TaskID | None = None
        self.run_task: TaskID | None = None
        self._ticker: threading.Thread | None = None
        self._run_started = 0.0
        self._stop_tick = threading.Event()
        self.live: LiveFigures | None = None  # figures every 5 s while a run produces

    def sweep_started(self, runs: list[RunPlan], skipped: list[RunPlan]) -> None:
        total = len(runs) + len(skipped)
        self.sweep_task = self.progress.add_task("sweep", total=total, completed=len(skipped))

    def run_skipped(self, plan: RunPlan, record: RunRecord) -> None:
        self.console.print(f"[dim]skip {plan.name}: completed earlier ({record.run_id})[/dim]")

    def run_started(self, plan: RunPlan) -> None:
        self._finish_ticker()
        self.run_task = self.progress.add_task(label(plan.name), total=plan.workload.duration_s)
        self._run_started = time.monotonic()
        self._stop_tick.clear()
        self._ticker = threading.Thread(target=self._tick, args=(self.run_task,), daemon=True)
        self._ticker.start()

    def phase(self, plan: RunPlan, text: str) -> None:
        if self.run_task is not None:
            self.progress.update(self.run_task, description=f"{label(plan.name)}: {text}")
            if text == "producing":
                self._run_started = time.monotonic()
        if self.live is not None:
            if text == "producing" and self.run_task is not None:
                task = self.run_task
                self.live.start(
                    plan.name,
                    on_row=lambda row: self.progress.update(task, description=f"{label(plan.name)}: {row}"),
                )
            else:
                self.live.stop()

    def run_finished(self, plan: RunPlan, record: RunRecord, path: str) -> None:
        self._finish_ticker()  # the live figures stop with it
        if self.run_task is not None:
            self.progress.remove_task(self.run_task)
            self.run_task = None
        if self.sweep_task is not None:
            self.progress.advance(self.sweep_task)
        colour = STATUS_STYLE[record.status]
        head = f"[{colour}]{record.status:10}[/{colour}] {escape(plan.name)}"
        if len(f"{record.status:10} {plan.name} -> {path}") <= self.console.width:
            self.console.print(f"{head} -> {escape(path)}")
        else:  # the path on a line of its own, never folded (a run id is never cut in two)
            self.console.print(head)
            self.console.print(f"        -> {path}", markup=False, highlight=False, soft_wrap=True)
        for problem in record.problems:
            self.console.print(f"       [{colour}]{problem}[/{colour}]")

    def _tick(self, task: TaskID) -> None:
        while not self._stop_tick.wait(0.5):
            self.progress.update(task, completed=time.monotonic() - self._run_started)

    def _finish_ticker(self) -> None:
        if self.live is not None:
            self.live.stop()
        self._stop_tick.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
            self._ticker = None
