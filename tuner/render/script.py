"""The entry of a render module run as a script (`python -m tuner.render.<name>`, as scripts/ and
docs/ run them): its arguments checked against its usage line, and a BadInput shown as one line on
stderr with the prefix kbt's own commands use, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tuner.core.errors import BadInput, ExitStatus


def run_script(fits: bool, usage: str, work: Callable[[], int]) -> int:
    """`work`'s exit code; 2 with `usage` on stderr when the arguments don't fit it, or with the
    message of the BadInput `work` raised."""
    if not fits:
        print(f"usage: {usage}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    try:
        return work()
    except BadInput as exc:
        print(f"kbt: error: {exc.message}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
