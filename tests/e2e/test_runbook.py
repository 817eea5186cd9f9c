"""The runbook's commands run as written: every ```bash runnable block of docs/runbook/, in phase
order, as one bash script against a lab the script itself brings up (and takes down).

The full rehearsal swaps the three long specs for short ones through the environment variables the
runbook documents (COST_SWEEP, STRESS_SPEC, CANARY_SWEEP); every command is otherwise the page's.
The short stress spec has one step and no lagging group: lagging readers on the remote tier are
tested in tests/integration/test_stress.py.
A fast check runs without a lab: each `kbt ...` command in a runnable block exists with its flags.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import runbook_lab_env
from tuner.core.paths import repo_root

pytestmark = pytest.mark.e2e

RUNBOOK = repo_root() / "docs" / "runbook"
PHASES = ["prepare", "execute", "analyze", "rollout", "rollback"]
BLOCK = re.compile(r"^```bash runnable\n(.*?)^```", re.DOTALL | re.MULTILINE)
LOADTESTS = repo_root() / "loadtests"


def runnable_blocks() -> list[tuple[str, str]]:
    out = []
    for phase in PHASES:
        text = (RUNBOOK / f"{phase}.md").read_text(encoding="utf-8")
        out += [(phase, block) for block in BLOCK.findall(text)]
    return out


def test_every_phase_is_indexed_and_has_runnable_commands() -> None:
    readme = (RUNBOOK / "README.md").read_text(encoding="utf-8")
    blocks = runnable_blocks()
    for phase in PHASES:
        assert f"({phase}.md)" in readme, f"README does not link {phase}.md"
        assert any(p == phase for p, _ in blocks), f"{phase}.md has no runnable block"
    pages = sorted(p.stem for p in RUNBOOK.glob("*.md"))
    assert pages == sorted([*PHASES, "README"])


KBT_CALL = re.compile(r"(?:^|\$\(|&&|\|\||;)\s*(kbt\s[^|;)]*)")


def _kbt_commands() -> list[list[str]]:
    """Each `kbt ...` call in the runnable blocks, up to a pipe, `||`, `;` or `)`."""
    commands = []
    for _, block in runnable_blocks():
        for line in block.replace("\\\n", " ").splitlines():
            for call in KBT_CALL.findall(line.strip()):
                commands.append(shlex.split(call))
    return commands


def test_each_kbt_command_and_flag_exists() -> None:
    commands = _kbt_commands()
    assert len(commands) >= 10
    helps: dict[tuple[str, ...], str] = {}  # one `--help` per command, however often the pages use it
    for words in commands:
        depth = 2 if words[1] in ("lab", "render", "check", "target") else 1
        path = tuple(words[1 : 1 + depth])
        flags = [w.split("=")[0] for w in words if w.startswith("--")]
        if path not in helps:
            proc = subprocess.run(
                [sys.executable, "-m", "tuner", *path, "--help"],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "COLUMNS": "300"},
            )
            assert proc.returncode == 0, f"kbt {' '.join(path)}: {proc.stderr}"
            helps[path] = proc.stdout
        for flag in flags:
            assert flag in helps[path], f"kbt {' '.join(path)} has no {flag}"


COST_SWEEP = f"""\
name: cost-model
workload: {LOADTESTS}/workloads/qunar-logs.yaml
profiles: [{LOADTESTS}/profiles/filebeat-like.yaml]
runs:
  - {{profile.linger_ms: 0, profile.compression: gzip, workload.rate_per_producer: 40,
      workload.duration_s: 12, workload.warmup_s: 2}}
  - {{profile.linger_ms: 20, profile.compression: none, profile.compression_level: null,
      workload.rate_per_producer: 40, workload.duration_s: 12, workload.warmup_s: 2}}
  - {{profile.linger_ms: 500, profile.compression: zstd, workload.rate_per_producer: 20,
      workload.duration_s: 12, workload.warmup_s: 2}}
name_format: "linger{{linger_ms}}-{{compression}}-rate{{rate_per_producer}}"
slo: {{p99_ms: 2000}}
"""

STRESS_SPEC = f"""\
name: rehearsal-peak
workload:
  name: rehearsal
  topics: [{{name: rehearsal-peak, partitions: 6, replication_factor: 3}}]
  producers: 8
  rate_per_producer: 10
  message: {{kind: generated, bytes: 1000}}
  duration_s: 10
topic_configs: {{remote.storage.enable: true, segment.ms: 3000, local.retention.ms: 3000}}
profiles:
  current: {LOADTESTS}/profiles/filebeat-like.yaml
  recommended: {LOADTESTS}/profiles/batched-zstd.yaml
shape: {{steps: [1], step_s: 14, drain_s: 8, settle_s: 2}}
consumer_groups: [{{name: rt, mode: realtime}}]
gates: {{network_idle_min: 0.05, p99_ms: 20000, on_fail: continue}}
"""

CANARY_SWEEP = f"""\
name: filebeat-small-logs
workload: {LOADTESTS}/workloads/qunar-logs.yaml
profiles:
  - {LOADTESTS}/profiles/filebeat-default.yaml
  - {LOADTESTS}/profiles/filebeat-small-logs.yaml
runs:
  - {{profile: filebeat-default, workload.duration_s: 16, workload.warmup_s: 3}}
  - {{profile: filebeat-small-logs, workload.duration_s: 16, workload.warmup_s: 3}}
name_format: "{{profile}}"
"""


def _check_forecast(forecast: dict[str, Any]) -> None:
    """The current settings show no more idle today than the baseline measured, and no row needs
    fewer brokers than the topics' replication factor (3, given with --replication-factor)."""
    (today,) = forecast["today"]  # the diagnosis measured the current settings only
    lowest = min(b["network_idle_measured"] for b in today["brokers"])
    assert any(p["pool"] == "network" for p in today["pools"]), today
    current = next(r for r in forecast["rows"] if r["role"] == "current")
    assert current["today_network_idle"] <= lowest + 1e-9, (current, lowest)
    for row in forecast["rows"]:
        assert row["brokers_needed"] is None or row["brokers_needed"] >= 3, row


@pytest.mark.slow
def test_the_runbook_runs_as_written_against_a_lab(tmp_path: Path, runbook_lab_dir: Path) -> None:
    """Its `kbt lab up` finds the lab tests/e2e/conftest.py began booting with the e2e tier."""
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "loadtests").symlink_to(LOADTESTS)  # commands name specs as from the checkout
    specs = tmp_path / "specs"
    specs.mkdir()
    for name, text in (
        ("cost.yaml", COST_SWEEP),
        ("stress.yaml", STRESS_SPEC),
        ("canary.yaml", CANARY_SWEEP),
    ):
        (specs / name).write_text(text)
    script = "set -euo pipefail\n" + "\n".join(
        f"echo '== {phase}: block {i}'\n{block}" for i, (phase, block) in enumerate(runnable_blocks())
    )
    (tmp_path / "runbook.sh").write_text(script)
    lab_dir = runbook_lab_dir
    env = {
        **runbook_lab_env(lab_dir),
        "COST_SWEEP": str(specs / "cost.yaml"),
        "STRESS_SPEC": str(specs / "stress.yaml"),
        "CANARY_SWEEP": str(specs / "canary.yaml"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    try:
        proc = subprocess.run(
            ["bash", str(tmp_path / "runbook.sh")],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=2400,
        )
    finally:
        subprocess.run(
            [sys.executable, "-m", "tuner", "lab", "down", "--lab-dir", str(lab_dir)],
            capture_output=True, timeout=300, env=env,
        )  # fmt: skip
    tail = (proc.stdout[-3000:] + "\n" + proc.stderr[-3000:]).strip()
    assert proc.returncode == 0, tail
    assert "== rollback: block" in proc.stdout
    reh = work / "rehearsal"
    for produced in ("baseline.json", "report.html", "before.json", "after.json"):
        assert (reh / produced).is_file(), f"{produced} missing\n{tail}"
    assert (reh / "target.yaml").is_file()  # the commands went through the target file written for the lab
    # the capacity step reproduced today first, or refused in one line (exit 6) and wrote no
    # forecast, as the lab's own poor fit may make it
    if (reh / "forecast.json").is_file():
        _check_forecast(json.loads((reh / "forecast.json").read_text()))
    else:
        assert "kbt: error: forecast refused: " in proc.stderr, tail
    health = json.loads((reh / "health-after.json").read_text())
    assert health["go"] is True, health
    assert list((reh / "results" / "rehearsal-peak").glob("recommended-*.json"))
    assert "highest step held" in proc.stdout
