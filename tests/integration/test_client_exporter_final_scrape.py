"""The librdkafka engine's client exporter waits after its drain for one more Prometheus scrape, so
the last scraped value of each counter is the run's final count (without the wait the counts acked
during the drain never reached Prometheus). Real lab (the session lab's scrapes), a short open-loop run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.labhelp import busy_host_only
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep

pytestmark = pytest.mark.integration

# A short open-loop run of two producers in one process (JSON is YAML).
SPEC = {
    "name": "rdexp",
    "workload": {
        "name": "rdexp",
        "topics": [{"name": "rdexp", "partitions": 3}],
        **{"producers": 2, "processes": 1, "rate_per_producer": 200, "duration_s": 6, "warmup_s": 1},
        "message": {"kind": "generated", "bytes": 300},
    },
    "profiles": [{"name": "rd-exported", "linger_ms": 200}],
    "name_format": "{profile}",
}


def test_the_last_scrape_carries_the_final_counts(
    lab: LabState, prometheus: Prometheus, tmp_path: Path
) -> None:
    spec = tmp_path / "rdexp.yaml"
    spec.write_text(json.dumps(SPEC))
    runner = sweep_runner(lab_dir=lab.lab_dir, results=tmp_path / "results")
    [record] = runner.run(load_sweep(spec)).records
    assert busy_host_only(record.status, record.problems), record.problems
    run = f'run="{record.run_id}",client="librdkafka"'
    last = prometheus.instant(f"sum(last_over_time(kbt_client_records_acked_total{{{run}}}[10m]))")
    assert last, "no kbt_client_records_acked_total series for the run"
    assert float(last[0].value) == record.client.records_acked_total
    offered = prometheus.instant(f"sum(last_over_time(kbt_client_offered_records_total{{{run}}}[10m]))")
    assert offered and float(offered[0].value) >= record.client.records_acked_total
