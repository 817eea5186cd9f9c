"""The times scripts/bench_capture.sh and scripts/pressure_loop.sh point kbt diagnose and kbt compare
at (tuner.render.capture_window), read through kbt's typed readers from files kbt writes; a damaged
file is the catalog's (capture-window-*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.capture_records import JAVA, capture_record, client_row
from tests.unit.synthetic_records import record_with_brokers
from tuner.core.errors import BadInput
from tuner.core.writes import atomic_write_all
from tuner.model.capture import shape
from tuner.render.capture import capture_files
from tuner.render.capture_window import capture_end, main, runs_end
from tuner.store import ResultsStore
from tuner.store.figures import BrokerStats


def test_a_captures_window_end_is_its_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topics = [{"name": "t", "partitions": 1, "replication_factor": 1, "records": 6_000}]
    record = capture_record([client_row("app", JAVA, "b0", 600, "t")], topics, [], start=1e9, end=1e9 + 90.25)
    atomic_write_all(capture_files(tmp_path, record, shape(record)))
    assert capture_end(tmp_path) == 1e9 + 90.25
    assert main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == "1000000090.25\n"


def test_the_runs_window_end_is_the_earliest(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    broker = BrokerStats(broker="1", produce_requests_per_s=100.0)
    ends = []
    for created in (1_800_000_100.0, 1_800_000_000.0):
        record = record_with_brokers([broker], created)
        store.write(record)
        ends.append(record.client.window_end)
    assert runs_end(tmp_path) == min(ends) == 1_800_000_000.0 - 60 + 10 + 50
    with pytest.raises(BadInput, match="no run records"):
        runs_end(tmp_path / "none")


def test_the_pressure_loop_without_a_lab_is_one_line(tmp_path: Path) -> None:
    # it read the lab's Prometheus with an inline load_state: no running lab was a traceback
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "scripts" / "pressure_loop.sh"
    kept = tmp_path / "out" / "last-loop.txt"  # a mistyped lab must not cost the last loop's results
    kept.parent.mkdir()
    kept.write_text("kept")
    done = subprocess.run(
        ["bash", str(script), str(tmp_path / "no-lab"), str(tmp_path / "out")],
        env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert kept.read_text() == "kept"
    no_lab = tmp_path / "no-lab"
    assert done.stderr.splitlines() == [f"kbt: error: no running lab in {no_lab} (run 'kbt lab up')"]
