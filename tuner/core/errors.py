"""Exit codes and the one exception type the CLI turns into a one-line error."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import IntEnum


class ExitStatus(IntEnum):
    """Every exit code kbt uses. Documented in docs/errors.md."""

    OK = 0
    FAILURE = 1  # a run failed (records lost, a check found a problem)
    BAD_INPUT = 2  # bad flag, spec, profile or file
    NO_SOLUTION = 3  # no setting meets the SLO
    ENVIRONMENT = 4  # missing Java/Prometheus, occupied port, unwritable directory
    UNREACHABLE = 5  # a broker or Prometheus could not be reached
    REFUSED = 6  # forecast: the cost model cannot reproduce today's measurement (or nothing was measured)
    WARNING = 10  # diagnose: warning
    CRITICAL = 11  # diagnose: critical
    INTERRUPTED = 130  # Ctrl-C / SIGTERM / SIGHUP
    BROKEN_PIPE = 141  # the reader of stdout went away (`kbt ... | head -c1`): 128 + SIGPIPE, silent


class KbtError(Exception):
    """An expected failure: shown as one line, mapped to an exit code, never a traceback."""

    status: ExitStatus = ExitStatus.FAILURE

    def __init__(self, message: str, status: ExitStatus | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def message(self) -> str:
        """The message on one line (line breaks and control characters a user or a server put in a
        value are shown escaped, a long value is cut), with every secret scrubbed out."""
        from tuner.core.redact import scrub
        from tuner.core.text import one_line

        text = str(self.args[0]) if self.args else self.__class__.__name__
        return one_line(scrub(text))


class BadInput(KbtError):
    status = ExitStatus.BAD_INPUT


class EnvironmentProblem(KbtError):
    status = ExitStatus.ENVIRONMENT


class Unreachable(KbtError):
    status = ExitStatus.UNREACHABLE


class NoSolution(KbtError):
    status = ExitStatus.NO_SOLUTION


class Interrupted(KbtError):
    status = ExitStatus.INTERRUPTED


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean "x"?)' for the closest choice, or '' when nothing is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""
