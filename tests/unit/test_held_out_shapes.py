"""The held-out set is held out by construction (loadtests/truth/, `make bench-truth`): every spec
there loads, its sweep is named `truth-*`, no sweep elsewhere takes such a name, and the bench
refuses a fitting record from a held-out sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import truth as bench_truth
from tuner.core.paths import repo_root
from tuner.spec.clients import KINDS
from tuner.spec.loader import load_sweep

LOADTESTS = repo_root() / "loadtests"


def _sweep_names(paths: list[Path]) -> set[str]:
    names = set()
    for path in paths:
        try:
            names.add(load_sweep(path).spec.name)
        except Exception:  # workloads, profiles, stress specs: not sweeps
            continue
    return names


def test_every_held_out_spec_is_a_truth_sweep_and_no_other_sweep_is() -> None:
    held_out = sorted((LOADTESTS / "truth").glob("*.yaml"))
    assert held_out
    names = _sweep_names(held_out)
    assert len(names) == len(held_out) and all(n.startswith("truth-") for n in names)
    kinds = {run.profile.client for p in held_out for run in load_sweep(p).runs}
    assert kinds == set(KINDS)  # every client kind kbt models has held-out shapes
    others = _sweep_names(sorted(LOADTESTS.glob("*.yaml")))
    assert not {n for n in others if n.startswith("truth-")}


def test_the_bench_refuses_a_held_out_record_in_the_fitting_set(tmp_path: Path) -> None:
    from tests.unit.synthetic_records import record_with_brokers
    from tuner.store.figures import BrokerStats
    from tuner.store.results import ResultsStore

    fit = tmp_path / "fit"
    store = ResultsStore(fit)
    store.write(record_with_brokers([BrokerStats(broker="1", produce_requests_per_s=10.0)], 1e9))
    assert len(bench_truth.fitting_set([fit])) == 1
    held_out = load_sweep(LOADTESTS / "truth" / "truth-java.yaml").runs[0]
    store.write(record_with_brokers([BrokerStats(broker="1", produce_requests_per_s=10.0)], 1e9, held_out))
    with pytest.raises(SystemExit, match="is a held-out run"):
        bench_truth.fitting_set([fit])
    with pytest.raises(SystemExit, match="not a directory"):
        bench_truth.fitting_set([tmp_path / "absent"])
    with pytest.raises(SystemExit, match="no held-out spec named nope"):
        bench_truth.held_out_specs(["nope"])


def test_the_bench_runs_a_fitting_sweep_only_beside_held_out_sweeps_of_its_kinds() -> None:
    for spec in bench_truth.FITTING_SPECS:
        assert not load_sweep(spec).spec.name.startswith("truth-")  # never a held-out sweep
    every = bench_truth.held_out_specs([])
    assert bench_truth.fitting_specs(every) == list(bench_truth.FITTING_SPECS)
    assert bench_truth.fitting_specs(bench_truth.held_out_specs(["truth-java"])) == []
    filebeat = bench_truth.fitting_specs(bench_truth.held_out_specs(["truth-filebeat-busy"]))
    assert [s.stem for s in filebeat] == ["filebeat-pipeline-fit"]


def test_a_report_of_an_earlier_pass_fits_on_its_fitting_runs(tmp_path: Path) -> None:
    from tuner.store.results import ResultsStore

    assert bench_truth.fit_results(tmp_path) == []
    committed = repo_root() / "loadtests" / "fitting" / "records"
    records = ResultsStore(committed).records()
    assert len(records) >= 2
    # As `fit` leaves them: <out>/fit/<spec>-before and -after, each a results directory.
    for when, record in zip(("before", "after"), records[:2], strict=True):
        ResultsStore(tmp_path / bench_truth.FIT_DIR / f"filebeat-pipeline-fit-{when}").write(record)
    found = bench_truth.fit_results(tmp_path)
    assert [p.name for p in found] == ["filebeat-pipeline-fit-after", "filebeat-pipeline-fit-before"]
    assert {r.run_id for r in bench_truth.fitting_set(found)} == {r.run_id for r in records[:2]}
