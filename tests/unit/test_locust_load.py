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


_SECURED = """\
name: team
bootstrap_servers: [k1.team.example:9094, k2.team.example:9094]
client:
  properties:
    security.protocol: SASL_PLAINTEXT
    sasl.mechanism: SCRAM-SHA-512
    sasl.username: svc-load
    sasl.password: ${KBT_UNIT_LOCUST_PW}
limits: {max_msgs_per_s: 20000}
"""


def test_a_target_file_gives_every_process_its_security_from_its_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--kbt-target`: the master's load names the target's brokers and carries its client security
    with the secret as the file's ${VAR} reference; the JSON a worker is handed holds no credential,
    and the worker's clients (producers, the admin client, the read-back) resolve it from the
    worker's own environment. Unit-tested on the settings the clients are built from: no test
    fixture starts a secured cluster cheaply (a secured lab is a full `kbt lab up`)."""
    target = tmp_path / "team.yaml"
    target.write_text(_SECURED)
    monkeypatch.setenv("KBT_UNIT_LOCUST_PW", "master-s3cret")
    load = load_from_spec(str(QUNAR), target=str(target), users=2)
    assert load.bootstrap_servers == "k1.team.example:9094,k2.team.example:9094"
    assert load.client_properties["sasl.password"] == "${KBT_UNIT_LOCUST_PW}"
    handed = load.model_dump_json()
    assert "master-s3cret" not in handed and "${KBT_UNIT_LOCUST_PW}" in handed
    monkeypatch.setenv("KBT_UNIT_LOCUST_PW", "worker-s3cret")  # a worker's machine, its own value
    worker = LocustLoad.model_validate_json(handed)
    conf = worker.connection().conf({"linger.ms": 5, "security.protocol": "PLAINTEXT"})
    assert conf["bootstrap.servers"] == load.bootstrap_servers
    assert conf["security.protocol"] == "SASL_PLAINTEXT"  # a profile's setting never replaces it
    assert (conf["sasl.mechanisms"], conf["sasl.username"]) == ("SCRAM-SHA-512", "svc-load")
    assert conf["sasl.password"] == "worker-s3cret" and conf["linger.ms"] == 5
    monkeypatch.delenv("KBT_UNIT_LOCUST_PW")
    with pytest.raises(BadInput, match="KBT_UNIT_LOCUST_PW"):  # a worker without it: one line
        worker.connection()
    plain = load_from_spec(str(QUNAR), bootstrap="127.0.0.1:9")
    assert plain.client_properties == {} and plain.connection().properties == {}


def test_a_target_files_refusals_are_one_line_before_any_topic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "team.yaml"
    target.write_text(_SECURED)
    monkeypatch.delenv("KBT_UNIT_LOCUST_PW", raising=False)
    with pytest.raises(BadInput, match="KBT_UNIT_LOCUST_PW"):  # unset on the master: said at once
        load_from_spec(str(QUNAR), target=str(target))
    monkeypatch.setenv("KBT_UNIT_LOCUST_PW", "s3cret")
    with pytest.raises(BadInput, match="--kbt-target and --kbt-bootstrap both name the brokers"):
        load_from_spec(str(QUNAR), bootstrap="x:1", target=str(target))
    rate = float(load_from_spec(str(QUNAR), target=str(target)).plan.workload.rate_per_producer)
    users = int(20000 / rate) + 1  # one user past the target's cap of 20000 msgs/s
    with pytest.raises(BadInput, match="over team's cap of 20000"):
        load_from_spec(str(QUNAR), target=str(target), users=users)
    literal = tmp_path / "literal.yaml"
    literal.write_text(_SECURED.replace("${KBT_UNIT_LOCUST_PW}", "written-in-the-file"))
    with pytest.raises(BadInput, match="must be a \\$\\{VAR\\} reference") as caught:
        load_from_spec(str(QUNAR), target=str(literal))
    assert "written-in-the-file" not in caught.value.message
