"""Exit codes, the one exception type the CLI turns into a one-line error, and its wording."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from tuner.core.numbers import cut_text, cut_value
from tuner.core.redact import scrub
from tuner.core.text import one_line


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


def field_message(err: Any, noun: str = "key", secret: bool = False) -> str:
    """One pydantic error in kbt's words (never pydantic's "String should have ..."): `noun` is what
    the file calls a setting (Filebeat: option); a `secret` setting's value is never shown."""
    kind, msg, value, ctx = err["type"], str(err["msg"]), err.get("input"), err.get("ctx") or {}
    if kind == "missing":
        return f"missing required {noun}"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "literal_error":  # pydantic quotes a string choice, not an integer one
        expected = [a or b for a, b in re.findall(r"'([^']*)'|(-?\d+)", str(ctx.get("expected", "")))]
        hint = "" if secret else did_you_mean(str(value), expected).strip(" ()")
        shown = "a secret" if secret else f'"{cut_text(str(value))}"'
        return f"unknown value {shown} (expected one of {', '.join(expected)}{'; ' + hint if hint else ''})"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        if kind == "union_tag_not_found":
            # pydantic quotes the discriminator ("'kind'") and names no tags for a missing one
            key = str(ctx.get("discriminator", "kind")).strip("'")
            return f'missing "{key}"' + (f" (one of {', '.join(expected)})" if expected else "")
        hint = did_you_mean(str(ctx.get("tag")), expected).strip(" ()")
        return (
            f'unknown kind "{ctx.get("tag")}" (expected one of {", ".join(expected)}'
            f"{'; ' + hint if hint else ''})"
        )
    if kind == "extra_forbidden":  # normally caught earlier by StrictModel with a hint
        return f"unknown {noun}"
    # the value is echoed when it is a plain scalar; for a yes/no or number setting, whatever it is
    echo = isinstance(value, str | int | float) and not isinstance(value, bool)
    if kind in ("model_type", "dict_type"):
        text = f"must be a mapping of {noun}s"
    elif kind == "list_type":
        text = "must be a list"
    elif kind == "too_short" and ctx.get("min_length") == 1:
        text = "must not be empty"
    elif kind.startswith("bool"):
        text, echo = "must be true or false", True
    elif kind.startswith(("int_", "float_")):
        text, echo = f"must be {'an integer' if kind.startswith('int') else 'a number'}", True
    else:
        text = reworded(msg)
    if kind == "string_too_long" or secret or not echo or "(got " in text:
        return text  # a long string is long by definition, and may be a secret: not echoed
    return f"{text} (got {shown_value(value)})"


def reworded(msg: str) -> str:
    """pydantic's "Input should be ..." (and its kin) in kbt's words: "must be ..."."""
    for theirs in ("Input should", "String should", "List should", "Dictionary should", "Tuple should"):
        msg = msg.replace(theirs, "must")
    return msg


def shown_value(value: object) -> str:
    """A value as an error echoes it: a string quoted, anything cut to its first 40 characters."""
    return cut_value(value) if isinstance(value, str) else cut_text(repr(value))
