"""Qunar's pressure regime on a real pressure lab (`kbt lab up --profile pressure`): the Filebeat-like
load fills the request queue and Kafka's network idle falls, with the network thread's busy time
accounted for from the kernel; batched at the same offered load, the queue stays below its cap. One
short sweep of both profiles, shared by the assertions (about two minutes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tuner.lab import LabState
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep
from tuner.spec.thresholds import THRESHOLDS
from tuner.store import ResultsStore
from tuner.store.record import RunRecord

SPEC = Path(__file__).parent / "data" / "pressure-quick.yaml"


@pytest.fixture(scope="module")
def pressure_results(pressure_lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("pressure-results")
    sweep_runner(lab_dir=pressure_lab.lab_dir, results=results).run(load_sweep(SPEC))
    return results


@pytest.fixture(scope="module")
def pressure_runs(pressure_results: Path) -> dict[str, RunRecord]:
    return {r.name: r for r in ResultsStore(pressure_results).records()}


def test_both_profiles_deliver_every_acked_record(pressure_runs: dict[str, RunRecord]) -> None:
    assert set(pressure_runs) == {"filebeat-like", "batched"}
    for record in pressure_runs.values():
        assert record.delivery.verified and record.delivery.acked > 0 and record.delivery.lost == 0, (
            record.run_id
        )
        assert record.broker is not None and record.broker.request_queue_cap == 16


def test_filebeat_like_fills_the_request_queue(pressure_runs: dict[str, RunRecord]) -> None:
    record = pressure_runs["filebeat-like"]
    assert record.broker is not None
    [stats] = record.broker.brokers
    assert stats.request_queue_size_max == 16
    assert (stats.request_queue_at_cap_share or 0) >= THRESHOLDS.request_queue_full_share, stats
    assert (record.broker.network_idle_ratio or 1) < THRESHOLDS.network_idle_warning, stats
    # the kernel's account: the network thread was mostly blocked, not working, and the record
    # names the cause (a full queue, or host contention when the handler waited for a core)
    attribution = record.attribution
    assert attribution is not None and attribution.threads.network, record.run_id
    assert attribution.blocked > attribution.own_cpu, attribution.why
    assert attribution.cause in ("request queue full", "host contention"), attribution.why
    assert attribution.threads.load_avg_1m is not None and attribution.threads.host_cores


def test_batched_keeps_the_queue_below_its_cap(pressure_runs: dict[str, RunRecord]) -> None:
    base, batched = pressure_runs["filebeat-like"], pressure_runs["batched"]
    assert base.broker is not None and batched.broker is not None
    [stats] = batched.broker.brokers
    assert (stats.request_queue_at_cap_share or 0) < THRESHOLDS.request_queue_full_share, stats
    assert (batched.broker.produce_requests_per_s or 0) < (base.broker.produce_requests_per_s or 0)
    assert (batched.broker.network_idle_ratio or 0) > (base.broker.network_idle_ratio or 1)
    assert batched.attribution is not None and batched.attribution.cause != "request queue full"


def test_the_closing_lines_say_before_and_after(
    pressure_results: Path, pressure_runs: dict[str, RunRecord]
) -> None:
    """A pressure sweep's before -> after lines (python -m tuner.render.pressure_summary), printed
    from the pressure lab's run records."""
    shown = subprocess.run(
        [sys.executable, "-m", "tuner.render.pressure_summary", str(pressure_results)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    last = shown.stdout.strip().splitlines()[-7:]
    assert last[0].startswith("pressure lab, filebeat-like -> batched"), last
    labels = [line.split("  ")[1].strip() if line.startswith("  ") else "" for line in last[1:]]
    assert [lbl.split(" (")[0] for lbl in labels] == [
        "network idle", "request queue", "broker CPU", "produce requests/s", "lost", "cause"
    ], last  # fmt: skip
    before, after = pressure_runs["filebeat-like"], pressure_runs["batched"]
    assert before.broker is not None and after.broker is not None
    assert (
        f"{before.broker.produce_requests_per_s:,.0f} -> {after.broker.produce_requests_per_s:,.0f}"
        in last[4]
    )
    assert last[5].split()[3:] == ["0", "(of", f"{before.delivery.acked:,})", "->", "0", "(of",
                                   f"{after.delivery.acked:,})"]  # fmt: skip
