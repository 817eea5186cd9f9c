"""The runbook rehearsal's lab, booted ahead of it.

The rehearsal (tests/e2e/test_runbook.py) starts with the runbook's own `kbt lab up`; the light
install's test (test_light_install.py) reads the same lab as a team's cluster, before it. The same
command, with the same environment, is run in the background as soon as the e2e tier starts, so the
lab's boot and the minute its brokers' idle meters need to settle overlap the tier's earlier tests;
the rehearsal's `kbt lab up` then finds it running and healthy (as a second `kbt lab up` of a user
would) and its last block takes it down. A boot that failed is no harm: the rehearsal's own
`kbt lab up` cleans it up and starts afresh.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

LAB_FIXTURE = "runbook_lab_dir"  # the rehearsal's, and the light install's cluster
# clear of the integration tier's session lab (base) and secure lab (base + 400)
RUNBOOK_PORT_OFFSET = 800


def runbook_lab_env(lab_dir: Path) -> dict[str, str]:
    """The environment the rehearsal's lab commands run with."""
    base = int(os.environ.get("KBT_TEST_LAB_BASE_PORT", "19290")) + RUNBOOK_PORT_OFFSET
    return {**os.environ, "KBT_LAB_DIR": str(lab_dir), "KBT_LAB_BASE_PORT": str(base)}


class _RunbookLab:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="kbt-runbook-"))
        self.lab_dir = self.root / "lab"
        self.env = runbook_lab_env(self.lab_dir)
        self.booting = subprocess.Popen(
            [sys.executable, "-m", "tuner", "lab", "up"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def ready(self) -> Path:
        """The lab directory, once the background `kbt lab up` has ended (however it ended)."""
        try:
            self.booting.wait(timeout=300)
        except subprocess.TimeoutExpired:
            self.booting.kill()
            self.booting.wait()
        return self.lab_dir

    def down(self) -> None:
        self.ready()
        subprocess.run(
            [sys.executable, "-m", "tuner", "lab", "down", "--lab-dir", str(self.lab_dir)],
            env=self.env, capture_output=True, timeout=300,
        )  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)


_lab: _RunbookLab | None = None


def pytest_runtest_setup(item: pytest.Item) -> None:
    global _lab
    if _lab is None and any(LAB_FIXTURE in getattr(i, "fixturenames", ()) for i in item.session.items):
        _lab = _RunbookLab()


def pytest_sessionfinish() -> None:
    if _lab is not None:
        _lab.down()


@pytest.fixture
def runbook_lab_dir() -> Path:
    """Where the rehearsal's lab runs (its boot started with the tier)."""
    assert _lab is not None, "the runbook lab was not started with the e2e tier"
    lab_dir = _lab.ready()
    # Up whatever ran before: the rehearsal's last phase takes its lab down, and a test given the lab
    # after it gets it again (`kbt lab up` on a running, healthy lab returns at once).
    subprocess.run([sys.executable, "-m", "tuner", "lab", "up"], env=_lab.env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=600, check=True)  # fmt: skip
    return lab_dir
