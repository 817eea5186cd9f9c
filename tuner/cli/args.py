"""One argument shape across commands.

- The results directory is `--results DIR` everywhere; the older positional form of recommend,
  report and forecast still works, with a note on stderr.
- Lists take a repeated flag, a comma list, or both: `--client filebeat --client java` is
  `--client filebeat,java`.
- Time windows are durations such as 90s, 5m, 1h30m (or plain seconds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from tuner.core.errors import BadInput


def positional_results() -> Path | None:
    return typer.Argument(
        None, hidden=True, metavar="[RESULTS]", help="Deprecated: the results directory; use --results."
    )


def results_dir(option: Path | None, positional: Path | None, default: Path | None = None) -> Path | None:
    """The results directory from --results or, deprecated, the positional argument."""
    if positional is not None:
        if option is not None and option != default and option != positional:
            raise BadInput(f"two results directories: {positional} and --results {option}")
        sys.stderr.write(f"kbt: note: RESULTS as an argument is deprecated; use --results {positional}\n")
        return positional
    return option if option is not None else default


def list_values(values: list[str] | None) -> list[str]:
    """Repeated flags and comma lists, flattened, stripped, without duplicates, in order."""
    items = (item.strip() for value in values or [] for item in value.split(","))
    return list(dict.fromkeys(item for item in items if item))
