"""The read-side commands as subprocesses over valid results of unusual shape (traffic of 1e-12
requests/s, one run, every run failing its SLO, identical runs, two client kinds in one directory):
each answers (exit 0) or refuses in one line with its exit code, never a traceback, NaN or inf."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt
from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root
from tuner.store import RunRecord
from tuner.store.figures import BrokerStats
from tuner.store.results import ResultsStore

pytestmark = pytest.mark.e2e

NOT_A_FIGURE = re.compile(r"\b(nan|inf|infinity)\b|-\d+(\.\d+)?%", re.IGNORECASE)


def _brokers(requests_per_s: float, idle: float) -> list[BrokerStats]:
    return [
        BrokerStats(
            broker=str(i),
            produce_requests_per_s=requests_per_s,
            messages_in_per_s=requests_per_s * 20,
            bytes_in_per_s=requests_per_s * 20 * 1620,
            network_idle_ratio=idle,
            request_handler_idle_ratio=idle,
            cpu_cores=0.5,
        )
        for i in range(3)
    ]


def _tiny_traffic() -> list[RunRecord]:
    plans = qunar_plans()
    return [record_with_brokers(_brokers(1e-12, 0.99), 1.78e9 + i, plan=p) for i, p in enumerate(plans)]


def _one_run() -> list[RunRecord]:
    return [record_with_brokers(_brokers(300.0, 0.8), 1.78e9, plan=qunar_plans()[0])]


def _all_past_the_slo() -> list[RunRecord]:
    plans = qunar_plans()
    return [
        record_with_brokers(_brokers(300.0 / (i + 1), 0.8), 1.78e9 + i, plan=p, p99_ms=1e6)
        for i, p in enumerate(plans)
    ]


def _identical() -> list[RunRecord]:
    return [record_with_brokers(_brokers(300.0, 0.8), 1.78e9 + i, plan=qunar_plans()[0]) for i in range(3)]


SHAPES: dict[str, Callable[[], list[RunRecord]]] = {
    "tiny traffic": _tiny_traffic,
    "one run": _one_run,
    "all past the SLO": _all_past_the_slo,
    "identical runs": _identical,
}
# what a command may answer besides 0: no setting meets the SLO (recommend), none to compare
# (forecast: a bad input naming --recommended), today not reproduced (forecast)
REFUSALS = {ExitStatus.BAD_INPUT, ExitStatus.NO_SOLUTION, ExitStatus.REFUSED}


def _answers_or_refuses_in_one_line(proc: subprocess.CompletedProcess[str]) -> None:
    out, err = proc.stdout, proc.stderr
    assert "Traceback" not in out + err, err
    assert not NOT_A_FIGURE.search(out), out
    if proc.returncode != 0:
        assert proc.returncode in REFUSALS, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kbt: error: "), err


@pytest.mark.parametrize("shape", list(SHAPES))
def test_unusual_results_are_answered_or_refused_in_one_line(shape: str, tmp_path: Path) -> None:
    results = tmp_path / "results"
    store = ResultsStore(results)
    for record in SHAPES[shape]():
        store.write(record)
    recommend = kbt("recommend", "--results", "results", "--client", "librdkafka", "--out", "o", cwd=tmp_path)
    _answers_or_refuses_in_one_line(recommend)
    if shape == "all past the SLO":
        assert recommend.returncode == ExitStatus.NO_SOLUTION
        assert "no librdkafka setting meets p99" in recommend.stderr
    else:
        assert recommend.returncode == 0, recommend.stderr
    forecast = kbt("forecast", "--results", "results", cwd=tmp_path)
    _answers_or_refuses_in_one_line(forecast)
    if shape == "identical runs":  # its R^2 of 1 says nothing: the forecast says so
        assert forecast.returncode == 0 and "all at one traffic level" in " ".join(forecast.stdout.split())
    report = kbt("report", "--results", "results", "-o", "r.html", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text()
    assert not re.search(r">\s*(nan|inf|-inf)\s*<", html, re.IGNORECASE)


def test_two_client_kinds_in_one_directory_each_keep_their_own_baselines_durability(tmp_path: Path) -> None:
    shutil.copytree(repo_root() / "loadtests" / "truth" / "records" / "truth-near-slo", tmp_path / "r" / "s")
    proc = kbt("recommend", "--results", "r", "--client", "librdkafka,java", "--out", "o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stdout.split())
    assert "librdkafka: Durability as baseline rdk-" in said
    assert "java: Durability as baseline java-" in said
    assert "never tuned" not in said
    [java] = (tmp_path / "o").glob("*/java.properties")
    assert "# Durability as baseline java-" in java.read_text()
