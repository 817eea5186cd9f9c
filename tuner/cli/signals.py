"""SIGTERM means what Ctrl-C means, for every command: stop, keep what is complete, print one line,
exit 130 (docs/errors.md). Without this a terminated kbt died silently with 143 unless the command
had installed its own handler (sweep, stress and chaos do, and restore this one after)."""

from __future__ import annotations

import signal
from types import FrameType


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def install() -> None:
    signal.signal(signal.SIGTERM, _sigterm)


def quiet() -> None:
    """After the first interruption: a second Ctrl-C or SIGTERM while kbt prints its one line and
    exits must not add a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
