"""The entry of a render module run as a script (`python -m tuner.render.<name>`, as scripts/ and
docs/ run them): its arguments checked against its usage line, and any KbtError (a bad input, an
unwritable output directory) shown as one line on stderr with the prefix kbt's own commands use,
never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tuner.core.errors import ExitStatus, KbtError


def run_script(fits: bool, usage: str, work: Callable[[], int]) -> int:
    """`work`'s exit code; 2 with `usage` on stderr when the arguments don't fit it; the status and
    the one-line message of the KbtError `work` raised (2 for a BadInput)."""
    if not fits:
        print(f"usage: {usage}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    try:
        return work()
    except KbtError as exc:
        print(f"kbt: error: {exc.message}", file=sys.stderr)
        return exc.status
