"""`kbt render filebeat --out DIR` as a subprocess: it writes the profiles, says so, says when they
are already up to date, and `--check` fails on a stale copy without writing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _render(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tuner", "render", "filebeat", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_render_writes_then_reports_up_to_date_and_check_finds_a_stale_file(tmp_path: Path) -> None:
    first = _render("--out", str(tmp_path))
    assert first.returncode == 0, first.stderr
    written = sorted(p for p in tmp_path.iterdir() if p.suffix == ".yml")
    files = len(list(tmp_path.iterdir()))  # the profiles and their README
    assert written and first.stdout.count("wrote ") == files, first.stdout

    again = _render("--out", str(tmp_path))
    assert again.returncode == 0 and again.stdout.strip() == f"{files} files up to date", again.stdout

    written[0].write_text(written[0].read_text() + "# edited\n")
    check = _render("--out", str(tmp_path), "--check")
    assert check.returncode == 1 and f"stale: {written[0]}" in check.stderr, check.stderr
    assert written[0].read_text().endswith("# edited\n")  # --check writes nothing
