"""A team's filebeat.yml takes values from its environment as Filebeat does: `${VAR}` in a number,
boolean or duration option is read from the environment (else the reference's default), and a
broker list may hold one variable per broker. Checked against kbt's schema and, where a Filebeat
build is installed, against `filebeat test config` itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.driver.filebeat import testconfig
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.spec.duration import Duration
from tuner.spec.filebeat_load import load_filebeat

_FILEBEAT = bool(filebeat_builds())

TEAM_FILE = """\
output.kafka:
  hosts: ["${BROKER_1}", "${BROKER_2}", "${BROKER_3}"]
  topic: app-logs
  bulk_max_size: ${BULK_MAX_SIZE:4096}
  worker: ${KAFKA_WORKERS}
  bulk_flush_frequency: ${FLUSH:500ms}
  compression: ${CODEC:lz4}
  required_acks: ${KAFKA_ACKS:-1}
  version: ${KAFKA_VERSION:2.1.0}
  username: "${KAFKA_USER}"
  password: "${KAFKA_PASSWORD}"
  sasl.mechanism: SCRAM-SHA-512
queue.mem:
  events: ${QUEUE_EVENTS:8192}
  flush.min_events: 4096
  flush.timeout: 1s
"""
ENV = {"BROKER_1": "k1:9092", "BROKER_2": "k2:9092", "BROKER_3": "k3:9092", "KAFKA_WORKERS": "3"}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "filebeat.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_values_come_from_the_environment_else_the_default(tmp_path: Path) -> None:
    path = _write(tmp_path, TEAM_FILE)
    cfg = load_filebeat(path, environ=ENV).config
    kafka = cfg.kafka
    assert (kafka.bulk_max_size, kafka.worker, kafka.compression) == (4096, 3, "lz4")
    assert kafka.bulk_flush_frequency == Duration.parse("500ms") and cfg.mem.events == 8192
    assert (kafka.required_acks, kafka.version) == (-1, "2.1.0")  # a version is text its check reads
    # the environment wins over the default, as in Filebeat
    cfg = load_filebeat(path, environ={**ENV, "BULK_MAX_SIZE": "2048", "CODEC": "snappy"}).config
    assert (cfg.kafka.bulk_max_size, cfg.kafka.compression) == (2048, "snappy")
    # string options and credentials stay references: they are the deployment's
    assert kafka.hosts == ["${BROKER_1}", "${BROKER_2}", "${BROKER_3}"]
    assert kafka.password == "${KAFKA_PASSWORD}"


def test_an_unset_variable_without_default_is_one_line_naming_it(tmp_path: Path) -> None:
    path = _write(tmp_path, TEAM_FILE)
    with pytest.raises(BadInput) as err:
        load_filebeat(path, environ={k: v for k, v in ENV.items() if k != "KAFKA_WORKERS"})
    assert err.value.message.startswith(f"{path}:5: output.kafka.worker: ${{KAFKA_WORKERS}} is not set")
    assert "\n" not in err.value.message
    required = _write(tmp_path, TEAM_FILE.replace("${KAFKA_WORKERS}", "${KAFKA_WORKERS:?set the workers}"))
    with pytest.raises(BadInput, match=r"KAFKA_WORKERS\} is not set: set the workers"):
        load_filebeat(required, environ={})


def test_a_resolved_value_is_checked_like_a_written_one(tmp_path: Path) -> None:
    path = _write(tmp_path, TEAM_FILE)
    with pytest.raises(BadInput, match=r":5: output.kafka.worker: .*(greater|at least)"):
        load_filebeat(path, environ={**ENV, "KAFKA_WORKERS": "0"})
    with pytest.raises(BadInput, match=r":4: output.kafka.bulk_max_size: must be a whole number"):
        load_filebeat(path, environ={**ENV, "BULK_MAX_SIZE": "lots"})
    # a variable naming itself is read once, not followed
    with pytest.raises(BadInput, match=r"output.kafka.worker"):
        load_filebeat(path, environ={**ENV, "KAFKA_WORKERS": "${KAFKA_WORKERS}"})


def test_a_broker_list_holds_one_variable_per_broker(tmp_path: Path) -> None:
    path = _write(tmp_path, TEAM_FILE)
    with pytest.raises(BadInput) as err:
        load_filebeat(path, environ={**ENV, "BROKER_2": "k2:9092,k4:9092"})
    assert err.value.message.startswith(f"{path}:2: output.kafka.hosts: ${{BROKER_2}} holds several brokers")
    assert "k4" not in err.value.message  # the environment's value is not printed
    single = _write(tmp_path, TEAM_FILE.replace('["${BROKER_1}", "${BROKER_2}", "${BROKER_3}"]', '["${B}"]'))
    with pytest.raises(BadInput, match=r"a \$\{B\} list element makes Filebeat exit"):
        load_filebeat(single, environ={"B": "k1:9092", **ENV})


@settings(max_examples=60, deadline=None)
@given(value=st.text(max_size=30))
def test_any_environment_value_is_a_config_or_one_line(
    tmp_path_factory: pytest.TempPathFactory, value: str
) -> None:
    path = _write(tmp_path_factory.mktemp("fb"), TEAM_FILE)
    try:
        cfg = load_filebeat(path, environ={**ENV, "KAFKA_WORKERS": value, "FLUSH": value}).config
    except BadInput as exc:
        assert "\n" not in exc.message and exc.message.startswith(str(path))
    else:
        assert cfg.kafka.worker >= 1


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_filebeat_test_config_reads_the_same_values(tmp_path: Path) -> None:
    """The real binary gets one broker per list element, and reads the numeric variables from the
    environment or their defaults as kbt did: the team's file passes; a value kbt's schema would
    refuse fails there too."""
    path = _write(tmp_path, TEAM_FILE.replace("${KAFKA_WORKERS}", "${KAFKA_WORKERS:2}"))
    subs = testconfig.substitutions(path, path.read_text(), tmp_path, environ={})
    assert len({subs[f"BROKER_{i}"] for i in (1, 2, 3)}) == 3 and all(
        "," not in subs[f"BROKER_{i}"] for i in (1, 2, 3)
    )
    assert not {"BULK_MAX_SIZE", "KAFKA_WORKERS", "QUEUE_EVENTS", "FLUSH", "CODEC", "KAFKA_ACKS"} & set(subs)
    assert testconfig.test_config(path)[1] is None


@pytest.mark.skipif(not _FILEBEAT, reason="no real Filebeat build: run make install")
def test_tls_files_named_by_the_pods_paths_are_checked_as_placeholders(tmp_path: Path) -> None:
    """A team's file names its TLS files where the pod mounts them: absent here, they are checked as
    placeholder PEMs and said in a note; a file that is here is Filebeat's to read (a broken one
    fails)."""
    tls = (
        "  ssl.certificate_authorities: [/run/secrets/kafka/ca.pem]\n"
        "  ssl.certificate: certs/client.pem\n"
        "  ssl.key: /run/secrets/kafka/client.key\n"
    )
    team = TEAM_FILE.replace("${KAFKA_WORKERS}", "${KAFKA_WORKERS:2}")
    path = _write(tmp_path, team.replace("queue.mem:\n", tls + "queue.mem:\n"))
    notes: list[str] = []
    assert testconfig.test_config(path, notes=notes)[1] is None
    assert [n.split(": ", 2)[1] for n in notes] == [
        "output.kafka.ssl.certificate_authorities", "output.kafka.ssl.certificate", "output.kafka.ssl.key"
    ]  # fmt: skip
    assert all("is not on this machine: checked with a placeholder file" in n for n in notes)
    broken = tmp_path / "ca.pem"
    broken.write_text("not a certificate\n")
    path.write_text(path.read_text().replace("/run/secrets/kafka/ca.pem", str(broken)))
    notes.clear()
    problem = testconfig.test_config(path, notes=notes)[1]
    assert problem is not None and len(notes) == 2
