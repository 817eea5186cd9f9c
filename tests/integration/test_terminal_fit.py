"""`kbt sweep` in a real pseudo-terminal 100 columns wide, against the session lab: every line it
draws (the progress line with the live figures, the final table) fits the 100 columns; a run name
too long for the table is shortened there with a mark and listed in full below it, never split
across lines (the same table in a pipe: tests/unit/test_fit.py)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tuner.lab import LabState

pytestmark = pytest.mark.integration

COLUMNS = 100
NAME = "terminal-fit-librdkafka-l5ms-long-name"
SPEC = f"""\
name: tf
workload:
  name: tf
  topics: [{{name: tf, partitions: 1}}]
  producers: 1
  rate_per_producer: 200
  message: {{kind: generated, bytes: 256}}
  duration_s: 5
  warmup_s: 1
profiles:
  - {{name: {NAME}, client: librdkafka, linger_ms: 5, acks: all}}
"""
_CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _in_a_terminal(argv: list[str], cwd: Path, timeout_s: float = 240) -> tuple[int, str]:
    """Run argv with a pseudo-terminal of COLUMNS x 40 as its stdin, stdout and stderr."""
    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, COLUMNS, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, cwd=cwd, env=env)
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    data = os.read(main, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
        status = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    return status, b"".join(chunks).decode("utf-8", "replace")


def _screen_lines(raw: str) -> list[str]:
    """What the terminal shows, line by line: escape sequences dropped, each carriage return
    starting the line over."""
    return [_CSI.sub("", line).split("\r")[-1] for line in raw.replace("\r\n", "\n").split("\n")]


def test_sweep_fits_a_100_column_terminal(lab: LabState, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    argv = [sys.executable, "-m", "tuner", "sweep", "spec.yaml", "--lab-dir", str(lab.lab_dir)]
    status, raw = _in_a_terminal([*argv, "--results", "results"], tmp_path)
    (tmp_path / "screen.txt").write_text(raw)
    assert status == 0, raw
    segments = [_CSI.sub("", s) for line in raw.split("\n") for s in line.split("\r")]
    too_wide = [s for s in segments if len(s.rstrip()) > COLUMNS]
    assert not too_wide, too_wide
    lines = _screen_lines(raw)
    assert any("req/s" in s and "t=" in s for s in segments), "no live figures were drawn"
    rows = [s for s in lines if "[1]" in s and "…" in s]
    assert rows, "the long run name was not shortened in the table"
    assert f"[1] tf/{NAME}" in lines or f"[1] {NAME}" in [s.strip() for s in lines], lines[-12:]
