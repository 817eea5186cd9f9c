"""The chaos suite's lab: 3 brokers, tiered storage, every client connection through Toxiproxy.

It is a lab of its own (the session `lab` of tests/integration has no proxies), brought up once for
the whole suite and stopped at the end:

    KBT_TEST_CHAOS_BASE_PORT   first port of that lab (default 19500; the lab uses P..P+200)
    KBT_TEST_CHAOS_LAB_DIR     reuse a running lab instead (kbt lab up --tiered --via-toxiproxy)
    KBT_CHAOS_RESULTS          keep the run records, each run's output and suite.json (timings,
                               load averages) there for `python -m tests.chaos.reliability_doc`

Run it with `make test-chaos`.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tuner.lab import Lab, LabConfig, LabState, load_state

CHAOS_BASE_PORT = 19500

_SUITE: dict[str, Any] = {"started": time.time(), "tests": {}, "load": [os.getloadavg()[0]]}


@pytest.fixture(scope="session")
def chaos_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    reuse = os.environ.get("KBT_TEST_CHAOS_LAB_DIR")
    if reuse:
        state = load_state(Path(reuse))
        if len(state.brokers) != 3 or not state.tiered or not state.config.via_toxiproxy:
            pytest.fail(
                "KBT_TEST_CHAOS_LAB_DIR must be a 3-broker lab with tiered storage behind Toxiproxy"
                " (kbt lab up --profile chaos)"
            )
        _SUITE["lab"] = "reused"
        yield state
        return
    config = LabConfig(
        profile="chaos",
        base_port=int(os.environ.get("KBT_TEST_CHAOS_BASE_PORT", CHAOS_BASE_PORT)),
        lab_dir=tmp_path_factory.mktemp("chaos-lab"),
    )
    running = Lab(config)
    started = time.monotonic()
    state = running.up(timeout_s=300)
    _SUITE["lab"] = f"own, healthy in {time.monotonic() - started:.0f} s"
    try:
        yield state
    finally:
        running.down()


@pytest.fixture(scope="session")
def chaos_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("KBT_CHAOS_RESULTS")
    path = Path(where) if where else tmp_path_factory.mktemp("chaos-results")
    path.mkdir(parents=True, exist_ok=True)
    return path


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        entry: dict[str, Any] = {"outcome": report.outcome, "duration_s": round(report.duration, 1)}
        if report.skipped and isinstance(report.longrepr, tuple):  # (file, line, "Skipped: why")
            entry["reason"] = str(report.longrepr[2]).removeprefix("Skipped: ")
        _SUITE["tests"][report.nodeid.split("::")[-1]] = entry
        _SUITE["load"].append(os.getloadavg()[0])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    where = os.environ.get("KBT_CHAOS_RESULTS")
    if not where:
        return
    load = _SUITE["load"]
    summary = {
        "started": _SUITE["started"],
        "wall_s": round(time.time() - _SUITE["started"], 1),
        "exit_status": int(exitstatus),
        "lab": _SUITE.get("lab", "not started"),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "load_1m": {"min": min(load), "max": max(load), "mean": round(sum(load) / len(load), 2)},
        "tests": _SUITE["tests"],
    }
    Path(where).mkdir(parents=True, exist_ok=True)
    (Path(where) / "suite.json").write_text(json.dumps(summary, indent=2) + "\n")
