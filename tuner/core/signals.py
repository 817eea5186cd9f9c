"""SIGTERM stops kbt the way Ctrl-C does: one handler, for the CLI (every command) and for the
drivers that run their own client processes (a terminated run stops its pods and removes its files)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def sigterm_as_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block SIGTERM raises KeyboardInterrupt; the previous handler comes back afterwards.
    Outside the main thread (where no handler can be set) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, sigterm_as_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
