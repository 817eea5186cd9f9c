"""A `--security sasl_ssl` lab: the SASL_SSL listener really authenticates, a sweep runs through it
with no record lost, and no secret (the SCRAM password, the keystore password, a `${VAR}` override)
appears in any output, record or log kbt writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from tests.integration.conftest import TEST_BASE_PORT
from tuner.lab import Lab, LabConfig, LabState
from tuner.lab.security import PASSWORD_ENV, SecurityFiles, client_properties, read_secret

pytestmark = pytest.mark.integration

SASL_PASSWORD = "kbt-canary-sasl-5f1e2d3c"
OVERRIDE_SECRET = "kbt-canary-override-a9b8c7"

SPEC = """\
name: secure
workload:
  name: secure
  topics: [{name: secure, partitions: 3}]
  producers: 2
  rate_per_producer: 100
  message: {kind: generated, bytes: 512}
  duration_s: 8
  warmup_s: 2
profiles:
  - {name: plain, linger_ms: 20, acks: all, idempotence: true}
  - name: tls
    linger_ms: 20
    acks: all
    idempotence: true
    security: sasl_ssl
    overrides: {ssl.key.password: "${KBT_TEST_OVERRIDE_SECRET}"}
"""


@pytest.fixture(scope="module")
def secure_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    base = int(os.environ.get("KBT_TEST_LAB_BASE_PORT", TEST_BASE_PORT)) + 400
    config = LabConfig(
        brokers=1,
        base_port=base,
        lab_dir=tmp_path_factory.mktemp("secure-lab"),
        tiered=False,
        scrape_interval_s=1.0,
        client_exporter_count=4,
        security="sasl_ssl",
    )
    previous = os.environ.get(PASSWORD_ENV)
    os.environ[PASSWORD_ENV] = SASL_PASSWORD
    running = Lab(config)
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


def _list_topics(conf: dict[str, str]) -> None:
    AdminClient({**conf, "socket.timeout.ms": "3000"}).list_topics(timeout=6)


def test_secure_listener_rejects_wrong_password_and_plaintext(secure_lab: LabState) -> None:
    files = SecurityFiles(secure_lab.security_dir)
    good = {"bootstrap.servers": secure_lab.secure_bootstrap_servers, **client_properties(files)}
    _list_topics(good)
    with pytest.raises(KafkaException):
        _list_topics({**good, "sasl.password": "not-the-password"})
    with pytest.raises(KafkaException):
        _list_topics({"bootstrap.servers": secure_lab.secure_bootstrap_servers})
    assert read_secret(files.sasl_password_file) == SASL_PASSWORD


def test_sweep_over_sasl_ssl_leaks_no_secret(secure_lab: LabState, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    env = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    env["KBT_TEST_OVERRIDE_SECRET"] = OVERRIDE_SECRET
    outputs = []
    for args in (
        ["sweep", "spec.yaml", "--dry-run"],
        ["sweep", "spec.yaml", "--lab-dir", str(secure_lab.lab_dir), "--results", "results"],
        ["lab", "status", "--lab-dir", str(secure_lab.lab_dir)],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "tuner", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs += [proc.stdout, proc.stderr]
    written = sorted((tmp_path / "results").rglob("*.json"))  # run records and their time series
    records = [p for p in written if p.parent.name != "series"]
    assert len(records) == 2, records
    texts = outputs + [p.read_text() for p in written]
    texts += [p.read_text(errors="replace") for p in (secure_lab.lab_dir / "logs").glob("*.log")]
    keystore_password = read_secret(SecurityFiles(secure_lab.security_dir).keystore_password_file)
    for secret in (SASL_PASSWORD, OVERRIDE_SECRET, keystore_password):
        hits = sum(text.count(secret) for text in texts)
        assert hits == 0, f"a secret appears {hits} time(s) in kbt's outputs"
    parsed = [json.loads(p.read_text()) for p in records]
    by_security = {r["plan"]["profile"]["security"]: r for r in parsed}
    assert set(by_security) == {"plaintext", "sasl_ssl"}
    for record in parsed:
        assert record["status"] == "ok", record["problems"]
        assert record["delivery"]["lost"] == 0
        assert record["delivery"]["acked"] > 0
    # The reference is what a record keeps, never the value.
    assert by_security["sasl_ssl"]["plan"]["profile"]["overrides"] == {
        "ssl.key.password": "${KBT_TEST_OVERRIDE_SECRET}"
    }
