"""`--target FILE` on `kbt recommend --live`, `kbt forecast` and `kbt report` as subprocesses: a bad
target file, a target that is not on loopback without --yes, a capped target, an unreachable
cluster or Prometheus, and conflicting flags are each one line and an exit code, with nothing
created (no results, no recommendation, no report). Loopback only: unreachable means a closed
port on 127.0.0.1; the non-loopback name is never contacted (refused before any connection)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.core.errors import ExitStatus
from tuner.model.cost import BrokerCostModel, LinearFit

pytestmark = pytest.mark.e2e

SPEC = """\
name: flags
workload:
  name: fl
  topics: [{name: fl, partitions: 1}]
  producers: 1
  rate_per_producer: 100
  message: {kind: generated, bytes: 512}
  duration_s: 4
  warmup_s: 1
profiles:
  - {name: l5, linger_ms: 5}
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kbt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tuner", *args],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_CAP_S,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )


def _one_line_error(proc: subprocess.CompletedProcess[str], status: ExitStatus, needle: str) -> None:
    assert proc.returncode == int(status), (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kbt: error: "), proc.stderr
    assert needle in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout


def _target(directory: Path, name: str, body: str) -> str:
    path = directory / f"{name}.yaml"
    path.write_text(f"name: {name}\n{body}")
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    port = _closed_port()
    (tmp_path / "spec.yaml").write_text(SPEC)
    fit = LinearFit(requests_coef=1e-3, bytes_coef=0.0, intercept=0.0, r2=0.95, n=9, rmse=0.01)
    (tmp_path / "model.json").write_text(BrokerCostModel(network=fit, handler=fit).model_dump_json())
    (tmp_path / "results").mkdir()
    prom = f'prometheus: {{url: "http://127.0.0.1:{port}"}}\n'
    return {
        "spec": str(tmp_path / "spec.yaml"),
        "model": str(tmp_path / "model.json"),
        "results": str(tmp_path / "results"),
        "typo": _target(tmp_path, "typo", "bootstrap_server: [127.0.0.1:9092]\n"),
        "remote": _target(tmp_path, "remote", "bootstrap_servers: [kafka.example.invalid:9092]\n"),
        "capped": _target(
            tmp_path, "capped", f"bootstrap_servers: [127.0.0.1:{port}]\nlimits: {{max_msgs_per_s: 50}}\n"
        ),
        "closed": _target(tmp_path, "closed", f"bootstrap_servers: [127.0.0.1:{port}]\n{prom}"),
        "noprom": _target(tmp_path, "noprom", f"bootstrap_servers: [127.0.0.1:{port}]\n"),
    }


def _created(cwd: Path) -> set[str]:
    return (
        {p.name for p in cwd.iterdir()}
        - {"spec.yaml", "model.json", "results"}
        - {p.name for p in cwd.glob("*.yaml")}
    )


def test_recommend_live_target_refusals(files: dict[str, str], tmp_path: Path) -> None:
    results = ("recommend", "--results", files["results"])
    live = (*results, "--live", files["spec"], "--max-trials", "1")
    cases = [
        ((*live, "--target", files["typo"]), ExitStatus.BAD_INPUT, 'did you mean "bootstrap_servers"'),
        ((*live, "--target", files["remote"]), ExitStatus.BAD_INPUT, "refusing to send load without --yes"),
        ((*live, "--target", files["capped"]), ExitStatus.BAD_INPUT, "over capped's cap of 50"),
        ((*live, "--target", files["closed"], "--yes"), ExitStatus.UNREACHABLE, "cannot reach 127.0.0.1:"),
        ((*results, "--target", files["closed"]), ExitStatus.BAD_INPUT, "give it with --live SPEC"),
    ]
    for args, status, needle in cases:
        _one_line_error(kbt(*args, cwd=tmp_path), status, needle)
    assert list(Path(files["results"]).iterdir()) == []
    assert _created(tmp_path) == set(), "a refused run created files (out/recommend?)"


def test_forecast_and_report_target_refusals(files: dict[str, str], tmp_path: Path) -> None:
    forecast = ("forecast", "--cost-model", files["model"], "--json", "fc.json")
    report = ("report", "--results", files["results"], "--out", "report.html")
    cases = [
        ((*forecast, "--target", files["typo"]), ExitStatus.BAD_INPUT, 'did you mean "bootstrap_servers"'),
        ((*forecast, "--target", files["noprom"]), ExitStatus.BAD_INPUT, "names no Prometheus"),
        ((*forecast, "--target", files["closed"]), ExitStatus.UNREACHABLE, "127.0.0.1"),
        ((*forecast, "--target", files["closed"], "--diagnosis", "d.json"), ExitStatus.BAD_INPUT, "not both"),
        ((*forecast, "--target", files["closed"], "--window", "soon"), ExitStatus.BAD_INPUT, "--window"),
        ((*report, "--target", files["typo"]), ExitStatus.BAD_INPUT, 'did you mean "bootstrap_servers"'),
        ((*report, "--target", files["closed"]), ExitStatus.UNREACHABLE, "127.0.0.1"),
        (
            (*report, "--target", files["closed"], "--prometheus", "http://127.0.0.1:1"),
            ExitStatus.BAD_INPUT,
            "one of --prometheus, --lab-dir and --target",
        ),
    ]
    for args, status, needle in cases:
        _one_line_error(kbt(*args, cwd=tmp_path), status, needle)
    assert _created(tmp_path) == set(), "a refused command wrote its output"
