"""`kbt report` as a subprocess: bad input is one line and exit 2; stored records make a page."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt
from tests.unit.test_results_store import _plans, _record
from tuner.store import ResultsStore

pytestmark = pytest.mark.e2e


def _kbt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return kbt("report", *args, cwd=cwd, timeout=600)


def _one_line(proc: subprocess.CompletedProcess[str], expected: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("kbt: error: ") and expected in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_results_dir(tmp_path: Path) -> None:
    _one_line(_kbt("--results", "nope", cwd=tmp_path), "nope: no such results directory")
    assert not (tmp_path / "report.html").exists()


def test_results_dir_without_records(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    _one_line(_kbt("--results", "results", cwd=tmp_path), "no run records")


def test_bad_recommendation_file(tmp_path: Path) -> None:
    ResultsStore(tmp_path / "results").write(_record(_plans()[0], 1_700_000_000.0))
    (tmp_path / "rec.json").write_text('{"kind": "recommendation", "schema_version": 7}')
    proc = _kbt("--results", "results", "--recommendation", "rec.json", cwd=tmp_path)
    _one_line(proc, "recommendation schema_version 7")


def test_page_from_records(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results")
    for i, plan in enumerate(_plans()):
        store.write(_record(plan, 1_700_000_000.0 + 100 * i))
    title = "Holiday <peak>"
    args = ("--results", "results", "--out", "out/r.html", "--png-dir", "png", "--title", title)
    proc = _kbt(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "wrote out/r.html (3 plots, 3 runs)"  # offered, latency, Pareto
    html = (tmp_path / "out" / "r.html").read_text()
    assert "<title>Holiday &lt;peak&gt;</title>" in html
    assert html.count("data:image/png;base64,") == 3 == len(list((tmp_path / "png").glob("*.png")))
    assert "No pair of runs to compare" in html  # equal request rates: no run is the "after"


def test_json_is_written_with_the_page_or_not_at_all(tmp_path: Path) -> None:
    """`--json` is one more file of the page's batch: written beside it, and when the page cannot
    be placed (its path runs under a file) no JSON, page or plot is left."""
    store = ResultsStore(tmp_path / "results")
    for i, plan in enumerate(_plans()):
        store.write(_record(plan, 1_700_000_000.0 + 100 * i))
    (tmp_path / "afile").write_text("x")
    proc = _kbt(
        "--results",
        "results",
        "--out",
        "afile/r.html",
        "--png-dir",
        "png",
        "--json",
        "j/r.json",
        cwd=tmp_path,
    )
    _one_line(proc, "afile is not a directory")
    assert not (tmp_path / "j").exists() and not (tmp_path / "png").exists()
    proc = _kbt("--results", "results", "--out", "r.html", "--json", "j/r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = json.loads((tmp_path / "j" / "r.json").read_text())
    assert document["command"] == "report" and len(document["runs"]) == 3 and (tmp_path / "r.html").is_file()


def test_positional_results_still_works_with_a_note(tmp_path: Path) -> None:
    proc = _kbt("nope", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == "kbt: note: RESULTS as an argument is deprecated; use --results nope"
    assert lines[1] == "kbt: error: nope: no such results directory"
