"""`kbt forecast` as a subprocess on committed data: the lab's demo records (real runs, a network fit
of R^2 0.03) and the saturated diagnosis of issue 39 (network idle 0.21 / 0.28 / 0.41). The forecast
reproduces today first: calibrated on the runs it was fitted on, refused on the saturated cluster."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_diagnose_cli import _one_line_error, kbt
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root

pytestmark = pytest.mark.e2e

DATA = repo_root() / "tests" / "unit" / "data"
RECORDS = str(DATA / "demo-loaded")
SATURATED = str(DATA / "forecast" / "saturated-diagnosis.json")


def test_the_saturated_diagnosis_with_the_labs_cost_model_is_refused_in_one_line() -> None:
    proc = kbt("forecast", "--diagnosis", SATURATED, "--cost-model", RECORDS, "--peak", "3x", "--json", "-")
    _one_line_error(
        proc,
        ExitStatus.REFUSED,
        "forecast refused: current: live cluster",
        "broker 1 measured 0.210",
        "R^2 0.03 < 0.5",
    )
    assert proc.stdout == ""  # no forecast written beside a refusal


def test_the_runs_forecast_shows_today_calibrated_and_the_replication_floor() -> None:
    proc = kbt("forecast", "--results", RECORDS, "--peak", "3x", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    f = json.loads(proc.stdout)
    pools = {(c["label"], p["pool"]): p for c in f["today"] for p in c["pools"]}
    handler = pools[("current: filebeat-like", "handler")]
    assert handler["action"] == "calibrated" and handler["broker"] == "2"
    assert handler["forecast_idle"] <= handler["measured_idle"] < handler["model_idle"]
    for row in f["rows"]:
        assert row["today_network_idle"] <= min(
            b["network_idle_measured"] for c in f["today"] if c["label"] == row["label"] for b in c["brokers"]
        )
        assert row["brokers_needed"] >= 3  # the workload's topics have replication factor 3
    assert f["rows"][1]["limited_by"] == "replication"
    assert any("network fit is poor: R^2 0.03" in w for w in f["warnings"])
    text = kbt("forecast", "--results", RECORDS, "--peak", "3x")
    assert text.returncode == 0, text.stderr
    out = " ".join(text.stdout.split())  # the table may wrap
    assert "today, current: filebeat-like: cost model vs measured" in out
    assert "calibrated, the model's handler cost per request and per byte x1.57" in out
    assert "warning: the cost model's network fit is poor" in out


def test_replication_factor_is_for_a_diagnosis() -> None:
    _one_line_error(
        kbt("forecast", "--results", RECORDS, "--replication-factor", "3"),
        ExitStatus.BAD_INPUT,
        "--replication-factor goes with --diagnosis or --target",
    )
