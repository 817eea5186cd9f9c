"""A team's own collector config named where a profile goes (`profiles: [deploy/collector.yaml]` or
`otelcol:...`): the kafka exporter and filelog receiver settings of its logs pipeline that kbt runs,
`${env:VAR:-default}` read as the collector reads it; where it sends and how it connects are the
lab's or the target's, options kbt does not run are named, and batching kbt cannot run (the batch
processor) is one line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.team_files import COLLECTOR, sweep_naming
from tuner.core.errors import BadInput
from tuner.driver.otelcol.build import collector_binary
from tuner.spec.clients import kind_of
from tuner.spec.clients.otelcol import config_of
from tuner.spec.loader import load_sweep
from tuner.spec.otelcol_own import team_collector


def _load(tmp_path: Path, ref: str, text: str) -> Any:
    [run] = load_sweep(sweep_naming(tmp_path, ref, {"collector.yaml": text})).runs
    return run.profile


@pytest.mark.parametrize("ref", ["collector.yaml", "otelcol:collector.yaml"])
def test_the_pipelines_exporter_and_receiver_settings_run(
    tmp_path: Path, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KBT_TEST_LINGER", raising=False)
    profile = _load(tmp_path, ref, COLLECTOR)
    assert (profile.client, profile.name) == ("otelcol", "collector")
    config = config_of(profile)
    assert (config.linger.ms, config.compression, config.encoding) == (50.0, "zstd", "raw")
    assert config.kafka.producer.required_acks == "all"  # the team's durability
    assert config.batching is not None and (config.batching.min_size, config.batching.flush_timeout.ms) == (
        2000,
        200.0,
    )
    assert (config.kafka.sending_queue.num_consumers, config.poll_interval.ms) == (4, 500.0)
    assert profile.description == (
        "collector.yaml as OpenTelemetry Collector reads it (auth, brokers, client_id, logs.topic: the"
        " lab's or the target's); not run by kbt (the collector's defaults):"
        " producer.allow_auto_topic_creation, timeout"
    )
    rendered = kind_of(profile).render(profile, ()).text
    assert "otel-agent" not in rendered and "KAFKA_PASSWORD" not in rendered


def test_a_variable_is_read_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBT_TEST_LINGER", "20ms")
    assert config_of(_load(tmp_path, "collector.yaml", COLLECTOR)).linger.ms == 20.0
    monkeypatch.delenv("KBT_TEST_LINGER")
    unset = COLLECTOR.replace("${env:KBT_TEST_LINGER:-50ms}", "${env:KBT_TEST_LINGER}")
    with pytest.raises(BadInput) as err:
        _load(tmp_path, "collector.yaml", unset)
    assert err.value.message.endswith(
        "collector.yaml: exporters.kafka.producer.linger: ${env:KBT_TEST_LINGER} is not set (kbt runs the"
        " value the collector reads)"
    )


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("processors: []", "processors: [batch]",
         "processors.batch: kbt runs the exporter's own batching, not the batch processor"),
        ("exporters: [kafka]", "exporters: [kafka, kafka/dr]",
         "the logs pipeline exports to kafka, kafka/dr: kbt runs one kafka exporter"),
        ("    logs:\n      receivers", "    traces:\n      receivers",
         "no logs pipeline exports to a kafka exporter (kbt runs one)"),
        ("      compression: zstd", "      compression: brotli", "compression"),
        # the collector refuses it too: true or false only
        ("      enabled: true", "      enabled: yes", "sending_queue.enabled"),
        # a bare number is nanoseconds to the collector (its print-config), seconds to Filebeat
        ("${env:KBT_TEST_LINGER:-50ms}", "50", "linger: 50 has no unit: the collector reads it as 50 ns"),
        ("flush_timeout: 200ms", 'flush_timeout: "200"', "200 has no unit: the collector refuses it"),
    ],
)  # fmt: skip
def test_a_file_kbt_cannot_run_as_written_is_one_line(tmp_path: Path, old: str, new: str, says: str) -> None:
    assert old in COLLECTOR
    with pytest.raises(BadInput) as err:
        _load(tmp_path, "otelcol:collector.yaml", COLLECTOR.replace(old, new, 1))
    assert "\n" not in err.value.message and says in err.value.message, err.value.message


def test_a_yaml_file_without_a_pipeline_is_no_collector_config(tmp_path: Path) -> None:
    profile = _load(tmp_path, "collector.yaml", "{name: plain, client: otelcol}\n")
    assert profile.name == "plain"
    with pytest.raises(BadInput) as err:
        _load(tmp_path, "otelcol:collector.yaml", "- a list\n")
    assert err.value.message.endswith("collector.yaml: expected a mapping of keys at the top level")


_KEYS = st.sampled_from(
    ["receivers", "exporters", "service", "pipelines", "logs", "kafka", "kafka/x", "filelog", "producer",
     "linger", "exporters", "processors", "batch", "sending_queue", "poll_interval", "brokers"]
)  # fmt: skip
_TREES = st.recursive(
    st.one_of(st.none(), st.integers(-5, 5), st.sampled_from(["10ms", "${env:X:-1s}", "kafka", "zstd"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_KEYS, _TREES, max_size=4))
def test_any_shape_is_settings_or_one_line(data: dict[str, Any]) -> None:
    try:
        settings_, left, not_carried = team_collector(data, "c.yaml", environ={})
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("c.yaml")
    else:
        assert isinstance(settings_, dict) and all(isinstance(x, str) for x in [*left, *not_carried])


@pytest.mark.skipif(collector_binary() is None, reason="no OpenTelemetry Collector build: run make install")
def test_the_team_file_and_the_rendered_fragment_pass_the_real_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The team's file is one the collector takes (its ${env:VAR:-default} left to the collector,
    not a placeholder), read as the collector reads it (0100 is octal: 64), and so is the fragment
    kbt renders from it."""
    from tuner.driver.otelcol.check import check_fragment

    monkeypatch.delenv("KBT_TEST_LINGER", raising=False)
    monkeypatch.setenv("KAFKA_BROKERS", "127.0.0.1:1,127.0.0.1:2")
    team = COLLECTOR.replace(
        "      compression: zstd\n", "      compression: zstd\n      flush_max_messages: 0100\n"
    )
    profile = _load(tmp_path, "collector.yaml", team)
    assert config_of(profile).kafka.producer.flush_max_messages == 64
    assert check_fragment(tmp_path / "collector.yaml") is None
    config = f"--config=file:{tmp_path}/collector.yaml"
    printed = subprocess.run(
        [str(collector_binary()), "print-config", config, "--format=json"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "KAFKA_PASSWORD": "x"},
    )  # fmt: skip
    assert json.loads(printed.stdout)["exporters"]["kafka"]["producer"]["flush_max_messages"] == 64, (
        printed.stderr
    )
    fragment = tmp_path / "otelcol.yaml"
    fragment.write_text(kind_of(profile).render(profile, ()).text)
    assert check_fragment(fragment) is None


@pytest.mark.skipif(collector_binary() is None, reason="no OpenTelemetry Collector build: run make install")
def test_an_option_the_collector_does_not_have_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelled exporter option was only named as not run by kbt, and the run went on with the
    collector's default: the team's file is the collector's to validate, before anything runs."""
    from tuner.runner.preflight import clients_checked

    monkeypatch.chdir(tmp_path)
    typo = COLLECTOR.replace("      num_consumers: 4\n", "      num_consumrs: 4\n")
    loaded = load_sweep(sweep_naming(tmp_path, "collector.yaml", {"collector.yaml": typo}))
    assert loaded.own_files == {"collector": tmp_path / "collector.yaml"}
    with pytest.raises(BadInput) as err:
        clients_checked((plan.profile for plan in loaded.runs), loaded.own_files)
    assert err.value.message.startswith("collector.yaml: otelcol validate: ")
    assert "invalid keys: num_consumrs" in err.value.message and "\n" not in err.value.message
    good = load_sweep(sweep_naming(tmp_path, "collector.yaml", {"collector.yaml": COLLECTOR}))
    clients_checked((plan.profile for plan in good.runs), good.own_files)  # the collector takes it
