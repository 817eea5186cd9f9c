"""The progress bar a sweep, recommend --live and capture's window share is drawn from its first task:
a command enters it before the runner's start checks, and a check that fails leaves its error the
only line (rich's Progress entered and left unused drew an empty line in a pipe, the cursor's
hide/erase/show codes on a terminal)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from tuner.cli.sweep_progress import progress_bar


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
def test_a_bar_left_before_its_first_task_draws_nothing(terminal: bool) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=80)
    with pytest.raises(RuntimeError), progress_bar(console):
        raise RuntimeError("the start's check failed")
    assert out.getvalue() == ""


def test_a_bar_with_a_task_is_drawn_and_cleared() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    with progress_bar(console) as bar:
        task = bar.add_task("sweep", total=2)
        bar.advance(task)
        bar.refresh()
    assert "sweep" in out.getvalue()
    assert bar.live.is_started is False  # stopped with the block: the terminal's cursor given back
