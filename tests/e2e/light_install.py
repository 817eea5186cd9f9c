"""The README's light start built: `make install-light` (kbt alone in a venv) on a clean clone.

Two modules use it. test_light_install_build.py builds it and checks the install's own line: no lab
and no clock, so CI runs it at nice 19 beside the integration tier (scripts/test_all.sh), into
KBT_TEST_LIGHT_DIR. test_light_install.py then diagnoses the runbook's lab from that venv in step 3,
or builds one of its own first when KBT_TEST_LIGHT_DIR holds no finished build (run alone).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.core.paths import repo_root

LIGHT_DIR_ENV = "KBT_TEST_LIGHT_DIR"
BUILT = ".built"  # written once the build and its checks passed


def light_dir() -> Path | None:
    """Where CI builds the light venv for both modules (KBT_TEST_LIGHT_DIR), if it says."""
    where = os.environ.get(LIGHT_DIR_ENV)
    return Path(where) if where else None


def built_venv(root: Path) -> Path | None:
    """The venv of a build under root that finished and passed its checks, if there is one."""
    return root / "venv" if (root / BUILT).is_file() else None


def build_light_venv(root: Path) -> Path:
    """Clone this checkout into root/kbt, `make install-light VENV=root/venv` there, check its line."""
    if shutil.which("git") is None or not (repo_root() / ".git").exists():
        pytest.skip("needs git and a git checkout to clone from")
    clone, venv = root / "kbt", root / "venv"
    for old in (root / BUILT, clone, venv):  # a fresh build, whatever an earlier one left
        if old.is_dir():
            shutil.rmtree(old)
        old.unlink(missing_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    cloned = subprocess.run(["git", "clone", "--quiet", "--no-local", str(repo_root()), str(clone)],
                            capture_output=True, text=True, timeout=SUBPROCESS_CAP_S)  # fmt: skip
    assert cloned.returncode == 0, cloned.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    installed = subprocess.run(["make", "install-light", f"VENV={venv}"], cwd=clone, env=env,
                               capture_output=True, text=True, timeout=900)  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert f"install-light: ready: {venv}/bin/kbt" in installed.stdout, installed.stdout
    (root / BUILT).write_text(installed.stdout)
    return venv
