"""A pytest session ended by SIGTERM still runs its session teardown (tests/conftest.py), which is
where the integration and chaos tiers stop the labs they started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SESSION = """
import time
from pathlib import Path

import pytest

MARKS = Path({marks!r})


@pytest.fixture(scope="session")
def lab():
    (MARKS / "up").touch()
    yield
    (MARKS / "down").touch()


def test_waits(lab):
    time.sleep(60)
"""


def test_a_terminated_session_tears_down_what_it_started(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "test_session.py").write_text(SESSION.format(marks=str(marks)))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.conftest",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_session.py"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not (marks / "up").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the session never set up"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert (marks / "down").exists(), out.decode(errors="replace")
    assert proc.returncode != 0  # interrupted, not passed
