"""Real Filebeat's per-line pipeline cost is refitted from run records of its synchronous flush path
(tuner/model/evidence.py, fitted_harvest_spacing), on the committed held-out records of the busy
shape: its quiet-host runs imply a cheaper pipeline than the constant fitted on a loaded host."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tuner.core.paths import repo_root
from tuner.model.evidence import (
    SPACING_RANGE_S,
    calibrate,
    fitted_harvest_spacing,
    measured_of,
    traffic_of_record,
    truth_rows,
)
from tuner.model.predict import ClientCalibration, calibrated_rules, predict
from tuner.spec.clients import rules_of
from tuner.spec.clients.filebeat import REAL_ENGINE_NAME, RUNNING_HARVEST_SPACING_S
from tuner.spec.clients.rules import FilebeatRules
from tuner.store.recommendation import SLOBounds
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

RECORDS = repo_root() / "loadtests" / "truth" / "records"
V1 = repo_root() / "tests" / "unit" / "data" / "records-v1"


def _busy(name: str) -> list[RunRecord]:
    found = [r for r in ResultsStore(RECORDS).records() if r.name == name]
    assert found, name
    return sorted(found, key=lambda r: r.created_at)


def test_a_sync_flush_run_implies_the_cost_that_meets_its_rate() -> None:
    record = _busy("fbb-filestream-low-latency")[-1]  # the quiet pass: 8.4 req/s measured
    [(kind, (spacing, runs))] = fitted_harvest_spacing([record]).items()
    assert kind == "filebeat" and runs == 1
    assert SPACING_RANGE_S[0] < spacing < RUNNING_HARVEST_SPACING_S  # a quiet host: cheaper
    measured = measured_of(record, SLOBounds()).requests_per_s
    assert measured
    fitted = predict(traffic_of_record(record), record.plan.profile, calibrate([record]))
    assert fitted.requests_per_s == pytest.approx(measured, rel=0.03)
    default = predict(traffic_of_record(record), record.plan.profile)
    assert abs(default.requests_per_s / measured - 1) > 0.15  # the constant missed it


def test_a_busier_pipeline_implies_a_larger_cost() -> None:
    record = _busy("fbb-filestream-low-latency")[-1]
    assert record.broker is not None
    # The same run, had its broker counted 20% more requests (more fragments per read).
    brokers = [
        b.model_copy(update={"produce_requests_per_s": (b.produce_requests_per_s or 0) * 1.2})
        for b in record.broker.brokers
    ]
    busier = record.model_copy(update={"broker": record.broker.model_copy(update={"brokers": brokers})})
    before = measured_of(record, SLOBounds()).requests_per_s
    after = measured_of(busier, SLOBounds()).requests_per_s
    assert before and after == pytest.approx(1.2 * before)
    quiet = fitted_harvest_spacing([record])["filebeat"][0]
    assert fitted_harvest_spacing([busier])["filebeat"][0] > quiet * 1.05


def test_timed_flush_and_emulated_runs_fit_nothing() -> None:
    timed = _busy("fbb-shipped-defaults")
    assert fitted_harvest_spacing(timed) == {}
    # A synchronous flush run no real pod made (a version-1 record's emulated client) fits nothing.
    synthetic = [r for r in ResultsStore(V1).records() if r.name == "filebeat-low-latency"]
    assert synthetic and synthetic[0].client.engine != REAL_ENGINE_NAME
    assert fitted_harvest_spacing(synthetic) == {}
    real = _busy("fbb-low-latency")[-1]
    assert real.client.engine == REAL_ENGINE_NAME and fitted_harvest_spacing([real])
    rules = rules_of(timed[0].plan.profile)
    assert isinstance(rules, FilebeatRules) and rules.harvest_spacing_s == RUNNING_HARVEST_SPACING_S
    # Without a fitted value, or for rules with no harvester, the kind's constant stays.
    assert calibrated_rules(rules, ClientCalibration()) == rules
    emulated = replace(rules, harvest_spacing_s=0.0)
    assert calibrated_rules(emulated, ClientCalibration(harvest_spacing_s=20e-6)) == emulated


def test_calibration_carries_it_and_truth_uses_it() -> None:
    quiet = [_busy("fbb-low-latency")[-1], _busy("fbb-filestream-low-latency")[-1]]
    calibration = calibrate(quiet)
    fb = calibration.of("filebeat")
    assert fb.harvest_spacing_s is not None and fb.spacing_runs == 2
    rows = truth_rows(quiet, calibration)
    assert len(rows) == 2 and max(abs(r.error) for r in rows) < 0.10
