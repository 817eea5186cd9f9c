"""`kbt diagnose` right both ways on a real pressure lab (issue 25, item 3).

The integration tier's shared pressure lab (`pressure_lab`: `kbt lab up --profile pressure`, 1
broker, one network thread, one handler, queued.max.requests 16, 2.5 ms per produce request) serves four
verdicts, in the order its idle meters allow (the file name sorts it before the lab's other users,
so it usually finds the lab quiet; when not, it waits for a minute without produce traffic):

- warm-up: a window opening right after the broker's start (taken after the fact with --end): no
  critical, the idle ratios left out and said so;
- idle: no traffic, past the warm-up: healthy;
- contended host: no traffic while a bounded CPU burner (one spinning process per core, 10 s) keeps
  the host busy: no critical, never "busy moving bytes";
- pressure: the Filebeat-like profile of loadtests/pressure.yaml (one tiny request per record, 24
  producers) for 15 s: critical, "request queue full: the handlers cannot keep up with the produce
  request count", with the bytes per request, the cut and the idle after it, and the run's topic
  first among the busiest topics.

The pressure run comes last: Kafka's network idle meter averages over a minute and would carry the
load into the idle windows.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labhelp import diagnose_json
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus
from tuner.measure.series_names import BROKER_JOB, BROKER_START_SERIES, NETWORK_IDLE_SERIES, REQUESTS_SERIES
from tuner.model.diagnosis_rules import QUEUE_FULL_CAUSE
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.record import RunRecord

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PRESSURE_S = 15
BURN_S = 10
# A shared 2-core host can hold an fsync or a handler for hundreds of ms ("slow disk", "CPU or GC
# pauses"): those findings are about the host; only their thresholds are raised.
HOST_THRESHOLDS = "request_queue_p99_ms: 5000\nflush_p99_ms: 5000\n"


def _started(lab: LabState) -> float:
    [sample] = Prometheus(lab.prometheus_url).instant(f'{BROKER_START_SERIES}{{job="{BROKER_JOB}"}}')
    return sample.value


def _first_scrape(lab: LabState, start: float) -> float:
    """When Prometheus first held the broker's network idle ratio."""
    expr = f'{NETWORK_IDLE_SERIES}{{job="{BROKER_JOB}"}}'
    [series] = Prometheus(lab.prometheus_url).samples(expr, start, min(time.time(), start + 600))
    return series.points[0][0]


def _last_produce(lab: LabState, start: float) -> float:
    """When the broker last took a produce request (its JVM start when never)."""
    now = time.time()
    expr = f'{REQUESTS_SERIES}{{job="{BROKER_JOB}",request="Produce"}}'
    last = start
    for series in Prometheus(lab.prometheus_url).samples(expr, max(start, now - 600), now):
        for (_, before), (t, after) in zip(series.points, series.points[1:], strict=False):
            if after > before:
                last = max(last, t)
    return last


def _diagnose(lab: LabState, tmp_path: Path, end: float, window_s: float) -> tuple[int, dict[str, Any]]:
    thresholds = tmp_path / "thresholds.yaml"
    thresholds.write_text(HOST_THRESHOLDS + f"queued_max_requests: {lab.config.queued_max_requests}\n")
    return diagnose_json(lab.prometheus_url, end, window_s, lab.config.scrape_interval_s, thresholds)


def _sleep_until(t: float) -> None:
    time.sleep(max(0.0, t - time.time()))


def _no_alarm(code: int, d: dict[str, Any]) -> None:
    assert code != ExitStatus.CRITICAL and d["status"] != "critical", d["headline"]
    kinds = {f["kind"] for b in d["brokers"] for f in b["findings"]}
    assert not kinds & {"network_bytes", "small_requests", "request_queue_full"}, d["headline"]
    assert "busy moving bytes" not in d["headline"]


def _burn(seconds: float) -> list[subprocess.Popen[bytes]]:
    """One process per core spinning for `seconds` (each stops itself; the test also waits)."""
    spin = f"import time\nt = time.monotonic() + {seconds}\nwhile time.monotonic() < t: pass\n"
    return [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(os.cpu_count() or 2)]


def _pressure_run(lab: LabState, results: Path) -> RunRecord:
    loaded = load_sweep(repo_root() / "loadtests" / "pressure.yaml")
    [plan] = [p for p in loaded.runs if p.name == "filebeat-like"]
    workload = plan.workload.model_copy(update={"duration_s": PRESSURE_S, "warmup_s": 4})
    plan = plan.model_copy(update={"workload": workload, "index": 0})
    outcome = sweep_runner(lab_dir=lab.lab_dir, results=results).run(
        type(loaded)(path=loaded.path, spec=loaded.spec, runs=[plan])
    )
    [record] = outcome.records
    return record


def test_diagnose_right_both_ways(pressure_lab: LabState, tmp_path: Path) -> None:
    lab = pressure_lab
    start = _started(lab)
    warmup = THRESHOLDS.idle_meter_warmup_s

    # Warm-up: a window opening right after the broker's start (the one the false alarm
    # came from), until Prometheus held a few scrapes of it (fewer reads as unmeasured, by design).
    end = _first_scrape(lab, start) + (THRESHOLDS.scrape_samples_min + 1) * lab.config.scrape_interval_s
    _sleep_until(end + lab.config.scrape_interval_s)  # a lab just started: the window must be past
    code, d = _diagnose(lab, tmp_path, end=end, window_s=end - start - 1)
    _no_alarm(code, d)
    assert d["brokers"][0]["cause"] == "idle meter warm-up", d["headline"]

    # Idle, past the warm-up and a minute after any produce traffic (the meter averages a minute).
    opened = max(time.time(), start + warmup + 2, _last_produce(lab, start) + 62)
    _sleep_until(opened + 6)
    code, d = _diagnose(lab, tmp_path, end=opened + 6, window_s=6)
    assert code == ExitStatus.OK and d["status"] == "healthy", d["headline"]

    # A host busy with other work, no Kafka traffic.
    burners = _burn(BURN_S)
    burn_start = time.time()
    for p in burners:
        p.wait(BURN_S + 30)
    code, d = _diagnose(lab, tmp_path, end=time.time(), window_s=time.time() - burn_start - 2)
    _no_alarm(code, d)

    # The pressure regime.
    record = _pressure_run(lab, tmp_path / "results")
    assert record.delivery.lost == 0, record.problems
    window = record.client.window_end - record.client.window_start
    code, d = _diagnose(lab, tmp_path, end=record.client.window_end, window_s=window)
    b = d["brokers"][0]
    assert code == ExitStatus.CRITICAL and d["status"] == "critical", d["headline"]
    assert b["cause"] == "request queue full", d["headline"]
    lead = b["findings"][0]
    assert lead["kind"] == "request_queue_full" and lead["summary"].startswith(QUEUE_FULL_CAUSE)
    # A few ~900 B log lines per request (the clients gather what arrives while 5 requests are out),
    # far from the 16 KB batching reaches.
    assert lead["evidence"]["bytes_per_request"] < 8192
    assert b["requests_cut"] > 2 and "can cut produce requests" in lead["summary"]
    assert b["predicted_idle_after"][0] > d["snapshot"]["brokers"][0]["network_idle_ratio"]
    [topic] = record.topics
    assert d["topics"][0]["topic"] == topic and d["topics"][0]["small"]
