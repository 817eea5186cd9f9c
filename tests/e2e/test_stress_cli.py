"""`kbt stress` as a subprocess: bad specs and flags are one line and exit 2 without touching a lab;
`--dry-run` prints the timeline; no lab is exit 4."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt

pytestmark = pytest.mark.e2e

GOOD = """\
name: e2e-stress
workload:
  name: e2e
  topics: [{name: e2e, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
profiles:
  current: {name: filebeat-like, linger_ms: 0}
  recommended: {name: batched, linger_ms: 50, compression: lz4}
shape:
  {prefill_s: 10, steps: [1, 2], step_s: 10, spike: {multiplier: 3, duration_s: 6}, drain_s: 5, settle_s: 2}
consumer_groups: [{name: rt, mode: realtime}]
gates: {p99_ms: 1000, request_queue_max: 20}
"""

BAD = {
    "unknown key": (
        GOOD.replace("step_s: 10", "step_sec: 10"),
        'unknown key "step_sec" (did you mean "step_s"?)',
    ),
    "steps not increasing": (GOOD.replace("[1, 2]", "[2, 1]"), "steps must increase"),
    "max rate": (GOOD.replace("rate_per_producer: 10", "rate_per_producer: max"), 'not "max"'),
    "unknown on_fail": (
        GOOD.replace("p99_ms: 1000", "p99_ms: 1000, on_fail: retry"),
        'unknown value "retry"',
    ),
    "idle above 1": (
        GOOD.replace("p99_ms: 1000", "p99_ms: 1000, network_idle_min: 3"),
        "network_idle_min",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_stress_spec_is_one_line_exit_2(case: str, tmp_path: Path) -> None:
    text, expected = BAD[case]
    (tmp_path / "stress.yaml").write_text(text)
    proc = kbt("stress", "stress.yaml", "--lab-dir", str(tmp_path / "no-lab"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("kbt: error: stress.yaml"), proc.stderr
    assert expected in lines[0]
    assert not (tmp_path / "results").exists()


def test_unknown_profile_label_suggests(tmp_path: Path) -> None:
    (tmp_path / "stress.yaml").write_text(GOOD)
    proc = kbt("stress", "stress.yaml", "--profiles", "current,recomended", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        'kbt: error: --profiles: no profile "recomended" in the spec (did you mean "recommended"?)'
        " (it has current, recommended)"
    )


def test_missing_diagnose_file(tmp_path: Path) -> None:
    (tmp_path / "stress.yaml").write_text(GOOD)
    proc = kbt("stress", "stress.yaml", "--baseline-from", "diag.json", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2
    assert "diag.json: no such diagnose file" in proc.stderr


def test_dry_run_prints_the_timeline(tmp_path: Path) -> None:
    (tmp_path / "stress.yaml").write_text(GOOD)
    (tmp_path / "diag.json").write_text('{"snapshot": {"brokers": [{"messages_in_per_s": 40}]}}')
    proc = kbt("stress", "stress.yaml", "--dry-run", "--baseline-from", "diag.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "baseline 40 msgs/s (from diag.json), 2 producers; profiles current, recommended" in out
    assert "01-step1-x1: step, 10 s from 10 s, 2 producers (x1 = 40 msgs/s)" in out
    assert "03-spike-x3: spike, 6 s from 30 s, 6 producers (x3 = 120 msgs/s)" in out
    assert "04-drain: drain" in out
    assert not (tmp_path / "results").exists()


def test_no_lab_is_an_environment_problem(tmp_path: Path) -> None:
    (tmp_path / "stress.yaml").write_text(GOOD)
    proc = kbt("stress", "stress.yaml", "--lab-dir", str(tmp_path / "no-lab"), cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip().startswith("kbt: error: no running lab in")
