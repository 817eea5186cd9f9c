"""A team's own filebeat.yml named where a profile goes (a sweep's `profiles:`, a stress spec's): its
batching, queue and encoding as Filebeat reads them; where it sends and how it connects stay the
lab's or the target's. The rendered file that runs keeps every setting of the first kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.core.errors import BadInput
from tuner.spec.clients import kind_of
from tuner.spec.clients.filebeat import DEPLOYMENT_OPTIONS, FilebeatProfile, config_of
from tuner.spec.loader import load_profile, load_sweep

TEAM = """\
filebeat.inputs:
  - {type: filestream, id: app, paths: ["/var/log/app/*.log"]}
processors:
  - add_kubernetes_metadata: ~
output.kafka:
  hosts: ["${BROKER_1}", "${BROKER_2}"]
  topic: '%{[fields.log_topic]}'
  key: '%{[fields.request_id]}'
  bulk_max_size: ${KBT_UNIT_UNSET_BULK:1024}
  bulk_flush_frequency: 100ms
  compression: lz4
  required_acks: -1
  max_message_bytes: 2000000
  worker: 2
  username: "${KAFKA_USER}"
  password: "${KAFKA_PASSWORD}"
  sasl.mechanism: SCRAM-SHA-512
  ssl.certificate_authorities: ["/run/secrets/kafka/ca.pem"]
queue.mem:
  events: 8192
  flush.min_events: 1024
  flush.timeout: 1s
"""


def _team(tmp_path: Path, text: str = TEAM) -> Path:
    path = tmp_path / "app filebeat.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_is_the_profile_its_deployment_options_the_labs(tmp_path: Path) -> None:
    profile = load_profile(_team(tmp_path))
    assert isinstance(profile, FilebeatProfile) and profile.name == "app-filebeat"
    kafka, mem = config_of(profile).kafka, config_of(profile).mem
    assert (kafka.bulk_max_size, str(kafka.bulk_flush_frequency), kafka.compression) == (1024, "100ms", "lz4")
    assert (kafka.required_acks, kafka.max_message_bytes, kafka.worker) == (-1, 2_000_000, 2)
    assert (mem.events, mem.flush.min_events) == (8192, 1024)
    # where it sends and how it connects: the engine's placeholders, the lab's at run time
    assert kafka.hosts == ["${KAFKA_HOSTS}"] and kafka.topic == "${KAFKA_TOPIC}"
    assert kafka.username is None and kafka.ssl is None and kafka.key is None and kafka.sasl.mechanism is None
    for option in ("hosts", "key", "password", "sasl", "ssl", "topic", "username"):
        assert option in profile.description
    # durability is the team's: the rendered file that runs says acks -1
    text = kind_of(profile).artifact(profile).text
    assert "required_acks: -1" in text and "max_message_bytes: 2000000" in text and "worker: 2" in text
    assert "/run/secrets" not in text and "fields.log_topic" not in text


def test_a_sweep_names_the_file_among_its_profiles(tmp_path: Path) -> None:
    # checked against the workload like any profile: 2 MB events do not fit its topic's 1 MB
    _team(tmp_path, TEAM.replace("  max_message_bytes: 2000000\n", ""))
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "name: team\n"
        "workload: {name: w, topics: [{name: t, partitions: 3}], producers: 2, rate_per_producer: 10,"
        " message: {kind: generated, bytes: 500}, duration_s: 10, warmup_s: 2}\n"
        "profiles: [app filebeat.yml,"
        " {name: batched, client: filebeat, filebeat: {output.kafka.bulk_max_size: 4096}}]\n"
        "name_format: '{profile}'\n",
        encoding="utf-8",
    )
    assert [plan.name for plan in load_sweep(spec).runs] == ["app-filebeat", "batched"]
    _team(tmp_path)
    with pytest.raises(
        BadInput, match=r"max_message_bytes: 2000000 \(profile app-filebeat\) exceeds the topic's"
    ):
        load_sweep(spec)


def test_the_files_own_problems_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"app filebeat.yml:\d+: output.kafka.bulk_max_sze: unknown option"):
        load_profile(_team(tmp_path, TEAM.replace("bulk_max_size", "bulk_max_sze")))
    with pytest.raises(BadInput, match=r"output.kafka.worker: \$\{KBT_UNIT_UNSET_WORKERS\} is not set"):
        load_profile(_team(tmp_path, TEAM.replace("worker: 2", "worker: ${KBT_UNIT_UNSET_WORKERS}")))
    # a kbt profile keeps its own grammar: `client:` says it is one
    with pytest.raises(BadInput, match="unknown key"):
        load_profile(_team(tmp_path, "name: p\nclient: filebeat\noutput.kafka: {bulk_max_size: 1}\n"))


def test_every_deployment_option_is_an_output_kafka_option() -> None:
    from tuner.spec.filebeat import KafkaOutput

    assert set(KafkaOutput.model_fields) >= DEPLOYMENT_OPTIONS
