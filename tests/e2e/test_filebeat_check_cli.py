"""`kbt check filebeat` as a subprocess: every published profile in filebeat-profiles/ passes, and
each malformed profile is rejected with exactly one clear line on stderr, exit 2, no traceback and
no secret echoed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt, user_env
from tests.unit.filebeat_cases import GOOD, MALFORMED
from tuner.core.paths import repo_root
from tuner.driver.filebeat.builds import filebeat_builds

pytestmark = pytest.mark.e2e

PROFILE_DIR = repo_root() / "filebeat-profiles"
PUBLISHED = sorted(PROFILE_DIR.glob("*.yml"))
# Filebeat's own defaults carry a no-op: bulk_max_size 2048 above the queue's flush.min_events 1600.
DEFAULTS = "default.yml"


def _kbt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return kbt(*args, cwd=cwd, env=user_env())


def test_every_published_profile_passes() -> None:
    assert len(PUBLISHED) >= 4, PUBLISHED
    proc = _kbt("check", "filebeat", *(p.name for p in PUBLISHED), cwd=PROFILE_DIR)
    assert proc.returncode == 0, proc.stderr
    # The defaults pass with their warning (below) instead of "ok".
    assert proc.stdout.splitlines() == [f"{p.name}: ok" for p in PUBLISHED if p.name != DEFAULTS]
    [warning] = proc.stderr.splitlines()
    assert warning.startswith(f"kbt: warning: {DEFAULTS}:")


def test_recommended_profiles_have_no_no_op_settings() -> None:
    """--strict turns warnings into errors: only the shipped defaults carry a setting without effect."""
    tuned = [p.name for p in PUBLISHED if p.name != DEFAULTS]
    proc = _kbt("check", "filebeat", "--strict", *tuned, cwd=PROFILE_DIR)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    proc = _kbt("check", "filebeat", "--strict", DEFAULTS, cwd=PROFILE_DIR)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert re.fullmatch(
        rf"kbt: warning: {DEFAULTS}: output\.kafka\.bulk_max_size 2048 \(unset: the default\) has no effect"
        r" beyond 1600: the"
        r" memory queue hands the output at most 1600 events per batch \(raise queue\.mem\.flush\.min_events"
        r" and queue\.mem\.events with it\)",
        line,
    ), line


def test_catalog_has_ten_or_more_malformed_profiles() -> None:
    assert len(MALFORMED) >= 10
    assert len({name for name, _, _ in MALFORMED}) == len(MALFORMED)


@pytest.mark.parametrize(("name", "edit", "expected"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_profile_is_rejected_with_one_line(
    tmp_path: Path, name: str, edit: tuple[str, str], expected: str
) -> None:
    old, new = edit
    assert old in GOOD, name
    (tmp_path / "fb.yml").write_text(GOOD.replace(old, new, 1))
    proc = _kbt("check", "filebeat", "fb.yml", cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kbt: error: fb.yml:"), lines[0]
    assert expected in lines[0], lines[0]
    assert proc.stdout == ""
    for secret in ("hunter2", "admin", "PRIVATE KEY"):
        assert secret not in lines[0] or secret in expected, lines[0]


def test_filebeat_version_9_checks_against_its_line(tmp_path: Path) -> None:
    """--filebeat-version 9.x without a 9.x build: a note that `filebeat test config` did not run, 9.x's
    queue defaults (the 10 s flush timeout trap, bulk_max_size capped at 1600), and a `log` input refused
    by line; an unmodelled version is one error line."""
    plain = tmp_path / "plain.yml"
    plain.write_text('output.kafka:\n  hosts: "${KAFKA_HOSTS}"\n  topic: logs\n  version: "2.6.0"\n')
    with_log = tmp_path / "log.yml"
    with_log.write_text(
        "filebeat.inputs:\n  - type: log\n    paths: [/var/log/app.log]\n" + plain.read_text()
    )
    if "9.5.5" in filebeat_builds():
        pytest.skip("a 9.5.5 build is installed: the note does not apply")
    proc = _kbt("check", "filebeat", "--filebeat-version", "9.5.5", plain.name, with_log.name, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("kbt: note: no Filebeat 9.5.5 build")
    assert any("flush.timeout 10s" in line and "160 events/s" in line for line in lines), lines
    assert any("has no effect beyond 1600" in line for line in lines), lines
    assert lines[-1] == (
        "kbt: error: log.yml:1: filebeat.inputs: a log input: Filebeat 9.5.5 has none (disabled since 9.0);"
        " use type: filestream"
    )
    assert "Traceback" not in proc.stderr
    # The same files on the 7.17 line: no 9.x warnings, the log input is fine.
    proc = _kbt("check", "filebeat", "--filebeat-version", "7.17", plain.name, with_log.name, cwd=tmp_path)
    assert proc.returncode == 0 and "10s" not in proc.stderr, proc.stderr
    proc = _kbt("check", "filebeat", "--filebeat-version", "8.5", plain.name, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "kbt: error: --filebeat-version: Filebeat 8.5 is not modelled (kbt models 7.17, 8.13 and later)"
    ]
