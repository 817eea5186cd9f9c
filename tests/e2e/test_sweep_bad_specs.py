"""`kbt sweep` on bad specs: one clear line on stderr, exit 2, no traceback, nothing started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.bad_inputs import GOOD_ENGINE_STRESS
from tests.e2e.kbt_process import kbt
from tuner.driver.filebeat.builds import filebeat_builds

pytestmark = pytest.mark.e2e

GOOD = """\
name: e2e
workload:
  name: e2e
  topics: [{name: e2e, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
  warmup_s: 1
profiles:
  - {name: batched, linger_ms: 50, compression: lz4}
"""

BAD = {
    "unknown key": (
        GOOD.replace("linger_ms", "lingr_ms"),
        'unknown key "lingr_ms" (did you mean "linger_ms"?)',
    ),
    "negative rate": (GOOD.replace("rate_per_producer: 10", "rate_per_producer: -1"), "rate_per_producer"),
    "warm-up >= duration": (GOOD.replace("warmup_s: 1", "warmup_s: 5"), "must be shorter than duration_s"),
    "too many partitions": (GOOD.replace("partitions: 3", "partitions: 100000"), "partitions"),
    "batch bytes above message.max.bytes": (
        GOOD.replace("linger_ms: 50", "batch_bytes: 9000000"),
        "exceeds the broker's message.max.bytes 1048588",
    ),
    "unknown compression": (GOOD.replace("lz4", "brotli"), 'compression: unknown value "brotli"'),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_spec_is_one_line_exit_2(case: str, tmp_path: Path) -> None:
    text, expected = BAD[case]
    (tmp_path / "spec.yaml").write_text(text)
    proc = kbt("sweep", "spec.yaml", "--lab-dir", str(tmp_path / "no-lab"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kbt: error: spec.yaml")
    assert expected in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "results").exists()


def test_dry_run_lists_runs(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(GOOD)
    proc = kbt("sweep", "spec.yaml", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "batched: 2 producers x 10/s" in proc.stdout
    assert "compression.type=lz4" in proc.stdout
    assert "{" not in proc.stdout  # settings as key=value, not a Python dict


def test_dry_run_json_is_one_document(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(GOOD)
    proc = kbt("sweep", "spec.yaml", "--dry-run", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == "sweep --dry-run" and doc["schema_version"] == 2
    batched = next(r for r in doc["runs"] if r["name"] == "batched")
    assert batched["producers"] == 2 and batched["client_config"]["compression.type"] == "lz4"
    assert batched["client"] == "librdkafka"  # the kind, and each topic's fields apart
    assert [set(t) for t in batched["topics"]] == [{"name", "partitions"}] * len(batched["topics"])
    assert all(isinstance(t["partitions"], int) for t in batched["topics"])
    assert "batched: 2 producers" in proc.stderr  # the human lines moved to stderr


def test_dry_run_shows_the_varied_value_over_a_team_file(tmp_path: Path) -> None:
    """A team file's linger.ms=0.5 under `vary: {profile.linger_ms: [0.5, 5]}`: the run named
    linger_ms5 runs 5 (it ran the file's 0.5, as did its neighbour), and the dry run says so."""
    (tmp_path / "producer.properties").write_text("linger.ms=0.5\nacks=all\n")
    spec = GOOD.replace("{name: batched, linger_ms: 50, compression: lz4}", "librdkafka:producer.properties")
    (tmp_path / "spec.yaml").write_text(spec + "vary:\n  profile.linger_ms: [0.5, 5]\n")
    proc = kbt("sweep", "spec.yaml", "--dry-run", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = {r["name"]: r["client_config"] for r in json.loads(proc.stdout)["runs"]}
    assert {name: conf["linger.ms"] for name, conf in runs.items()} == {
        "producer-linger_ms0.5": "0.5",
        "producer-linger_ms5": "5",
    }
    assert all(conf["acks"] == "all" for conf in runs.values())  # the rest of the file runs as written
    assert "producer-linger_ms5: 2 producers" in proc.stderr and "linger.ms=5," in proc.stderr


def test_missing_lab_is_an_environment_problem(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(GOOD)
    proc = kbt("sweep", "spec.yaml", "--lab-dir", str(tmp_path / "no-lab"), cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.startswith("kbt: error: no running lab in")
    assert len(proc.stderr.strip().splitlines()) == 1


_FORMAT = "{name: fmt, client: filebeat, filebeat: {output.kafka.codec.format.string: '%{[message'}}"


@pytest.mark.skipif(not filebeat_builds(), reason="no real Filebeat build: run make install")
@pytest.mark.parametrize("command", ["sweep", "stress"])
def test_a_file_real_filebeat_refuses_stops_the_dry_run(command: str, tmp_path: Path) -> None:
    """kbt's schema takes the format string; real Filebeat, which the run starts, refuses it: the
    dry run says so in one line (it listed the run, which then failed to start)."""
    if command == "sweep":
        spec = GOOD.replace("{name: batched, linger_ms: 50, compression: lz4}", _FORMAT)
    else:
        spec = GOOD_ENGINE_STRESS.replace("{name: fb, client: filebeat}", _FORMAT)
    (tmp_path / "spec.yaml").write_text(spec)
    proc = kbt(command, "spec.yaml", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2 and "profile fmt" not in proc.stdout, proc.stdout  # nothing listed
    [line] = proc.stderr.splitlines()
    assert line.startswith("kbt: error: profile fmt: filebeat 7.17") and line.endswith(
        "accessing 'output.kafka.codec.format.string' (source:'filebeat.yml')"
    ), line
