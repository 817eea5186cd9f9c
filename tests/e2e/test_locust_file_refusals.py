"""loadtests/locustfile.py refusing at its start, run as a team runs it (`python -m locust -f ...`,
headless): a bad target file or a cluster that is not there is one `kbt:` line and kbt's exit code,
no traceback (the topics' creation raised inside locust's event handler, printed whole, and every
spawned user then failed on a load that never came), and a secret the target names never shown.
No cluster is needed: the brokers are a bound port that listens to nothing."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.bad_inputs import GOOD_SPEC
from tests.e2e.kbt_process import user_env
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root

pytestmark = pytest.mark.e2e

SECRET = "locust-s3cret-pw"
TARGET = """\
name: team
bootstrap_servers: [127.0.0.1:{port}]
client:
  properties:
    security.protocol: SASL_PLAINTEXT
    sasl.mechanism: PLAIN
    sasl.username: svc
    sasl.password: ${{KBT_E2E_LOCUST_PW}}
"""


def _locust(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = ["--headless", "-u", "2", "-r", "2", "--run-time", "5s", "--kbt-spec", "spec.yaml"]
    return subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(repo_root() / "loadtests" / "locustfile.py"), *args,
         "--kbt-target", "team.yaml"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


UNSET = 'kbt: team: client: "sasl.password" refers to ${{KBT_E2E_LOCUST_PW}}, which is not set'


@pytest.mark.parametrize(
    ("env", "status", "said"),
    [
        (
            {"KBT_E2E_LOCUST_PW": SECRET},
            ExitStatus.UNREACHABLE,
            "kbt: cannot reach 127.0.0.1:{port} (Connection refused)",
        ),
        ({}, ExitStatus.BAD_INPUT, UNSET),
    ],
)
def test_a_locust_run_that_cannot_start_says_why_in_one_line(
    env: dict[str, str], status: ExitStatus, said: str, tmp_path: Path
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        (tmp_path / "spec.yaml").write_text(GOOD_SPEC)
        (tmp_path / "team.yaml").write_text(TARGET.format(port=port))
        proc = _locust(tmp_path, user_env(**env))
    out = proc.stdout + proc.stderr
    assert proc.returncode == status, out
    errors = [line for line in out.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and said.format(port=port) in errors[0], out
    assert "Traceback" not in out and SECRET not in out
