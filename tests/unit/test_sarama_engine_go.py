"""The Go engine's own tests (memory queue semantics, partitioners, event sizing): `go test`."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tuner.core.paths import repo_root


def test_sarama_engine_go_tests_pass() -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed (make install builds the engine and installs Go)")
    module = repo_root() / "loadtests" / "sarama-engine"
    done = subprocess.run(
        [go, "test", "-count=1", "./..."],
        cwd=module,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "GOFLAGS": "-mod=readonly"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
