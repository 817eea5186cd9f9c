"""Filebeat output.kafka / queue.mem schema: valid profiles load, malformed ones fail with one line,
no-op settings warn, and `kbt check filebeat` maps that to exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.filebeat_cases import GOOD, MALFORMED
from tuner.cli.app import main
from tuner.core.errors import BadInput, ExitStatus
from tuner.spec.duration import Duration
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.filebeat_load import filebeat_warnings, load_filebeat


def _write(tmp_path: Path, text: str, name: str = "fb.yml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_good_profile_loads_with_effective_values(tmp_path: Path) -> None:
    loaded = load_filebeat(_write(tmp_path, GOOD))
    cfg = loaded.config
    assert cfg.kafka.bulk_flush_frequency == Duration.parse("500ms")
    assert cfg.kafka.partition.strategy == "round_robin"
    assert cfg.kafka.partition.group_events == 256
    assert cfg.batch_events == 4096
    assert cfg.mem.effective_flush_timeout.seconds == 1.0
    assert filebeat_warnings(loaded) == []


def test_nested_and_dotted_keys_are_the_same_config(tmp_path: Path) -> None:
    nested = """\
output:
  kafka:
    hosts: ["k1:9092"]
    topic: logs
    partition:
      random:
        group_events: 8
queue:
  mem:
    events: 4096
    flush:
      min_events: 2048
      timeout: 2
"""
    dotted = """\
output.kafka.hosts: ["k1:9092"]
output.kafka.topic: logs
output.kafka.partition.random.group_events: 8
queue.mem.events: 4096
queue.mem.flush.min_events: 2048
queue.mem.flush.timeout: 2s
"""
    a = load_filebeat(_write(tmp_path, nested, "a.yml")).config
    b = load_filebeat(_write(tmp_path, dotted, "b.yml")).config
    assert a == b
    assert a.kafka.partition.strategy == "random"
    assert a.mem.flush.timeout.seconds == 2.0


def test_filebeat_defaults_match_design() -> None:
    cfg = FilebeatConfig.model_validate({"output": {"kafka": {"hosts": ["k:9092"], "topic": "t"}}})
    k, q = cfg.kafka, cfg.mem
    assert (k.bulk_max_size, k.bulk_flush_frequency, k.compression, k.compression_level) == (
        2048,
        Duration(0),
        "gzip",
        4,
    )
    assert (k.max_message_bytes, k.required_acks, k.channel_buffer_size) == (1_000_000, 1, 256)
    assert (k.broker_timeout.seconds, k.timeout.seconds, k.keep_alive.seconds, k.client_id) == (
        10,
        30,
        0,
        "beats",
    )
    assert k.partition.strategy == "hash" and k.partition.hash is None
    assert (q.events, q.flush.min_events, q.flush.timeout.seconds) == (4096, 2048, 1)  # 7.17's
    assert cfg.batch_events == 2048


def test_min_events_zero_or_one_selects_synchronous_queue() -> None:
    cfg = FilebeatConfig.model_validate(
        {
            "output": {"kafka": {"hosts": ["k:9092"], "topic": "t"}},
            "queue": {"mem": {"flush": {"min_events": 1}}},
        }
    )
    assert cfg.mem.max_get_events == 2048  # (4096 + 1) // 2, memqueue broker.go
    assert cfg.mem.effective_flush_timeout == Duration(0)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("500ms", 0.5), ("1s", 1.0), ("1m30s", 90.0), ("2h", 7200.0), ("0", 0.0), (3, 3.0), ("1.5s", 1.5)],
)
def test_durations(text: object, seconds: float) -> None:
    assert Duration.parse(text).seconds == pytest.approx(seconds)


def test_durations_render_as_filebeat_writes_them() -> None:
    for seconds in (0.0, 0.005, 0.25, 1.0, 10.0, 120.0, 90.0, 0.0015):
        d = Duration.parse(seconds)
        assert Duration.parse(str(d)) == d
    assert [str(Duration.parse(t)) for t in ("850ms", "1s", "1m30s", "0", "2m", "1500us")] == [
        "850ms", "1s", "1m30s", "0s", "2m", "1500us",
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "edit", "expected"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_profile_is_one_line(
    tmp_path: Path, name: str, edit: tuple[str, str], expected: str
) -> None:
    old, new = edit
    assert old in GOOD, name
    path = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(BadInput) as exc:
        load_filebeat(path)
    message = exc.value.message
    assert exc.value.status == ExitStatus.BAD_INPUT
    assert "\n" not in message
    assert message.startswith(str(path).lstrip("/")) or "fb.yml" in message
    assert expected in message, message
    assert "hunter2" not in message and "admin" not in message


def test_not_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"fb.yml:\d+: not valid YAML"):
        load_filebeat(_write(tmp_path, "output.kafka: [\n"))
    with pytest.raises(BadInput, match="missing"):
        load_filebeat(_write(tmp_path, "queue.mem.events: 4096\n"))
    with pytest.raises(BadInput, match="no such"):
        load_filebeat(tmp_path / "absent.yml")


def test_unchecked_filebeat_sections_pass(tmp_path: Path) -> None:
    text = "filebeat.inputs:\n  - type: filestream\n    id: x\nprocessors: []\n" + GOOD
    assert load_filebeat(_write(tmp_path, text)).config.kafka.topic == "logs"


def test_warns_when_bulk_max_size_exceeds_queue_batch(tmp_path: Path) -> None:
    loaded = load_filebeat(_write(tmp_path, GOOD.replace("bulk_max_size: 4096", "bulk_max_size: 8192")))
    (warning,) = filebeat_warnings(loaded)
    assert warning.endswith(
        "fb.yml:5: output.kafka.bulk_max_size 8192 has no effect beyond 4096: the memory queue hands the"
        " output at most 4096 events per batch (raise queue.mem.flush.min_events and queue.mem.events"
        " with it)"
    )


def test_warns_when_max_message_bytes_exceeds_topic_limit(tmp_path: Path) -> None:
    loaded = load_filebeat(_write(tmp_path, GOOD))
    assert filebeat_warnings(loaded, topic_max_message_bytes=1_048_588) == []
    (warning,) = filebeat_warnings(loaded, topic_max_message_bytes=500_000)
    assert "output.kafka.max_message_bytes 1000000 exceeds the topic's max.message.bytes 500000" in warning


def test_warns_on_other_no_op_settings(tmp_path: Path) -> None:
    text = GOOD.replace(
        "topic: logs", "topic: logs\n  version: 1.0.0\n  compression_level: 3\n  required_acks: 0"
    )
    warnings = filebeat_warnings(load_filebeat(_write(tmp_path, text)))
    assert len(warnings) == 3
    assert any("version 1.0.0 is too old for Kafka 4.x" in w for w in warnings)
    assert any("compression_level only applies to gzip" in w for w in warnings)
    assert any("required_acks 0" in w for w in warnings)


def test_cli_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, GOOD, "good.yml")
    bad = _write(tmp_path, GOOD.replace("bulk_max_size", "bulk_max_sze"), "bad.yml")
    noop = _write(tmp_path, GOOD.replace("bulk_max_size: 4096", "bulk_max_size: 8192"), "noop.yml")
    with pytest.raises(SystemExit) as exc:
        main(["check", "filebeat", str(good)])
    assert exc.value.code == ExitStatus.OK
    assert capsys.readouterr().out.strip().endswith("good.yml: ok")

    with pytest.raises(SystemExit) as exc:
        main(["check", "filebeat", str(good), str(bad)])
    assert exc.value.code == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kbt: error: ") and "bulk_max_sze" in err

    with pytest.raises(SystemExit) as exc:
        main(["check", "filebeat", str(noop)])
    assert exc.value.code == ExitStatus.OK
    assert capsys.readouterr().err.startswith("kbt: warning: ")
    with pytest.raises(SystemExit) as exc:
        main(["check", "filebeat", "--strict", str(noop)])
    assert exc.value.code == ExitStatus.BAD_INPUT

    with pytest.raises(SystemExit) as exc:
        main(["check", "filebeat", "--topic-max-message-bytes", "900000", str(good)])
    assert exc.value.code == ExitStatus.OK
    assert "exceeds the topic's max.message.bytes 900000" in capsys.readouterr().err


def test_one_string_where_filebeat_takes_a_list(tmp_path: Path) -> None:
    """go-ucfg reads one string for a list option as a list of one (checked on 7.17.29)."""
    text = GOOD.replace("  partition.round_robin:\n    group_events: 256\n    reachable_only: false\n", "")
    text = text.replace(
        "  topic: logs\n",
        "  topic: logs\n  partition.hash.hash: message\n  ssl.certificate_authorities: /etc/kafka/ca.pem\n"
        "  ssl.supported_protocols: TLSv1.2\n",
    )
    kafka = load_filebeat(_write(tmp_path, text)).config.kafka
    assert kafka.hosts == ["${KAFKA_HOSTS}"]
    assert kafka.partition.hash is not None and kafka.partition.hash.hash == ["message"]
    assert kafka.ssl is not None
    assert (kafka.ssl.certificate_authorities, kafka.ssl.supported_protocols) == (
        ["/etc/kafka/ca.pem"],
        ["TLSv1.2"],
    )
    empty = text.replace("ssl.certificate_authorities: /etc/kafka/ca.pem", "ssl.certificate_authorities: ~")
    tls = load_filebeat(_write(tmp_path, empty)).config.kafka.ssl
    assert tls is not None and tls.certificate_authorities is None  # a null is unset, not a crash


def test_other_outputs_and_queues_set_enabled_false_pass(tmp_path: Path) -> None:
    """Filebeat skips a disabled namespace (libbeat ConfigNamespace): one enabled output is the rule."""
    extra = (
        "output.elasticsearch:\n  enabled: false\n  hosts: [es:9200]\n"
        'output.logstash.enabled: "false"\nqueue.disk:\n  enabled: false\n  max_size: 10GB\n'
        "output.console.enabled: no\n"  # false to Filebeat's YAML 1.1 reader
    )
    assert load_filebeat(_write(tmp_path, GOOD + extra)).config.kafka.topic == "logs"
    with pytest.raises(BadInput, match=r"fb.yml:\d+: output.elasticsearch: only output.kafka is supported"):
        load_filebeat(_write(tmp_path, GOOD + extra.replace("enabled: false", "enabled: true", 1)))
    with pytest.raises(BadInput, match=r"output.elasticsearch.password: literal credentials") as exc:
        load_filebeat(_write(tmp_path, GOOD + extra + "output.elasticsearch.password: hunter2\n"))
    assert "hunter2" not in exc.value.message  # a disabled section's secret is still refused
    off = load_filebeat(_write(tmp_path, GOOD.replace("topic: logs", "topic: logs\n  enabled: false")))
    assert filebeat_warnings(off) == [
        f"{off.where('output', 'kafka', 'enabled')}: output.kafka.enabled false: Filebeat sends nothing"
        " to Kafka with this file"
    ]


def test_timeouts_are_at_least_a_second_and_backoff_may_be_zero(tmp_path: Path) -> None:
    """libbeat's `validate:"min=1"` on timeout and broker_timeout means one second; backoff has none."""
    text = GOOD.replace("topic: logs", "topic: logs\n  timeout: 1s\n  backoff.init: 0s\n  backoff.max: 0s")
    kafka = load_filebeat(_write(tmp_path, text)).config.kafka
    assert (kafka.timeout, kafka.backoff.init) == (Duration.parse("1s"), Duration(0))
    with pytest.raises(BadInput, match=r"output.kafka.timeout: must be at least 1s \(got 999ms\)"):
        load_filebeat(_write(tmp_path, GOOD.replace("topic: logs", "topic: logs\n  timeout: 999ms")))
