"""The CLI's one signal helper: SIGTERM and Ctrl-C stop a command the same way, with one line and
exit 130 (docs/errors.md). `install` covers every command (without it a terminated kbt died
silently with 143); `interruptible` covers long commands, also when started with SIGINT ignored."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from tuner.core.signals import sigterm_as_interrupt, sigterm_interrupts


def install() -> None:
    signal.signal(signal.SIGTERM, sigterm_as_interrupt)
    # A closed terminal (SIGHUP) stops kbt like SIGTERM: one line, exit 130, runners clean up
    # (the default would kill kbt without cleaning up the lab's topics or its child processes).
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, sigterm_as_interrupt)


def quiet() -> None:
    """After the first interruption: a second Ctrl-C or SIGTERM while kbt prints its one line and
    exits must not add a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block SIGTERM raises KeyboardInterrupt, and so does Ctrl-C even when the command
    was started with SIGINT ignored (a background job): runners clean up on either and the CLI
    reports what was kept. The previous handlers come back afterwards."""
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with sigterm_interrupts():
            yield
    finally:
        signal.signal(signal.SIGINT, previous_int)
