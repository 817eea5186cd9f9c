"""`kbt recommend --live`, `kbt forecast` and `kbt report` through a target file naming the session
lab (loopback, kbt's own dialect): the trials run as records with every acked record verified on
topics under the target's prefix, deleted afterwards; forecast takes its baseline from the target's
brokers now; report fetches missing time series through the target's Prometheus. `kbt target
health` gives go while partitions are fully replicated and a group's lag is within its limit, no-go
past it, and says that disk headroom cannot be measured on a Prometheus without node_exporter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from tuner.lab import LabState
from tuner.model.cost import BrokerCostModel, LinearFit

pytestmark = pytest.mark.integration

PREFIX = "kbt-tc-"
SPEC = """\
name: via-target
workload:
  name: vt
  topics: [{name: vt, partitions: 3, replication_factor: 3}]
  producers: 1
  rate_per_producer: 200
  message: {kind: generated, bytes: 512}
  duration_s: 5
  warmup_s: 1
profiles:
  - {name: l5, client: librdkafka, linger_ms: 5, acks: all}
"""


def _kbt(*args: str, cwd: Path, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    root = str(Path(__file__).resolve().parents[2])
    return subprocess.run(
        [sys.executable, "-m", "tuner", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": root},
    )


def _topics(lab: LabState) -> set[str]:
    admin = AdminClient({"bootstrap.servers": lab.bootstrap_servers, "socket.timeout.ms": 5000})
    return {t for t in admin.list_topics(timeout=10).topics if t.startswith(PREFIX)}


def test_recommend_forecast_report_through_a_target_file(lab: LabState, tmp_path: Path) -> None:
    target = tmp_path / "target.yaml"
    target.write_text(
        f"name: lab-as-target\nbootstrap_servers: [{lab.bootstrap_servers}]\n"
        f'prometheus: {{url: "{lab.prometheus_url}", scrape_interval_s: {lab.config.scrape_interval_s:g}}}\n'
        f"dialect: auto\ntopic_prefix: {PREFIX}\nlimits: {{max_msgs_per_s: 1000}}\n"
    )
    (tmp_path / "spec.yaml").write_text(SPEC)
    results = tmp_path / "results"

    rec = _kbt("recommend", "--results", str(results), "--live", "spec.yaml", "--target", str(target),
               "--client", "librdkafka", "--max-trials", "2", "--out", "out", cwd=tmp_path)  # fmt: skip
    assert rec.returncode in (0, 3), rec.stdout[-3000:] + rec.stderr
    records = [json.loads(p.read_text()) for p in (results / "vt-recommend").glob("*.json")]
    assert 1 <= len(records) <= 2, rec.stdout[-2000:]
    for record in records:
        d = record["delivery"]
        assert d["verified"] and d["lost"] == 0 and d["acked"] == d["consumed"] > 0
        assert all(t.startswith(PREFIX) for t in record["topics"]), record["topics"]
        assert record["broker"] is not None  # measured through the target's Prometheus
    assert list((tmp_path / "out").glob("*/recommendation.json"))
    assert _topics(lab) == set(), "trial topics remain"

    fit = LinearFit(requests_coef=1e-4, bytes_coef=0.0, intercept=0.05, r2=0.95, n=9, rmse=0.01)
    (tmp_path / "model.json").write_text(BrokerCostModel(network=fit, handler=fit).model_dump_json())
    fc = _kbt("forecast", "--target", str(target), "--cost-model", "model.json", "--window", "1m",
              "--peak", "2x", "--json", "-", cwd=tmp_path)  # fmt: skip
    assert fc.returncode == 0, fc.stderr
    forecast = json.loads(fc.stdout)
    assert forecast["rows"] and forecast["rows"][0]["brokers"] == 3, forecast["rows"]
    # today reproduced against the lab's measurement first; the replication factor read from the
    # cluster's metadata bounds brokers needed
    assert forecast["today"] and forecast["today"][0]["pools"], forecast["today"]
    admin = AdminClient({"bootstrap.servers": lab.bootstrap_servers, "socket.timeout.ms": 5000})
    topics = [t for t in admin.list_topics(timeout=10).topics if not t.startswith("__")]
    said = "lab-as-target's metadata" if topics else "replication factor 3: assumed"  # a lab with no topic
    assert any(said in a for a in forecast["assumptions"]), forecast["assumptions"]
    for row in forecast["rows"]:
        assert 1 <= row["min_brokers"] <= 3
        assert row["brokers_needed"] is None or row["brokers_needed"] >= row["min_brokers"], row

    # Drop the series saved with the records: report fetches them again through the target.
    for path in results.rglob("series/*.json"):
        path.unlink()
    out = tmp_path / "report.html"
    rep = _kbt("report", "--results", str(results), "--target", str(target), "--out", str(out), cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert out.stat().st_size > 0
    assert len(list(results.rglob("series/*.json"))) == len(records), rep.stdout + rep.stderr


def test_sweeps_and_stresses_read_a_target_files_prometheus_through_its_dialect(
    lab: LabState, tmp_path: Path
) -> None:
    """The saved time series of a sweep or a stress, and the locust timeline's broker gates, query
    the target's Prometheus as its broker measurement does (its auth and metric dialect, detected
    here from the lab's real series), not its bare URL."""
    from tuner.runner.stress.locust_processes import LocustOptions
    from tuner.runner.stress.run_stages import StressRunner
    from tuner.runner.stress.target_wiring import stress_runner
    from tuner.runner.wiring import sweep_runner
    from tuner.target.registry import resolve_target

    target = tmp_path / "target.yaml"
    target.write_text(
        f"name: lab-as-target\nbootstrap_servers: [{lab.bootstrap_servers}]\n"
        f'prometheus: {{url: "{lab.prometheus_url}"}}\ndialect: auto\n'
    )
    sweep = sweep_runner(None, tmp_path / "results", target_file=target)
    ports = LocustOptions(master_port=1, web_port=2)
    stress = stress_runner(None, tmp_path / "results", ports, target_file=target)
    alone = StressRunner(resolve_target(None, target), stress.store, LocustOptions())  # no stage parts
    for prom in (sweep.store.prometheus, stress.store.prometheus, stress.prometheus, alone.prometheus):  # type: ignore[attr-defined]
        assert prom is not None and prom.translator is not None
        assert prom.translator.dialect.name == "kbt"


def test_target_check_reads_the_kafka_version(lab: LabState, tmp_path: Path) -> None:
    """kbt's jmx rules export app-info's Version: the check reports the lab's release exactly."""
    target = tmp_path / "target.yaml"
    target.write_text(
        f"name: lab-as-target\nbootstrap_servers: [{lab.bootstrap_servers}]\n"
        f'prometheus: {{url: "{lab.prometheus_url}", scrape_interval_s: {lab.config.scrape_interval_s:g}}}\n'
    )
    check = _kbt("target", "check", str(target), "--json", "-", cwd=tmp_path, timeout=60)
    assert check.returncode == 0, check.stderr
    report = json.loads(check.stdout)
    assert report["kafka_version"].startswith("4.1."), report
    assert "app-info" in report["kafka_version_source"] and report["kafka_version_note"] is None
    assert len(report["brokers"]) == len(lab.brokers)
    text = _kbt("target", "check", str(target), cwd=tmp_path, timeout=60)
    assert f"Kafka {report['kafka_version']} (from the brokers' app-info Version" in text.stdout, text.stdout
    # Without a Prometheus, only the brokers' ApiVersions answer is left: inferred, and said so.
    bare = tmp_path / "bare.yaml"
    bare.write_text(f"name: lab-bare\nbootstrap_servers: [{lab.bootstrap_servers}]\n")
    inferred = json.loads(_kbt("target", "check", str(bare), "--json", "-", cwd=tmp_path, timeout=60).stdout)
    assert inferred["kafka_version"] == "4.1.x" and "inferred" in inferred["kafka_version_source"], inferred


def test_target_health_go_no_go(lab: LabState, make_topic: Any, tmp_path: Path) -> None:
    target = tmp_path / "target.yaml"
    target.write_text(
        f"name: lab-health\nbootstrap_servers: [{lab.bootstrap_servers}]\n"
        f'prometheus: {{url: "{lab.prometheus_url}", scrape_interval_s: {lab.config.scrape_interval_s:g}}}\n'
    )
    topic = make_topic(partitions=1, replication=3)
    producer = Producer({"bootstrap.servers": lab.bootstrap_servers})
    for i in range(10):
        producer.produce(topic, value=b"x%d" % i)
    assert producer.flush(30) == 0
    group = f"kbt-health-{os.getpid()}"
    admin = AdminClient({"bootstrap.servers": lab.bootstrap_servers})
    committed = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 3)])
    admin.alter_consumer_group_offsets([committed])[group].result(timeout=30)
    try:
        health = ("target", "health", str(target), "--group", group)
        go = _kbt(*health, "--max-lag", "7", "--json", "-", cwd=tmp_path)
        assert go.returncode == 0, go.stdout + go.stderr
        report = json.loads(go.stdout)
        checks = {c["name"]: c for c in report["checks"]}
        assert report["go"] is True
        urp = checks["under_replicated_partitions"]
        assert urp["ok"] is True and urp["value"] == 0 and " of 0 partitions" not in urp["reason"]
        assert checks[f"consumer_lag:{group}"]["value"] == 7  # 10 records, committed at 3
        disk = checks["disk_headroom"]  # the lab's Prometheus scrapes no node_exporter
        assert disk["ok"] is None and disk["reason"].startswith("cannot be measured"), disk

        nogo = _kbt(*health, "--max-lag", "6", cwd=tmp_path)
        assert nogo.returncode == 1, nogo.stdout + nogo.stderr
        assert f"NO-GO        consumer_lag:{group}: 7 records behind" in nogo.stdout
        assert nogo.stdout.strip().endswith("lab-health: no-go")
    finally:
        admin.delete_consumer_groups([group])[group].result(timeout=30)
