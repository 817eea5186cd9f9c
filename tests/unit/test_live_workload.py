"""`kbt recommend --live SPEC` searches on the workload the spec's runs offer: a `vary:` of workload
fields is applied (it searched the spec's workload before the variation, ignoring the records of the
runs it named), and runs that offer several workloads are refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.runner.recommend_inputs import _one_workload
from tuner.spec.loader import load_sweep

ROOT = Path(__file__).parents[2]


def _spec(tmp_path: Path, rates: list[int]) -> Path:
    path = tmp_path / "live.yaml"
    path.write_text(
        f"""\
name: live
workload: {ROOT / "loadtests" / "workloads" / "pressure.yaml"}
profiles: [{ROOT / "loadtests" / "profiles" / "filebeat-like.yaml"}]
vary:
  workload.rate_per_producer: {rates}
""",
        encoding="utf-8",
    )
    return path


def test_the_runs_varied_workload_is_searched(tmp_path: Path) -> None:
    path = _spec(tmp_path, [18])
    sweep = load_sweep(path)
    assert sweep.spec.workload.rate_per_producer == 50  # the spec's own, before the variation
    workload = _one_workload(path, [run.workload for run in sweep.runs], brokers=1)
    assert workload.rate_per_producer == 18


def test_runs_offering_several_workloads_are_refused(tmp_path: Path) -> None:
    path = _spec(tmp_path, [18, 30])
    sweep = load_sweep(path)
    with pytest.raises(BadInput, match="its runs offer 2 different workloads"):
        _one_workload(path, [run.workload for run in sweep.runs], brokers=1)
