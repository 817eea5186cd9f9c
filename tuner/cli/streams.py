"""stdout and stderr that fail in one line: a full disk, a closed descriptor or an I/O error on
either is `kbt: error: cannot write to stdout: ...` (exit 4), never "Exception ignored" and exit
120 from the interpreter's last flush. A reader that went away (EPIPE) stays app.py's exit 141.

A failure is remembered (click probes a stream with an empty write and swallows what that
raises) and said once; then the stream's descriptor is pointed at /dev/null, so the text still
buffered for it (and the interpreter's flush at exit) goes nowhere instead of failing again.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any

from tuner.core.errors import EnvironmentProblem

_FDS = {"stdout": 1, "stderr": 2}
_failures: dict[str, str] = {}


def silence(name: str) -> None:
    """Point the descriptor of `name` at /dev/null."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != _FDS[name]:
            os.dup2(devnull, _FDS[name])
            os.close(devnull)


def _failed(name: str, exc: OSError) -> EnvironmentProblem:
    message = f"cannot write to {name}: {exc.strerror or exc}"
    _failures.setdefault(name, message)
    return EnvironmentProblem(_failures[name])


class Guarded:
    """A standard stream whose write and flush errors name the stream (EPIPE passes through)."""

    def __init__(self, stream: Any, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        return int(self._guarded(self._stream.write, text))

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def _guarded(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(self._name, exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Closed(io.TextIOBase):
    """What stands for a standard stream kbt was started without (`kbt ... >&-`): writing text to
    it is the error a closed descriptor gives, once."""

    def __init__(self, name: str) -> None:
        self._name = name

    def write(self, text: str) -> int:
        if text:
            raise _failed(self._name, OSError(9, f"{self._name} is closed"))
        return 0

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return _FDS[self._name]


def guard() -> None:
    """Both standard streams guarded; a closed one opened on /dev/null (so no file kbt opens takes
    its number) and stood for by Closed (stdout) or dropped (stderr: nowhere to say anything)."""
    for name, fd in _FDS.items():
        try:
            os.fstat(fd)
            closed = getattr(sys, name) is None
        except OSError:
            closed = True
        if closed:
            silence(name)
            setattr(sys, name, Closed(name) if name == "stdout" else open(os.devnull, "w"))  # noqa: SIM115
        else:
            setattr(sys, name, Guarded(getattr(sys, name), name))


def flush_stdout() -> None:
    """The buffered output written now, inside the error handling (not by the interpreter at exit);
    EnvironmentProblem when stdout failed at any time, even where a library swallowed the error."""
    sys.stdout.flush()
    if "stdout" in _failures:
        raise EnvironmentProblem(_failures["stdout"])


def say(text: str) -> None:
    """Write to stderr; a stderr that cannot take it is silenced (the exit status still says it).
    A stream that failed is silenced first: nothing more is written to it."""
    for name in list(_failures):
        silence(name)
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, EnvironmentProblem):
        silence("stderr")
