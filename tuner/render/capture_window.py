"""The times the capture scripts (scripts/bench_capture.sh, scripts/pressure_loop.sh) point
`kbt diagnose` and `kbt compare` at, read through kbt's typed readers: a damaged capture.json or run
record is one line naming what is wrong (it was a KeyError or TypeError traceback of the script's
own JSON reading), never a time made up.

    python -m tuner.render.capture_window CAPTURE_DIR      # the capture's window end, epoch seconds
    python -m tuner.render.capture_window --runs RESULTS   # the earliest measured window end of its runs
"""

from __future__ import annotations

import sys
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.inputs import shown_path
from tuner.render.capture import read_capture
from tuner.render.script import run_script
from tuner.store import ResultsStore

USAGE = "python -m tuner.render.capture_window CAPTURE_DIR | --runs RESULTS_DIR"


def capture_end(capture: Path) -> float:
    """The end of the capture's window (its record validated, held to what a capture can be)."""
    record, _ = read_capture(capture)
    return record.end


def runs_end(results: Path) -> float:
    """The earliest end of a measured window among the run records under `results`."""
    records = ResultsStore(results).records()
    if not records:
        raise BadInput(f"{shown_path(results)}: no run records")
    return min(r.client.window_end for r in records)


def main(argv: list[str]) -> int:
    def work() -> int:
        print(runs_end(Path(argv[1])) if argv[0] == "--runs" else capture_end(Path(argv[0])))
        return 0

    fits = (len(argv) == 1 and not argv[0].startswith("-")) or (len(argv) == 2 and argv[0] == "--runs")
    return run_script(fits, USAGE, work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
