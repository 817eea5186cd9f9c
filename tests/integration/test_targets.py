"""Real targets, on loopback only: the SASL_SSL lab used as an external cluster through a target file
and a Kafka-format client properties file (sweep and diagnose through --target, every acked record
verified, topics cleaned up, a crashed run's leftover deleted); bad and misconfigured targets fail in
one line with nothing created; and brokers exporting in the Strimzi-style and upstream-example
dialects give the same diagnosis, and the produce request rate within 5%, as kbt's own rules under
the same load. The same cluster named by Kafka-tool flags (--bootstrap-server, --command-config with
a literal password, --prometheus) sweeps the same way. One module, labs shared and small (1 broker,
no tiering)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.conftest import TEST_BASE_PORT
from tuner.core.paths import repo_root
from tuner.lab import Lab, LabConfig, LabState
from tuner.lab.security import PASSWORD_ENV, SecurityFiles
from tuner.measure.meter_warmup import idle_meters_settled_at
from tuner.measure.prometheus import Prometheus
from tuner.target import resolve_target

pytestmark = pytest.mark.integration

BASE = int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT))
SECURE_BASE, DIALECT_BASE = BASE + 250, BASE + 500
PASSWORD = "kbt-canary-target-7d6c5b4a"
PREFIX = "kbt-tt-"
SPEC = """\
name: through-target
workload:
  name: tt
  topics: [{name: tt, partitions: 3}]
  producers: 2
  rate_per_producer: 100
  message: {kind: generated, bytes: 512}
  duration_s: 8
  warmup_s: 2
profiles:
  - {name: l20, linger_ms: 20, acks: all, idempotence: true}
"""
CLIENT = """\
# Kafka's own format, as kafka-producer-perf-test --producer.config takes it
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="kbt" password="${KBT_TEST_TARGET_PASSWORD}";
ssl.truststore.type=PEM
ssl.truststore.location=ca.pem
"""


def _config(base: int, lab_dir: Path, **extra: Any) -> LabConfig:
    return LabConfig(
        brokers=1,
        base_port=base,
        lab_dir=lab_dir,
        tiered=False,
        scrape_interval_s=1.0,
        client_exporter_count=4,
        **extra,
    )


@pytest.fixture(scope="module")
def secure_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    previous = os.environ.get(PASSWORD_ENV)
    os.environ[PASSWORD_ENV] = PASSWORD
    running = Lab(_config(SECURE_BASE, tmp_path_factory.mktemp("target-lab"), security="sasl_ssl"))
    try:
        state = running.up(timeout_s=180)
    finally:
        if previous is None:
            os.environ.pop(PASSWORD_ENV, None)
        else:
            os.environ[PASSWORD_ENV] = previous
    try:
        yield state
    finally:
        running.down()


def _target_file(directory: Path, bootstrap: str, prometheus: str, **extra: str) -> Path:
    lines = [
        "name: test-target",
        f"bootstrap_servers: [{bootstrap}]",
        f'prometheus: {{url: "{prometheus}", scrape_interval_s: 1}}',
        f"topic_prefix: {PREFIX}",
        *(f"{k}: {v}" for k, v in extra.items()),
    ]
    path = directory / "target.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def target_dir(secure_lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("target-files")
    (directory / "ca.pem").write_bytes(SecurityFiles(secure_lab.security_dir).ca_cert.read_bytes())
    (directory / "client.properties").write_text(CLIENT)
    _target_file(
        directory,
        secure_lab.secure_bootstrap_servers,
        secure_lab.prometheus_url,
        client="{properties_file: client.properties}",
        limits="{max_msgs_per_s: 1000, max_bytes_per_s: 1000000}",
    )
    (directory / "spec.yaml").write_text(SPEC)
    return directory


def _kbt(
    *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "KBT_TEST_TARGET_PASSWORD": PASSWORD, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tuner", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full,
        stdin=subprocess.DEVNULL,
        cwd=repo_root(),
    )


def _topics(state: LabState) -> set[str]:
    admin = AdminClient({"bootstrap.servers": state.bootstrap_servers, "socket.timeout.ms": 5000})
    return {t for t in admin.list_topics(timeout=10).topics if t.startswith(PREFIX)}


def _one_verified_record(run: subprocess.CompletedProcess[str], results: Path) -> dict[str, Any]:
    """The sweep's one run record: every acked record read back, broker figures measured through
    the target's Prometheus."""
    assert run.returncode == 0, run.stdout + run.stderr
    records = [r for p in results.rglob("*.json") if "delivery" in (r := json.loads(p.read_text()))]
    assert len(records) == 1
    delivery = records[0]["delivery"]
    assert delivery["verified"] and delivery["lost"] == 0 and delivery["acked"] == delivery["consumed"] > 0
    assert records[0]["broker"] is not None
    return records[0]


def test_sweep_and_diagnose_through_a_target_file(
    secure_lab: LabState, target_dir: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    # A crashed run's leftover: in the target's ledger, owned by a process that is gone.
    admin = AdminClient({"bootstrap.servers": secure_lab.bootstrap_servers})
    leftover = f"{PREFIX}tt-r0-000000000001"
    admin.create_topics([NewTopic(leftover, 1, 1)])[leftover].result(timeout=30)
    gone = subprocess.Popen(["true"])
    gone.wait()
    env = {"KBT_CACHE": str(cache)}
    os.environ["KBT_CACHE"] = str(cache)  # the ledger path is computed in this process too
    try:
        from tuner.target.ledger import TopicLedger, ledger_path

        ledger = TopicLedger(ledger_path(resolve_target(None, target_dir / "target.yaml")))
        ledger.path.parent.mkdir(parents=True, exist_ok=True)
        ledger.path.write_text(json.dumps({leftover: {"pid": gone.pid, "host": os.uname().nodename}}))
    finally:
        os.environ.pop("KBT_CACHE", None)

    results = tmp_path / "results"
    run = _kbt("sweep", str(target_dir / "spec.yaml"), "--target", str(target_dir / "target.yaml"),
               "--results", str(results), env=env)  # fmt: skip
    record = _one_verified_record(run, results)
    assert all(t.startswith(PREFIX) for t in record["topics"])
    assert _topics(secure_lab) == set(), "run topics or the crashed run's leftover remain"
    assert json.loads(ledger.path.read_text()) == {}

    diag = _kbt("diagnose", "--target", str(target_dir / "target.yaml"), "--window", "20s", "--step", "2s",
                "--json", "-")  # fmt: skip
    assert diag.returncode in (0, 10, 11), diag.stderr
    assert json.loads(diag.stdout)["brokers"][0]["broker"] == "1"

    text = run.stdout + run.stderr + diag.stdout + diag.stderr
    text += "".join(p.read_text() for p in results.rglob("*") if p.is_file())
    assert PASSWORD not in text


def test_sweep_through_kafka_tool_flags(secure_lab: LabState, target_dir: Path, tmp_path: Path) -> None:
    """--bootstrap-server, --command-config (Kafka's properties file with the password written in
    it, as Kafka's tools take it) and --prometheus build the target a target file would: the run
    logs in over SASL_SSL, every acked record is read back, and the password is in no output."""
    config = tmp_path / "client.properties"
    config.write_text(
        CLIENT.replace("${KBT_TEST_TARGET_PASSWORD}", PASSWORD).replace(
            "location=ca.pem", f"location={target_dir / 'ca.pem'}"
        )
    )
    results = tmp_path / "results"
    flags = ["--bootstrap-server", secure_lab.secure_bootstrap_servers, "--command-config", str(config)]
    env = {"KBT_TEST_TARGET_PASSWORD": "", "KBT_CACHE": str(tmp_path)}
    run = _kbt("sweep", str(target_dir / "spec.yaml"), *flags, "--prometheus", secure_lab.prometheus_url,
               "--results", str(results), env=env)  # fmt: skip
    _one_verified_record(run, results)
    assert _topics(secure_lab) == set()
    text = run.stdout + run.stderr + "".join(p.read_text() for p in results.rglob("*") if p.is_file())
    assert PASSWORD not in text
    both = _kbt("sweep", str(target_dir / "spec.yaml"), "--target", str(target_dir / "target.yaml"),
                "--bootstrap-server", secure_lab.secure_bootstrap_servers, "--dry-run")  # fmt: skip
    assert both.returncode == 2 and len(both.stderr.strip().splitlines()) == 1, both.stderr


STRESS_SPEC = """\
name: tt-stress
workload:
  name: tts
  topics: [{name: tts, partitions: 2, replication_factor: 1}]
  producers: 2
  rate_per_producer: 50
  message: {kind: generated, bytes: 300}
  duration_s: 10
profiles:
  current: {name: l10, linger_ms: 10, acks: all, idempotence: true}
shape: {steps: [1], step_s: 8, drain_s: 6, settle_s: 2}
consumer_groups:
  - {name: rt, mode: realtime}
gates: {network_idle_min: 0.01, on_fail: continue}
"""


def test_stress_through_a_secured_target(secure_lab: LabState, target_dir: Path, tmp_path: Path) -> None:
    """Producers, the real-time group and the read-back all log in with the target's SASL_SSL
    properties; the plan (written beside the records) holds only the ${VAR} reference."""
    spec = tmp_path / "stress.yaml"
    spec.write_text(STRESS_SPEC)
    results = tmp_path / "results"
    ports = ("--master-port", str(SECURE_BASE + 180), "--web-port", str(SECURE_BASE + 185))
    target = str(target_dir / "target.yaml")
    cache = tmp_path / "cache"
    run = _kbt("stress", str(spec), "--target", target, "--results", str(results), *ports, "--json", "-",
               env={"KBT_CACHE": str(cache)})  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    ledgers = list(cache.glob("topic-ledgers/*.json"))  # listed before creation, emptied on deletion
    assert len(ledgers) == 1 and json.loads(ledgers[0].read_text()) == {}
    profile = json.loads(run.stdout)["profiles"][0]
    assert profile["delivery_verified"] is True and profile["lost"] == 0, profile
    assert [s["stage"] for s in profile["stages"]] == ["step1-x1"]
    assert profile["stages"][0]["acked_msgs_per_s"] > 0
    assert _topics(secure_lab) == set(), "the stress run's topics remain"
    plan = next(results.rglob("plan.json")).read_text()
    assert "${KBT_TEST_TARGET_PASSWORD}" in plan
    text = run.stdout + run.stderr + "".join(p.read_text() for p in results.rglob("*") if p.is_file())
    assert PASSWORD not in text


def test_bad_and_misconfigured_targets_fail_in_one_line(secure_lab: LabState, target_dir: Path) -> None:
    spec, target = str(target_dir / "spec.yaml"), str(target_dir / "target.yaml")
    before = _topics(secure_lab)
    wrong = {"KBT_TEST_TARGET_PASSWORD": "not-the-password"}
    cases: list[tuple[tuple[str, ...], dict[str, str], int, str]] = [
        (("target", "check", target), wrong, 5, "SASL authentication"),
        (("sweep", spec, "--target", target), wrong, 5, "SASL authentication"),
    ]
    files = {}
    for name, bootstrap, extra in (
        ("unreachable", "127.0.0.1:1", {}),
        ("remote", "kafka.example.invalid:9092", {}),
        ("capped", secure_lab.bootstrap_servers, {"limits": "{max_msgs_per_s: 50}"}),
    ):
        directory = target_dir.parent / name
        directory.mkdir()
        files[name] = str(_target_file(directory, bootstrap, secure_lab.prometheus_url, **extra))
    bad = target_dir.parent / "bad.yaml"
    bad.write_text("name: x\nbootstrap_server: [127.0.0.1:1]\n")
    cases += [
        (("target", "check", files["unreachable"]), {}, 5, "Connection refused"),
        (("sweep", spec, "--target", files["remote"]), {}, 2, "refusing to send load without --yes"),
        (("sweep", spec, "--target", files["capped"]), {}, 2, "over test-target's cap of 50"),
        (("target", "check", str(bad)), {}, 2, 'did you mean "bootstrap_servers"'),
    ]
    for args, env, status, text in cases:
        result = _kbt(*args, env=env, timeout=120)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == status, (args, result.stderr)
        assert len(lines) == 1 and lines[0].startswith("kbt: error: ") and text in lines[0], (args, lines)
        assert "Traceback" not in result.stderr and PASSWORD not in result.stderr
    assert _topics(secure_lab) == before


# ---- dialects: the same load read through kbt's, Strimzi-style and upstream-example rules ----
RATE = 50.0  # records/s, linger 0, one partition, 20 ms apart: one produce request per record
WINDOW_S = 20.0


class SteadyLoad:
    """One producer sending RATE records/s to one partition until stopped; ack times kept."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all", "max.in.flight": 1000}
        )
        self.topic = topic
        self.acks: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.time()

    def _acked(self, err: object, _msg: object) -> None:
        if err is None:
            self.acks.append(time.time())

    def _run(self) -> None:
        start, sent = time.monotonic(), 0
        while not self.stop.is_set():
            due = start + sent / RATE
            if time.monotonic() < due:
                self.producer.poll(max(0.0, due - time.monotonic()))
                continue
            self.producer.produce(self.topic, b"x" * 256, on_delivery=self._acked)
            sent += 1
        self.producer.flush(10)

    def acked_per_s(self, start: float, end: float) -> float:
        return sum(1 for t in self.acks if start < t <= end) / (end - start)

    def __enter__(self) -> SteadyLoad:
        self.started = time.time()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(30)


def _diagnose_under_load(state: LabState, directory: Path, dialect: str) -> dict[str, Any]:
    topic = f"{PREFIX}dialect-{dialect}"
    admin = AdminClient({"bootstrap.servers": state.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=60)
    target = _target_file(directory, state.bootstrap_servers, state.prometheus_url, dialect="auto")
    try:
        with SteadyLoad(state.bootstrap_servers, topic) as load:
            prom = Prometheus.for_target(resolve_target(None, target))
            assert prom.translator is not None and prom.translator.dialect.name == dialect
            deadline = time.time() + 150
            settled = None
            while settled is None and time.time() < deadline:
                settled = idle_meters_settled_at(prom)
                time.sleep(2)
            assert settled is not None, "idle meters never settled"
            # The window lies after the meters settled and wholly inside the load, then 2 scrapes.
            time.sleep(max(0.0, max(settled, load.started + 2) + WINDOW_S + 2 - time.time()))
            end = time.time() - 2
            result = _kbt("diagnose", "--target", str(target), "--window", f"{WINDOW_S:g}s", "--step", "2s",
                          "--end", f"{end:.3f}", "--json", "-")  # fmt: skip
            client = load.acked_per_s(end - WINDOW_S, end)
    finally:
        admin.delete_topics([topic])[topic].result(timeout=60)
    assert result.returncode in (0, 10, 11), result.stderr
    out = json.loads(result.stdout)
    broker = out["brokers"][0]
    snap = out["snapshot"]["brokers"][0]
    return {
        "dialect": dialect,
        "status": broker["status"],
        "cause": broker["cause"],
        "produce_requests_per_s": snap["produce_requests_per_s"],
        "client_acked_per_s": client,
        "requests_per_acked_record": snap["produce_requests_per_s"] / client,
        "network_threads": snap["network_threads"],
        "network_idle_ratio": snap["network_idle_ratio"],
        "request_handler_idle_ratio": snap["request_handler_idle_ratio"],
        "notes": [line for line in result.stderr.splitlines() if "cannot be made" in line],
    }


def test_dialects_give_the_same_diagnosis(tmp_path: Path) -> None:
    """Three labs of one configuration, one after another, differing only in their jmx rules."""
    figures = []
    for rules in ("kbt", "strimzi", "upstream"):
        (tmp_path / rules).mkdir()
        lab = Lab(_config(DIALECT_BASE, tmp_path / rules / "lab", jmx_rules=rules))
        try:
            state = lab.up(timeout_s=180)
            figures.append(_diagnose_under_load(state, tmp_path / rules, rules))
        finally:
            lab.down()
    print(json.dumps(figures, indent=1))  # the figures docs/benchmarks.md quotes (pytest -s)
    kbt = figures[0]
    assert kbt["produce_requests_per_s"] > 0.8 * RATE
    for other in figures[1:]:
        assert (other["status"], other["cause"]) == (kbt["status"], kbt["cause"]), figures
        # The same load on each lab: its produce request rate per acked record within 5% of kbt's
        # (the labs run one after another, so each rate is taken against the load it really got).
        assert abs(other["requests_per_acked_record"] / kbt["requests_per_acked_record"] - 1) <= 0.05, figures
        assert abs(other["produce_requests_per_s"] / kbt["produce_requests_per_s"] - 1) <= 0.10, figures
    strimzi = figures[1]
    assert any("kafka_network_request_time_ms" in n and "RequestMetrics" in n for n in strimzi["notes"])
    assert figures[2]["notes"] == []  # the upstream example keeps everything diagnose reads
