"""What the benchmarks share: their `--help` (what a figure is, which docs/benchmarks.md section it
feeds), running kbt as a subprocess (the CLI a user runs), logging each step's minutes beside the
machine's load, a line per run of a sweep driven in-process, a lab of their own unless one is given
(`kbt lab up` / `kbt lab down`), run records read from results directories, and the Markdown a
report is printed and written as."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tuner.core.paths import repo_root
from tuner.lab import load_state
from tuner.lab.state import LabState
from tuner.runner.lifecycle import Observer
from tuner.spec.sweep import RunPlan
from tuner.store.recommendation import load_recommendation
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

ROOT = repo_root()
KBT = (sys.executable, "-m", "tuner")  # the CLI, as `kbt` runs it, from this checkout
ANY_EXIT: tuple[int, ...] = ()  # `ok=ANY_EXIT`: whatever the command exits with is accepted


def arguments(doc: str | None, feeds: str) -> argparse.ArgumentParser:
    """The benchmark's argument parser: `--help` prints its module docstring (what it measures and
    how) and the docs/benchmarks.md section its figures feed."""
    name = Path(sys.argv[0]).stem
    return argparse.ArgumentParser(
        prog=f"python -m bench.{name}",
        description=doc,
        epilog=f"Feeds docs/benchmarks.md: {feeds}. Every benchmark, its time and needs: bench/README.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def kbt(*args: str, ok: tuple[int, ...] = (0,), quiet: bool = False) -> int:
    """`kbt *args` from the checkout; SystemExit when it exits with a code not in `ok` (with its
    stderr when `quiet` kept its output)."""
    proc = subprocess.run([*KBT, *args], cwd=ROOT, capture_output=quiet, text=True)
    if ok and proc.returncode not in ok:
        said = f": {proc.stderr.strip()}" if quiet and proc.stderr else ""
        raise SystemExit(f"kbt {' '.join(args)} exited {proc.returncode}{said}")
    return proc.returncode


def kbt_json(*args: str, ok: tuple[int, ...] = (0,), timeout_s: float = 600) -> tuple[int, Any]:
    """`kbt *args --json -`: its exit code and the JSON it printed."""
    proc = subprocess.run([*KBT, *args, "--json", "-"], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout_s)  # fmt: skip
    if proc.returncode not in ok:
        raise SystemExit(f"kbt {' '.join(args)}: {proc.stderr.strip()}")
    return proc.returncode, json.loads(proc.stdout)


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def timed_step(log: list[str], name: str, *args: str, ok: tuple[int, ...] = (0,)) -> None:
    """`kbt *args`, with its minutes and the 1-minute load average before and after in `log`: the
    machine may be shared, so a figure is read beside the load it was measured under."""
    before, start = loadavg(), time.monotonic()
    kbt(*args, ok=ok)
    log.append(
        f"{name}: {(time.monotonic() - start) / 60:.1f} min, load average {before:.1f} -> {loadavg():.1f}"
    )


@dataclass(frozen=True)
class LabAt:
    """A running lab: its directory, and the `--lab-dir` arguments kbt takes for it."""

    dir: Path

    @property
    def args(self) -> list[str]:
        return ["--lab-dir", str(self.dir)]

    def state(self) -> LabState:
        return load_state(self.dir)


@contextlib.contextmanager
def lab(given: Path | None, own_dir: Path, base_port: int, *up: str) -> Iterator[LabAt]:
    """A given running lab, or one started in `own_dir` for the block (`kbt lab up --base-port
    base_port *up`, e.g. `--brokers 1`, `--profile pressure`) and taken down after it."""
    lab_dir = given or own_dir
    if given is None:
        kbt("lab", "up", "--lab-dir", str(lab_dir), "--base-port", str(base_port), *up)
    try:
        yield LabAt(lab_dir)
    finally:
        if given is None:
            kbt("lab", "down", "--lab-dir", str(lab_dir))


def read_records(directories: Iterable[Path], prog: str) -> list[RunRecord] | None:
    """Every run record under the directories; None (said on stderr) when one is not a directory."""
    records: list[RunRecord] = []
    for directory in directories:
        if not directory.is_dir():
            print(f"{prog}: {directory}: not a directory", file=sys.stderr)
            return None
        records += ResultsStore(directory).records()
    return records


def newest_recommendation(out: Path) -> Any:
    """The newest recommendation `kbt recommend --out out` wrote, or None."""
    found = sorted(out.glob("*/recommendation.json"), key=lambda p: p.stat().st_mtime)
    return load_recommendation(found[-1]) if found else None


def ms(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} ms"


def emit(parts: Sequence[Sequence[str]], markdown: Path | None) -> None:
    """The report's parts (each a list of lines), a blank line between them: printed, and written
    to `markdown` when one is given."""
    text = "\n\n".join("\n".join(p) for p in parts) + "\n"
    print(text)
    if markdown is not None:
        markdown.write_text(text)


class RunLines(Observer):
    """One line per run on stderr for a sweep a benchmark drives in-process: it runs for minutes."""

    def __init__(self) -> None:
        self.total, self.done, self.started = 0, 0, time.monotonic()

    def sweep_started(self, runs: list[RunPlan], skipped: list[RunPlan]) -> None:
        self.total = len(runs)

    def run_started(self, plan: RunPlan) -> None:
        print(f"[{self.done + 1}/{self.total}] {plan.name} ...", file=sys.stderr, flush=True)

    def run_finished(self, plan: RunPlan, record: RunRecord, path: str) -> None:
        self.done += 1
        minutes = (time.monotonic() - self.started) / 60
        line = f"[{self.done}/{self.total}] {plan.name}: {record.status} ({minutes:.1f} min in)"
        print(line, file=sys.stderr, flush=True)
