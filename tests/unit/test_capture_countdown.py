"""`kbt capture`'s countdown in a pipe or log: a plain line every 30 s of the window, then what is
still to read once it is over (a one-hour window is not an hour of silence). The window is said to
start only when it starts, once the cluster's metadata answered."""

from __future__ import annotations

import io

from rich.console import Console

from tuner.cli.capture import _countdown


def test_a_piped_countdown_says_it_is_alive_and_when_the_window_is_over() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=100)
    with _countdown(console, 100.0) as progress:
        for left in (100.0, 95.0, 75.0, 70.0, 40.0, 35.0, 5.0, 0.0):
            progress(left)
    lines = out.getvalue().splitlines()
    assert lines == [
        "capturing for 100 s ...",
        "capturing: 70 s left",
        "capturing: 40 s left",
        "capturing: 5 s left",
        "window over: reading record samples and the brokers' figures ...",
    ], lines


def test_nothing_is_said_to_be_captured_before_the_window_starts() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=100)
    with _countdown(console, 60.0):
        pass  # the cluster's metadata never answered: the window never started
    assert out.getvalue() == ""
