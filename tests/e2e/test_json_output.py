"""`--json -` prints exactly one JSON document with the command's name and schema version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt
from tuner import __version__
from tuner.cli.json_out import SCHEMA_VERSION
from tuner.core.paths import repo_root

pytestmark = pytest.mark.e2e


def test_lab_status_without_a_lab(tmp_path: Path) -> None:
    proc = kbt("lab", "status", "--lab-dir", str(tmp_path / "none"), "--json", "-", cwd=tmp_path)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc == {
        "kbt": __version__,
        "schema_version": SCHEMA_VERSION,
        "command": "lab status",
        "lab_dir": str(tmp_path / "none"),
        "running": False,
        "healthy": False,
        "components": [],
    }
    assert "no lab running" in proc.stderr


def test_check_filebeat_reports_each_file(tmp_path: Path) -> None:
    good = repo_root() / "filebeat-profiles"
    profile = sorted(good.glob("*.yml"))[0]
    bad = tmp_path / "bad.yml"
    bad.write_text("output.kafka:\n  bulk_max_sise: 10\n")
    proc = kbt("check", "filebeat", str(profile), str(bad), "--json", "-", cwd=tmp_path)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["command"] == "check filebeat" and doc["schema_version"] == SCHEMA_VERSION
    by_file = {Path(f["file"]).name: f for f in doc["files"]}
    assert by_file[profile.name]["ok"] is True
    assert by_file["bad.yml"]["ok"] is False
    assert "bulk_max_size" in by_file["bad.yml"]["errors"][0]  # the did-you-mean hint


def test_json_to_a_file_keeps_the_human_output(tmp_path: Path) -> None:
    spec = repo_root() / "loadtests" / "holiday-peak.yaml"
    proc = kbt("stress", str(spec), "--dry-run", "--json", "plan.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "prefill" in proc.stdout
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert doc["command"] == "stress --dry-run"
    assert doc["stages"][0]["kind"] == "prefill"


def test_recommend_json_is_part_of_the_recommendation_batch(tmp_path: Path) -> None:
    """`recommend --json` is written with the record and rendered files, all or none: a JSON path
    under a file leaves no recommendation directory; `--json -` prints the same document."""
    from tests.unit.test_results_store import _plans, _record
    from tuner.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    for i, plan in enumerate(_plans()):
        store.write(_record(plan, 1_700_000_000.0 + 100 * i))
    (tmp_path / "afile").write_text("x")
    proc = kbt("recommend", "--results", "results", "--out", "recs", "--json", "afile/r.json", cwd=tmp_path)
    assert proc.returncode == 2 and "afile is not a directory" in proc.stderr, proc.stderr
    assert not (tmp_path / "recs").exists()
    proc = kbt("recommend", "--results", "results", "--out", "recs", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == "recommend" and Path(tmp_path / doc["recommendation_file"]).is_file()
