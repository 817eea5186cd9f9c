"""What the multi-step bench scripts (bench_recommend.py, bench_p2.py) share: running kbt as a
subprocess, logging each step's minutes and the machine's load beside it, and a lab of their own
unless one is given."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kbt(*args: str, ok: tuple[int, ...] = (0,)) -> int:
    code = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=ROOT).returncode
    if code not in ok:
        raise SystemExit(f"kbt {' '.join(args)} exited {code}")
    return code


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


@contextlib.contextmanager
def lab(given: Path | None, own_dir: Path, base_port: int) -> Iterator[list[str]]:
    """The `--lab-dir` arguments of a given running lab, or of one started in `own_dir` for the
    block and taken down after it."""
    lab_dir = given or own_dir
    if given is None:
        kbt("lab", "up", "--lab-dir", str(lab_dir), "--base-port", str(base_port))
    try:
        yield ["--lab-dir", str(lab_dir)]
    finally:
        if given is None:
            kbt("lab", "down", "--lab-dir", str(lab_dir))
