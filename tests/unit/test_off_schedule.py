"""A run whose load generator fell behind its schedule tests no prediction (tuner/model/evidence.py,
off_schedule): model truth lists it apart and counts it, on the committed held-out Java records."""

from __future__ import annotations

import pytest

from tuner.core.paths import repo_root
from tuner.model.evidence import OFF_SCHEDULE_INTERVALS, model_truth, off_schedule, truth_rows
from tuner.store.figures import LatencyMs
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

RECORDS = repo_root() / "loadtests" / "truth" / "records"
LAGGED = "20261126T144747.634Z"  # the pass on a host at load ~59


def _linger20() -> list[RunRecord]:
    records = [r for r in ResultsStore(RECORDS).records() if r.name == "java-linger20-b16k-lz4"]
    assert len(records) >= 3
    return records


def _with_lag(record: RunRecord, p90: float | None) -> RunRecord:
    lag = None if p90 is None else LatencyMs(count=100, p50=0.1, p90=p90, p99=p90 * 2)
    return record.model_copy(update={"client": record.client.model_copy(update={"send_lag_ms": lag})})


def test_the_lagged_pass_is_off_its_schedule_and_its_repeats_are_not() -> None:
    records = _linger20()
    flagged = {r.run_id for r in records if off_schedule(r) is not None}
    assert flagged == {r.run_id for r in records if r.run_id.endswith(LAGGED)}
    [lagged] = [r for r in records if r.run_id.endswith(LAGGED)]
    why = off_schedule(lagged)
    assert why is not None and "p90 9.5 ms" in why and "4.0 ms interval" in why


def test_model_truth_leaves_it_out_and_says_how_many() -> None:
    records = _linger20()
    rows = truth_rows(records)
    assert len(rows) == len(records) - 1
    assert all(not r.record.run_id.endswith(LAGGED) for r in rows)
    [java] = model_truth(records)
    assert java.runs == len(records) - 1 and java.off_schedule == 1


@pytest.mark.parametrize(
    ("p90_intervals", "off"),
    [(None, False), (0.5, False), (OFF_SCHEDULE_INTERVALS, False), (OFF_SCHEDULE_INTERVALS * 1.01, True)],
)
def test_the_limit_is_the_schedule_interval(p90_intervals: float | None, off: bool) -> None:
    record = _linger20()[0]
    interval_ms = 1000 / float(record.plan.workload.rate_per_producer)
    p90 = None if p90_intervals is None else p90_intervals * interval_ms
    assert (off_schedule(_with_lag(record, p90)) is not None) is off


def test_a_closed_loop_run_has_no_schedule_to_fall_behind() -> None:
    record = _with_lag(_linger20()[0], 1e6)
    workload = record.plan.workload.model_copy(update={"rate_per_producer": "max"})
    closed = record.model_copy(update={"plan": record.plan.model_copy(update={"workload": workload})})
    assert off_schedule(closed) is None


def test_the_verdict_notes_it_and_keeps_the_status() -> None:
    from tuner.runner.verdict import judge

    [lagged] = [r for r in _linger20() if r.run_id.endswith(LAGGED)]
    status, problems = judge(lagged.plan, lagged.client, lagged.delivery, lagged.broker)
    assert status == lagged.status == "ok"
    assert any(p.startswith("off its schedule") and "model truth leaves it out" in p for p in problems)
    quiet = _linger20()[-1]
    assert quiet.run_id != lagged.run_id
    _, problems = judge(quiet.plan, quiet.client, quiet.delivery, quiet.broker)
    assert not any(p.startswith("off its schedule") for p in problems)
