"""The CLI's one signal helper: SIGTERM and Ctrl-C stop a long command the same way."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _sigterm_as_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block SIGTERM raises KeyboardInterrupt, and so does Ctrl-C even when the command
    was started with SIGINT ignored (a background job): runners clean up on either and the CLI
    reports what was kept. The previous handlers come back afterwards."""
    previous = signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
