"""librdkafka and the Java producer run the files a user receives (issue 39), on the session's 3-broker lab.

Per kind one short run (12 s of load) through the sweep runner: the client starts from the kind's
rendered file, the bootstrap names all three brokers, every acked record is read back, the record
names the file by its SHA-256, and the client's own reading of the file a user receives (the same
text under its header) is the file's settings, durability included: librdkafka's `debug=conf`
account of a producer built from it, the Java producer's ProducerConfig (`java-engine
--check-config`; each run's engine also compares it and fails a run that read the file otherwise).
Both are checked as deployed: several brokers, SASL settings from the environment; the Java file's
secret as `${env:VAR}`, resolved by Kafka's EnvVarConfigProvider.

Uses the session `lab` fixture (tests/integration/conftest.py). No timing is asserted.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.integration.labhelp import busy_host_only
from tuner.core.errors import BadInput
from tuner.core.kafka_clients import Connection
from tuner.core.properties import parse_properties
from tuner.driver.file_check import LIBRDKAFKA_CANONICAL, librdkafka_reading, unlike
from tuner.driver.java_plan import check_properties_file, engine_dir
from tuner.driver.rdkafka_worker import producer_config
from tuner.lab import LabState
from tuner.runner.wiring import sweep_runner
from tuner.spec.clients import ClientProfile, kind_of, profile_of
from tuner.spec.loader import load_sweep
from tuner.store import RunRecord

pytestmark = pytest.mark.integration

SPEC = """\
name: {name}
workload:
  name: {name}
  topics: [{{name: {name}, partitions: 6}}]
  producers: 2
  processes: 1
  rate_per_producer: 150
  message: {{kind: generated, bytes: 600}}
  duration_s: 12
  warmup_s: 2
profiles:
  - {profile}
name_format: "{{profile}}"
"""
HEADER = ["Recommended by kbt for workload deployed on 3 brokers.", "", "Status: confirmed."]


def _run(lab: LabState, tmp_path: Path, name: str, profile: str) -> RunRecord:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(SPEC.format(name=name, profile=profile))
    [record] = sweep_runner(lab_dir=lab.lab_dir, results=tmp_path / "results").run(load_sweep(spec)).records
    # a busy 2-core machine may leave the client behind its schedule: that judges the machine, not the file
    assert busy_host_only(record.status, record.problems), record.problems
    delivery = record.delivery
    assert delivery.verified and delivery.lost == 0 and delivery.failed == 0, delivery
    assert delivery.acked == record.client.records_acked_total > 0
    assert len(record.client.produce_requests_by_broker) == 3  # the load reached every broker
    return record


def _users_file(profile: ClientProfile, tmp_path: Path) -> tuple[Path, str]:
    """The file as a recommendation writes it (header comments over the artifact) and its artifact
    part, cut off by what a user sees: the leading comment lines of the header."""
    rendered = kind_of(profile).render(profile, HEADER)
    path = tmp_path / rendered.filename
    path.write_text(rendered.text)
    lines = rendered.text.splitlines(keepends=True)
    return path, "".join(lines[len(HEADER) :])


def test_librdkafka_runs_the_file_a_user_receives(lab: LabState, tmp_path: Path) -> None:
    assert len(lab.bootstrap_servers.split(",")) == 3
    profile_yaml = (
        "{name: deployed-rd, client: librdkafka, linger_ms: 40, batch_messages: 2000, compression: lz4,"
        ' partitioner: sticky, acks: "1", idempotence: false,'
        ' overrides: {queue.buffering.max.kbytes: "65536"}}'
    )
    record = _run(lab, tmp_path, "deployedrd", profile_yaml)
    path, artifact = _users_file(record.plan.profile, tmp_path)
    assert record.client.artifact is not None and record.client.artifact.filename == "librdkafka.properties"
    assert record.client.artifact.sha256 == hashlib.sha256(artifact.encode()).hexdigest()

    # librdkafka's own account of a producer built from the user's file, as the run's producers were
    file = parse_properties(path.read_text(), path.name)
    reported = librdkafka_reading(
        producer_config(path.read_text(), "deployed"), Connection(lab.bootstrap_servers)
    )
    assert unlike(file, reported, LIBRDKAFKA_CANONICAL) == []
    assert reported["metadata.broker.list"] == lab.bootstrap_servers
    durability = {
        k: reported[LIBRDKAFKA_CANONICAL.get(k, k)] for k in ("acks", "retries", "enable.idempotence")
    }
    assert durability == {"acks": "1", "retries": "2147483647", "enable.idempotence": "false"}
    assert reported["queue.buffering.max.kbytes"] == "65536" and reported["compression.codec"] == "lz4"

    # as deployed: the brokers and SASL from the environment on top of the same file
    sasl = {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "app", "sasl.password": "from-the-secret-store",
    }  # fmt: skip
    secure = librdkafka_reading(file, Connection(lab.bootstrap_servers, sasl))
    assert unlike(file, secure, LIBRDKAFKA_CANONICAL) == []
    assert secure["sasl.password"] == "[redacted]" and secure["security.protocol"] == "sasl_ssl"
    # a file librdkafka refuses is named in one line
    with pytest.raises(BadInput, match=r"^librdkafka refuses the file: .*idempotence"):
        librdkafka_reading({**file, "enable.idempotence": "true"}, Connection(lab.bootstrap_servers))


def test_java_runs_the_file_a_user_receives(lab: LabState, tmp_path: Path) -> None:
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    profile_yaml = (
        "{name: deployed-java, client: java, linger_ms: 40, batch_bytes: 65536, compression: zstd,"
        ' compression_level: 3, acks: "1", idempotence: false, overrides: {client.id: app-logs}}'
    )
    record = _run(lab, tmp_path, "deployedjava", profile_yaml)
    path, artifact = _users_file(record.plan.profile, tmp_path)
    assert record.client.artifact is not None and record.client.artifact.filename == "java.properties"
    assert record.client.artifact.sha256 == hashlib.sha256(artifact.encode()).hexdigest()

    # the Java producer's own reading of the user's file (the run's engine compared the same)
    reported = check_properties_file(path)
    file = parse_properties(path.read_text(), path.name)
    assert unlike(file, reported) == []
    durable = ("acks", "enable.idempotence", "retries", "max.in.flight.requests.per.connection")
    assert {k: reported[k] for k in durable} == {
        "acks": "1", "enable.idempotence": "false", "retries": "2147483647",
        "max.in.flight.requests.per.connection": "5",
    }  # fmt: skip


def test_a_java_files_secret_is_an_env_reference_the_client_resolves(tmp_path: Path) -> None:
    """A profile's secret (a ${VAR} reference) is written as ${env:VAR} with EnvVarConfigProvider
    named in the file: the real client resolves it from the environment, and says when it cannot."""
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    profile = profile_of(
        {
            "name": "secret",
            "client": "java",
            "linger_ms": 20,
            "overrides": {"sasl.jaas.config": "${KBT_IT_JAAS}"},
        }
    )
    text = kind_of(profile).artifact(profile).text
    assert "sasl.jaas.config=${env:KBT_IT_JAAS}\n" in text and "config.providers=env\n" in text
    path = tmp_path / "java.properties"
    path.write_text(text + "bootstrap.servers=127.0.0.1:1,127.0.0.1:2,127.0.0.1:3\n")
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="app" password="s3";'
    resolved = check_properties_file(path, {"KBT_IT_JAAS": jaas})
    assert resolved["sasl.jaas.config"] == "[hidden]" and resolved["linger.ms"] == "20"
    assert check_properties_file(path, {})["sasl.jaas.config"] == "[unresolved reference]"
    path.write_text(text + "linger.ms=soon\n")
    with pytest.raises(
        BadInput, match=r"^java\.properties: the Java producer refuses it: Invalid value soon"
    ):
        check_properties_file(path)


TEAM_JAVA = """\
# the team's deployed producer: its brokers, SASL and serializers are the deployment's
bootstrap.servers=kafka-0.kafka.svc:9092,kafka-1.kafka.svc:9092
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
  username="orders" password="${env:KAFKA_PASSWORD}";
key.serializer=org.apache.kafka.common.serialization.StringSerializer
value.serializer=org.apache.kafka.common.serialization.StringSerializer
client.id=orders-api
acks=1
linger.ms=25
batch.size=65536
compression.type=lz4
max.request.size=2097152
"""


def test_a_teams_java_properties_file_runs_as_its_profile(lab: LabState, tmp_path: Path) -> None:
    """`java:producer.properties` where a profile goes: the team's file, its brokers, SASL, client
    id and serializers left to the lab, runs on the 3-broker lab with its batching and durability as
    the Java producer reads them, every acked record read back."""
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    (tmp_path / "producer.properties").write_text(TEAM_JAVA)
    record = _run(lab, tmp_path, "teamjava", "java:producer.properties")
    assert (record.plan.profile.client, record.plan.profile.name) == ("java", "producer")
    path, _ = _users_file(record.plan.profile, tmp_path)
    reported = check_properties_file(path)
    ran = {
        k: reported[k] for k in ("acks", "linger.ms", "batch.size", "compression.type", "max.request.size")
    }
    assert ran == {
        "acks": "1", "linger.ms": "25", "batch.size": "65536", "compression.type": "lz4",
        "max.request.size": "2097152",
    }  # fmt: skip
    assert reported["enable.idempotence"] == "false"  # acks=1: the client's own consequence, stated
    text = path.read_text()
    assert "kafka-0.kafka.svc" not in text and "orders" not in text and "SCRAM" not in text
