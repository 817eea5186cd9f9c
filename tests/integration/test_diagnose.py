"""Acceptance on the real lab: `kbt diagnose` reads the Qunar-like load under the Filebeat-like
profile as "small requests" and under the recommended (batched) one as healthy; the broker cost
model fits from the same two runs' records.

Both runs come from loadtests/qunar-logs.yaml (24 producers, 960 msgs/s of ~1.6 KB log events),
shortened to 45 s. The batched run goes first: Produce time percentiles are decaying histograms,
and the unbatched run's tail must not sit in the batched run's window. `kbt diagnose` runs as a
subprocess over each run's measured window (--end/--window) and prints its JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.labhelp import diagnose_json
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root
from tuner.lab import LabState
from tuner.model.cost import fit_cost_model
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep
from tuner.store.record import RunRecord

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DURATION_S = 45
# The lab shares a 2-core host with everything else running on it: requests can wait hundreds of
# ms for an idle handler thread while the JVM waits for a core. That is the "CPU or GC pauses"
# finding (tested in tests/unit/test_diagnosis.py); it is about the host, not the settings under
# test. The same goes for the log flush time: another tenant's writes can hold a flush for a few
# hundred ms ("slow disk"). This test raises only those two thresholds.
LAB_THRESHOLDS = "request_queue_p99_ms: 5000\nflush_p99_ms: 5000\n"


@pytest.fixture(scope="module")
def runs(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, RunRecord], Path]:
    if len(lab.brokers) < 3:
        pytest.skip("the Qunar-like workload has replication factor 3: needs a 3-broker lab")
    loaded = load_sweep(repo_root() / "loadtests" / "qunar-logs.yaml")
    plans = {p.name: p for p in loaded.runs}
    chosen = []
    for index, name in enumerate(("batched-zstd", "filebeat-like")):
        plan = plans[name]
        workload = plan.workload.model_copy(update={"duration_s": DURATION_S})
        chosen.append(plan.model_copy(update={"workload": workload, "index": index}))
    results = tmp_path_factory.mktemp("diagnose") / "results"
    runner = sweep_runner(lab_dir=lab.lab_dir, results=results)
    outcome = runner.run(type(loaded)(path=loaded.path, spec=loaded.spec, runs=chosen))
    records = {r.name: r for r in outcome.records}
    # A run whose producers fell behind their schedule on the busy 2-core host is unclean: the cost
    # model leaves it out, as it should. Such a run is run once more, as an operator would.
    again = [p for p in chosen if records.get(p.name) is not None and records[p.name].status == "unclean"]
    if again:
        rerun = runner.run(type(loaded)(path=loaded.path, spec=loaded.spec, runs=again))
        records.update({r.name: r for r in rerun.records})
    assert set(records) == {"batched-zstd", "filebeat-like"}
    for r in records.values():
        assert r.broker is not None and r.delivery.lost == 0, (r.name, r.problems)
    return records, results


def _diagnose(lab: LabState, record: RunRecord, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    thresholds = tmp_path / "lab-thresholds.yaml"
    thresholds.write_text(LAB_THRESHOLDS)
    window = record.client.window_end - record.client.window_start
    step = max(lab.config.scrape_interval_s, 1.0)
    return diagnose_json(lab.prometheus_url, record.client.window_end, window, step, thresholds, *extra)


def _kinds(diagnosis: dict[str, Any]) -> list[set[str]]:
    return [{f["kind"] for f in b["findings"]} for b in diagnosis["brokers"]]


def test_filebeat_like_is_small_requests(lab: LabState, runs: Any, tmp_path: Path) -> None:
    records, _ = runs
    code, d = _diagnose(lab, records["filebeat-like"], tmp_path)
    assert code in (ExitStatus.WARNING, ExitStatus.CRITICAL), d["headline"]
    assert len(d["brokers"]) == len(lab.brokers)
    assert all("small_requests" in kinds for kinds in _kinds(d)), d["headline"]
    assert all(b["cause"] == "small requests" for b in d["brokers"]), [b["cause"] for b in d["brokers"]]
    finding = d["brokers"][0]["findings"][0]
    assert "small produce requests: average produce request is" in finding["summary"]
    assert finding["evidence"]["bytes_per_request"] < 2000  # one ~1.6 KB event per request, gzip'd
    assert d["brokers"][0]["requests_cut"] > 8
    # The run's topic leads the top topics, flagged small.
    [topic] = records["filebeat-like"].topics
    assert d["topics"][0]["topic"] == topic and d["topics"][0]["small"]


def test_batched_is_healthy(lab: LabState, runs: Any, tmp_path: Path) -> None:
    records, _ = runs
    code, d = _diagnose(lab, records["batched-zstd"], tmp_path)
    assert not any("small_requests" in kinds for kinds in _kinds(d)), d["headline"]
    assert code == ExitStatus.OK and d["status"] == "healthy", d["headline"]


def test_cost_model_fits_from_the_runs(lab: LabState, runs: Any, tmp_path: Path) -> None:
    records, results = runs
    model = fit_cost_model(list(records.values()))
    clean = [r for r in records.values() if r.status != "unclean"]
    assert model.n == len(clean) * len(lab.brokers)
    if len(clean) < len(records):
        pytest.skip(f"a run stayed unclean after a second try: {[r.problems for r in records.values()]}")
    for fit in (model.network, model.handler):
        assert min(fit.requests_coef, fit.bytes_coef, fit.intercept) >= 0 and fit.r2 <= 1
    # ~20x more produce requests for the same bytes cost the broker's threads more.
    per_broker = {
        name: (r.broker.produce_requests_per_s / len(lab.brokers), r.broker.bytes_in_per_s / len(lab.brokers))
        for name, r in records.items()
        if r.broker and r.broker.produce_requests_per_s and r.broker.bytes_in_per_s
    }
    unbatched = model.predict_idle(*per_broker["filebeat-like"])
    batched = model.predict_idle(*per_broker["batched-zstd"])
    assert unbatched[1] < batched[1], (unbatched, batched, model)
    # kbt diagnose with the fitted model (a results directory): the small-request limit is the model's.
    code, d = _diagnose(lab, records["filebeat-like"], tmp_path, "--cost-model", str(results))
    assert d["cost_model"]["n"] == model.n
    # On the 2-core lab the network threads can stay idle enough that their fit is flat (no cost per
    # request or byte), so no break-even: then the limit is the default, and says why.
    if model.network.break_even_request_bytes is None:
        assert d["small_request_source"] == "default" and d["cost_model"]["break_even_request_bytes"] is None
    else:
        assert d["small_request_source"] == "cost model", d["cost_model"]
    limit = d["brokers"][0]["small_request_bytes"]
    assert 1024 <= limit <= 16384
    for b, snap in zip(d["brokers"], d["snapshot"]["brokers"], strict=True):
        small = snap["bytes_in_per_s"] / snap["produce_requests_per_s"] < limit
        assert ("small_requests" in {f["kind"] for f in b["findings"]}) == small, (b, snap)
    assert code == {"healthy": 0, "warning": 10, "critical": 11}[d["status"]]
