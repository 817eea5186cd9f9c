"""The README's two commands start with `make install`: run it on a clean clone into a fresh virtual
environment, then check what the commands go on to need: `kbt --version` finds every component
and the unit tier collects. Bounded: it stops there (the demo and the suites have tests of their own).

A fresh OS image is out of reach here (no container engine), so the machine's caches stand in for
the network: pip's cache, Maven's repository, the Go module cache and the kbt cache (jars, built
engines) make a re-run take about half a minute. Debian packages are installed only when missing.

No lab and no clock: CI runs this module at nice 19 beside the integration tier (scripts/test_all.sh),
so a subprocess's timeout is a generous cap (tests/unit/caps.py), never a bound on its time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.cli.components import MISSING
from tuner.core.paths import repo_root

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (repo_root() / ".git").exists():
        pytest.skip("needs git and a git checkout to clone from")
    where = tmp_path_factory.mktemp("clean") / "kbt"
    proc = subprocess.run(
        ["git", "clone", "--quiet", "--no-local", str(repo_root()), str(where)],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_CAP_S,
    )
    assert proc.returncode == 0, proc.stderr
    return where


def _clean_env(venv: Path) -> dict[str, str]:
    """The caller's environment without anything pointing at this checkout or its Python."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "KBT_VENV", "PY", "PYTHON", "PYTEST"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["KBT_VENV"] = str(venv)
    return env


def test_make_install_on_a_clean_clone(clone: Path) -> None:
    venv = clone.parent / "venv"
    env = _clean_env(venv)
    install = _run(["make", "install"], clone, env, timeout=1800)
    assert install.returncode == 0, install.stderr[-3000:]
    assert re.search(r"install: ready in [\d.]+ s \(virtual environment:", install.stderr), install.stderr
    # Its own steps and times, not its tools' warnings (setuptools had a screen of them).
    noise = [line for line in install.stderr.splitlines() if not line.startswith("install: ")]
    assert noise == [], noise[:20]
    # A log, not a terminal: no colour codes (Maven wrote resets at exit despite style.color=never).
    assert "\x1b[" not in install.stdout + install.stderr, install.stdout[-2000:]

    python = venv / "bin" / "python"
    where = _run([str(python), "-c", "import tuner; print(tuner.__file__)"], Path("/"), env, SUBPROCESS_CAP_S)
    assert where.stdout.strip().startswith(str(clone)), where.stdout  # the clone's code, not ours

    version = _run([str(venv / "bin" / "kbt"), "--version"], clone, env, SUBPROCESS_CAP_S)
    assert version.returncode == 0, version.stderr
    lines = dict(line.split(None, 1) if " " in line else (line, "") for line in version.stdout.splitlines())
    assert version.stdout.startswith("kbt "), version.stdout
    missing = [line for line in version.stdout.splitlines() if MISSING in line]
    assert not missing, f"make install left components missing: {missing}"
    assert lines, version.stdout

    collect = _run(
        [str(python), "-m", "pytest", "--collect-only", "-q", "tests/unit"], clone, env, SUBPROCESS_CAP_S
    )
    assert collect.returncode == 0, collect.stdout[-3000:] + collect.stderr[-2000:]
    collected = [line for line in collect.stdout.splitlines() if "::" in line]
    assert len(collected) > 100, collect.stdout[-2000:]


def test_old_go_gets_the_toolchain_go_mod_asks_for(tmp_path: Path) -> None:
    """The path a Go older than 1.21 takes (Debian 12 ships 1.19), forced on whatever Go is here."""
    if shutil.which("go") is None:
        pytest.skip("no go command")
    go_mod = repo_root() / "loadtests" / "sarama-engine" / "go.mod"
    want = next(line.split()[1] for line in go_mod.read_text().splitlines() if line.startswith("go "))
    env = {**os.environ, "KBT_FORCE_GO_TOOLCHAIN": "1"}
    script = repo_root() / "scripts" / "go_toolchain.sh"
    proc = _run(["bash", str(script), str(go_mod), str(tmp_path)], tmp_path, env, SUBPROCESS_CAP_S)
    assert proc.returncode == 0, proc.stderr
    bin_dir = Path(proc.stdout.strip())
    assert bin_dir == tmp_path / f"go{want}" / "bin"
    version = _run(
        [str(bin_dir / "go"), "version"], tmp_path, {**env, "GOTOOLCHAIN": "local"}, SUBPROCESS_CAP_S
    )
    assert version.stdout.startswith(f"go version go{want} "), version.stdout + version.stderr
