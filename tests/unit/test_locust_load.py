"""The locust load's resolution from specs, its JSON hand-over to workers, and the delivery verdict
(no network, no locust import)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.driver.locust.spec_load import LocustLoad, load_from_spec, summarize
from tuner.spec.loader import load_sweep

QUNAR = repo_root() / "loadtests" / "qunar-logs.yaml"
WORKLOAD = repo_root() / "loadtests" / "workloads" / "qunar-logs.yaml"


def test_a_sweep_spec_gives_its_first_or_named_run() -> None:
    first = load_from_spec(str(QUNAR), bootstrap="127.0.0.1:9")
    assert first.plan.index == 0 and first.bootstrap_servers == "127.0.0.1:9"
    assert [t.split("-locust-")[0] for t in first.topics] == [t.name for t in first.plan.workload.topics]
    assert all(t.endswith(first.run_id) for t in first.topics)
    runs = [r.name for r in load_sweep(QUNAR).runs]
    named = load_from_spec(str(QUNAR), run=runs[-1], bootstrap="x:1")
    assert len(runs) > 1 and named.plan.name == runs[-1] and named.plan.index == len(runs) - 1


def test_unknown_run_and_missing_spec_are_bad_input() -> None:
    run = load_from_spec(str(QUNAR), bootstrap="x:1").plan.name
    with pytest.raises(BadInput, match=f'did you mean "{run}"'):
        load_from_spec(str(QUNAR), run=run + "x", bootstrap="x:1")
    with pytest.raises(BadInput, match="--kbt-spec"):
        load_from_spec("", bootstrap="x:1")


def test_a_workload_spec_runs_with_client_defaults() -> None:
    load = load_from_spec(str(WORKLOAD), bootstrap="x:1")
    assert load.plan.profile.name == "client-defaults"
    # Nothing but the durability every file states, at librdkafka's own defaults.
    assert load.plan.profile.client_settings() == {
        "acks": "-1",
        "enable.idempotence": "false",
        "max.in.flight.requests.per.connection": "1000000",
        "retries": "2147483647",
    }
    assert len(load.topics) == len(load.plan.workload.topics)


def test_the_load_survives_its_json_hand_over(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("2024-05-01 INFO a line\n2024-05-01 WARN another line\n")
    spec = tmp_path / "w.yaml"
    spec.write_text(
        "name: w\ntopics: [{name: w, partitions: 2, replication_factor: 1}]\nproducers: 2\n"
        "rate_per_producer: 5\nmessage: {kind: log_file, path: app.log}\nduration_s: 10\nwarmup_s: 1\n"
    )
    load = load_from_spec(str(spec), bootstrap="x:1").model_copy(update={"t0": 12.5, "t_end": 30.0})
    assert load.message_path == str(log.resolve())
    back = LocustLoad.model_validate_json(load.model_dump_json())
    assert (back.t0, back.t_end, back.topics) == (12.5, 30.0, load.topics)
    source = back.source_workload().message
    assert getattr(source, "resolved_path", None) == log.resolve()  # restored on the worker


def _report(**counts: int) -> dict[str, object]:
    base = {"producers": 2, "sent": 100, "acked": 100, "consumed": 100, "lost": 0, "verified": True}
    return {**base, **counts}


def test_summary_is_ok_only_when_every_process_verified_without_loss() -> None:
    ok = summarize({"w1": _report(), "w2": _report()}, {"w1", "w2"}, ["t"])
    assert ok["ok"] and ok["acked"] == 200 and ok["producers"] == 4 and ok["processes"] == 2
    assert "verified over 2 process(es)" in ok["line"]
    lost = summarize({"w1": _report(lost=1, consumed=99), "w2": _report()}, {"w1", "w2"}, ["t"])
    assert not lost["ok"] and lost["lost"] == 1
    missing = summarize({"w1": _report()}, {"w1", "w2"}, ["t"])
    assert not missing["ok"] and missing["missing"] == ["w2"] and "no report from w2" in missing["line"]
    broken = summarize({"w1": {**_report(), "verified": False, "error": "KafkaException: x"}}, {"w1"}, [])
    assert not broken["ok"] and broken["errors"] == ["w1: KafkaException: x"]
    assert not summarize({}, set(), [])["ok"]  # nothing reported: nothing verified
