"""`kbt recommend` and `kbt report` as subprocesses on the committed held-out Java records: the
prediction carries the held-out error band of its kind and regime (tuner/spec/error_bands.json) in
the terminal output, the recommendation record and the HTML report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt
from tuner.core.paths import repo_root
from tuner.spec.error_bands import load_error_bands

pytestmark = pytest.mark.e2e


def test_recommend_shows_the_band_in_output_record_and_report(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(repo_root() / "loadtests" / "truth" / "records" / "truth-java", results / "truth-java")
    proc = kbt("recommend", "--results", "results", "--client", "java", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [path] = (tmp_path / "out").glob("*/recommendation.json")
    rec = json.loads(path.read_text())
    [java] = rec["clients"]
    predicted, band = java["predicted"], java["predicted"]["band"]
    # The band is the committed table's, for the prediction's own regime (or the kind's).
    table = load_error_bands().of("java", predicted["regime"])
    assert table is not None and band["runs"] == len(table.runs)
    assert band["requests_per_s"][0] <= predicted["requests_per_s"] <= band["requests_per_s"][1]
    assert band["p99_ms"][0] <= predicted["p99_ms"] <= band["p99_ms"][1]
    assert rec["error_bands_from"] == len({r for b in load_error_bands().bands for r in b.runs})
    low, high = band["requests_per_s"]
    assert f"java: held-out band ({band['basis']}; " in proc.stdout
    assert f"{low:.1f}-{high:.1f} req/s" in proc.stdout
    if java["band_doubt"] is not None:  # a doubt is said, with what to do about it
        assert "confirm it with --live" in proc.stdout
    report = kbt(
        "report", "--results", "results", "--recommendation", str(path), "-o", "r.html", cwd=tmp_path
    )
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Model uncertainty: held-out band" in html and f"{low:.1f}-{high:.1f} req/s" in html
