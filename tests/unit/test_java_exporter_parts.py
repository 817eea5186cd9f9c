"""The Java engine's client exporter without a broker: each process's exporter in its plan, the note
when a port is taken, the plan the engine reads with an exporter in it, and the compression-ratio
panel query that takes the client's own ratio where it exports one (promtool evaluates it)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.driver.engine import Placement
from tuner.driver.engine_process import ProcessSite
from tuner.driver.java_plan import FINAL_SCRAPE_S, engine_dir, exporter_notes, exporter_plan, process_plans
from tuner.measure.promql import promql
from tuner.spec.workload import WorkloadSpec


def _workload(processes: int) -> WorkloadSpec:
    return WorkloadSpec.model_validate(
        {
            "name": "w",
            "topics": [{"name": "t", "partitions": 3}],
            "producers": 3,
            "processes": processes,
            "rate_per_producer": 100,
            "message": {"kind": "generated", "bytes": 200},
            "duration_s": 10,
            "warmup_s": 2,
        }
    )


def test_each_process_serves_on_its_own_port(tmp_path: Path) -> None:
    placement = Placement("r", ("t",), "b", exporter_ports=(25100, 25101))
    plans = process_plans(_workload(3), "", ProcessSite(placement, "t", tmp_path, tmp_path / "c", 0))
    exporters = [p.plan["exporter"] for p in plans]
    assert exporters[0] == {
        "host": "127.0.0.1",
        "port": 25100,
        "process": "process-0",
        "final_scrape_s": FINAL_SCRAPE_S,
    }
    assert exporters[1]["port"] == 25101 and exporters[1]["process"] == "process-1"
    assert exporters[2] is None  # fewer ports than processes: that one goes unexported
    assert exporter_plan([], 0) is None


def test_a_taken_port_is_one_note_and_no_failure() -> None:
    results: list[dict[str, Any]] = [
        {"exporter": {"port": 25100, "serving": True, "final_scrape": True}},
        {"exporter": {"port": 25101, "serving": False, "problem": "Address already in use"}},
        {"exporter": None},
        {},
    ]
    [note] = exporter_notes(results)
    assert "127.0.0.1:25101" in note and "Address already in use" in note and "unexported" in note


def _engine() -> list[str]:
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.skip("the Java engine is not built (make install)")
    from tuner.driver.java_plan import engine_command

    return engine_command()


def _run_engine(plan: dict[str, Any], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return subprocess.run(
        [*_engine(), "-plan", str(path)], capture_output=True, text=True, timeout=SUBPROCESS_CAP_S
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_the_engine_reads_the_plan_with_its_exporter(tmp_path: Path) -> None:
    """The plan Python writes parses in the engine: with no broker listening it gets as far as the
    topic's metadata (and times out there), not a plan error."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"message": "x" * 40, "key": None, "bytes": 63}) + "\n")
    placement = Placement("r", ("t",), f"127.0.0.1:{_free_port()}", exporter_ports=(_free_port(),))
    [pp] = process_plans(_workload(1), "max.block.ms=300\n", ProcessSite(placement, "t", tmp_path, corpus, 0))
    out = _run_engine(pp.plan, tmp_path)
    assert out.returncode == 2
    # The client's own warnings (its network thread) may come after the engine's one line.
    [line] = [x for x in out.stderr.splitlines() if x.startswith("java-engine: ")]
    assert "Topic t not present in metadata" in line, out.stderr


def test_the_engine_rejects_a_bad_exporter_in_one_line(tmp_path: Path) -> None:
    placement = Placement("r", ("t",), "127.0.0.1:1", exporter_ports=(0,))
    [pp] = process_plans(_workload(1), "", ProcessSite(placement, "t", tmp_path, tmp_path / "c", 0))
    out = _run_engine(pp.plan, tmp_path)
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("java-engine: bad plan") and "exporter.port" in line


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_compression_panel_takes_the_clients_own_ratio_else_derives_it(tmp_path: Path) -> None:
    """Java exports its per-batch ratio (a request carries several partition batches, so the
    derivation would be off by the batches per request); librdkafka's is derived as before."""
    java = 'run="r",producer="p0",client="java"'
    rdk = 'run="r",producer="p1",client="librdkafka"'
    series = [
        # Java: its own ratio 2.5; the derived figure would read 4 x that (4 batches per request).
        (f"kbt_client_compression_ratio{{{java}}}", "2.5+0x20"),
        (f"kbt_client_bytes_acked_total{{{java}}}", "0+60000x20"),
        (f"kbt_client_records_acked_total{{{java}}}", "0+600x20"),
        (f"kbt_client_records_per_request{{{java}}}", "40+0x20"),
        (f"kbt_client_batch_bytes{{{java}}}", "400+0x20"),
        # librdkafka: 100 B records, 16 per batch, 256 B batches on the wire: 6.25x.
        (f"kbt_client_bytes_acked_total{{{rdk}}}", "0+60000x20"),
        (f"kbt_client_records_acked_total{{{rdk}}}", "0+600x20"),
        (f"kbt_client_records_per_request{{{rdk}}}", "16+0x20"),
        (f"kbt_client_batch_bytes{{{rdk}}}", "256+0x20"),
    ]
    test = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "promql_expr_test": [
                    {
                        # rate() extrapolates: compared to 0.01
                        "expr": f"round({promql('CLIENT_COMPRESSION_RATIO', '5m')}, 0.01)",
                        "eval_time": "10m",
                        "exp_samples": [
                            {"labels": '{producer="p0",run="r"}', "value": 2.5},
                            {"labels": '{producer="p1",run="r"}', "value": 6.25},
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "compression_test.yml"
    YAML().dump(test, path)
    out = subprocess.run(
        ["promtool", "test", "rules", path.name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=SUBPROCESS_CAP_S,
    )
    assert out.returncode == 0, out.stdout + out.stderr
