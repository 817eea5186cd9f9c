"""Headless Chromium (Debian `chromium`) for report tests: load an HTML file, return its DOM after
the load event, its console output, and a screenshot. Skips with the install hint when absent."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]? ?(.*)$")
TIMEOUT_S = 300


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("headless Chromium not installed: run 'KBT_WITH_CHROMIUM=1 make install' (Debian chromium)")


@dataclass(frozen=True)
class Page:
    dom: str
    console: list[str]  # every console message the page produced (errors, logs, failed loads)


def _run(
    page: Path, work: Path, extra: list[str], width: int, height: int
) -> subprocess.CompletedProcess[str]:
    cmd = [
        chromium_binary(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
        f"--user-data-dir={work / 'profile'}", f"--window-size={width},{height}",
        "--virtual-time-budget=15000", *extra, page.resolve().as_uri(),
    ]  # fmt: skip
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={"HOME": str(work), "PATH": "/usr/bin:/bin"},
    )


def load(page: Path, work: Path, width: int = 1400) -> Page:
    proc = _run(page, work, ["--dump-dom"], width, 1000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [m.group(1) for line in proc.stderr.splitlines() if (m := CONSOLE.search(line))]
    return Page(dom=proc.stdout, console=console)


def screenshot(page: Path, work: Path, out: Path, width: int, height: int) -> Path:
    proc = _run(page, work, [f"--screenshot={out}"], width, height)
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return out
