"""scripts/bench_capture.sh's verdict (tuner.render.capture_check): per broker within 10% / 5%,
the replay divided by the capture's scale, and the same client kinds; every file read through the
model kbt reads it with, so a hand-damaged one is one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.capture_records import JAVA, RDKAFKA, capture_record, client_row
from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.core.writes import atomic_write_all
from tuner.model.capture import ShapeOptions, shape
from tuner.render.capture import capture_files
from tuner.render.capture_check import check_lines, main

DIAGNOSIS = repo_root() / "tests/unit/data/forecast/saturated-diagnosis.json"
TOPICS = [
    {"name": "orders", "partitions": 3, "replication_factor": 1, "records": 100_000},
    {"name": "logs", "partitions": 3, "replication_factor": 1, "records": 100_000},
]


def _diagnosis(requests: Any, records: float) -> str:
    """A `kbt diagnose --json` document of one broker with these figures (1000 B a request)."""
    document = json.loads(DIAGNOSIS.read_text())
    broker = document["snapshot"]["brokers"][0]
    bytes_in = requests * 1000 if isinstance(requests, float) else 1000.0
    broker.update(produce_requests_per_s=requests, bytes_in_per_s=bytes_in, messages_in_per_s=records)
    document["snapshot"]["brokers"] = [broker]
    return json.dumps(document)


def _capture(out: Path, lab_producers: int) -> None:
    """A Java group and a librdkafka group, 2 producers each: scale lab_producers / 4."""
    rows = [
        client_row("producer-1", JAVA, "b0", 5_000, "orders", connections=2),
        client_row("svc", RDKAFKA, "b0", 5_000, "logs", connections=2),
    ]
    record = capture_record(rows, TOPICS, [])
    options = ShapeOptions(lab_producers=lab_producers, infer_linger=False)
    atomic_write_all(capture_files(out, record, shape(record, options)))


def _out(tmp_path: Path, replay_requests: Any = 54.0, replay_records: float = 520.0) -> Path:
    _capture(tmp_path / "capture", 2)  # half the producers in the lab
    _capture(tmp_path / "replay-capture", 48)
    (tmp_path / "source-diagnosis.json").write_text(_diagnosis(100.0, 1000.0))
    (tmp_path / "replay-diagnosis.json").write_text(_diagnosis(replay_requests, replay_records))
    return tmp_path


def test_capture_check_holds_the_replay_to_the_source(tmp_path: Path) -> None:
    lines, ok = check_lines(_out(tmp_path))  # half the producers: 108 requests/s and 1040 records/s
    assert ok, lines
    assert lines[0].startswith("per broker, source -> replay (replay / scale 0.5)")
    assert "same groups: yes (java, librdkafka)" in lines
    lines, ok = check_lines(_out(tmp_path, replay_records=560.0))  # records +12%
    assert not ok and any("OUTSIDE" in line for line in lines)


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        # a figure of the wrong type (was: TypeError, list / float)
        (
            lambda out: _out(out, replay_requests=[54]),
            "replay-diagnosis.json: not a `kbt diagnose --json` file",
        ),
        # a figure past its bound
        (lambda out: _out(out, replay_requests=2e9), "replay-diagnosis.json: invalid diagnosis: snapshot"),
        # a capture's plan damaged by hand (was: TypeError formatting a string scale)
        (lambda out: _plan_scale(_out(out), "half"), "capture/capture.json: invalid capture plan: scale"),
        # a capture's plan past what a capture can be
        (lambda out: _plan_scale(_out(out), 4.0), "capture/capture.json: invalid capture plan: scale"),
    ],
)
def test_a_damaged_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: Any, problem: str
) -> None:
    out = damage(tmp_path)
    with pytest.raises(BadInput, match=problem.replace("`", ".").replace("(", ".")):
        check_lines(out)
    assert main([str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kbt: error: ") and problem in err, err


def _plan_scale(out: Path, scale: Any) -> Path:
    path = out / "capture" / "capture.json"
    document = json.loads(path.read_text())
    document["plan"]["scale"] = scale
    path.write_text(json.dumps(document))
    return out
