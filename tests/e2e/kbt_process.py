"""kbt run as a user runs it, for the e2e tier: `python -m tuner ARGS` in a child process, its
output captured as text, within the tier's subprocess cap."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.unit.caps import SUBPROCESS_CAP_S


def user_env(**extra: str) -> dict[str, str]:
    """This environment without kbt's own variables (a KBT_* of the shell running the tests must not
    steer the run), with `extra`, on a terminal wide enough that kbt's lines do not wrap."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBT_")}
    env.update(extra)
    env["COLUMNS"] = "200"
    return env


def kbt(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = SUBPROCESS_CAP_S,
    module: str = "tuner",
) -> subprocess.CompletedProcess[str]:
    """`kbt ARGS` in `cwd` (None: this process's), with `env` (None: this process's environment);
    `module`: a script of kbt's run the same way (`python -m tuner.render.calibrate ARGS`)."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
