"""Client kind `otelcol` (the OpenTelemetry Collector): its settings surface (hypothesis), its
request-formation model's stages against hand-worked cases, the rendered collector fragment and the
pod config the engine writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from ruamel.yaml import YAML

from tuner.cli.app import main
from tuner.core.errors import BadInput, ExitStatus
from tuner.core.redact import scrub
from tuner.driver.engines import ENGINES
from tuner.driver.otelcol.build import collector_binary
from tuner.driver.otelcol.check import check_fragment
from tuner.driver.otelcol.pod_config import base_config
from tuner.driver.tailed.pods import deployment_env
from tuner.driver.tailed.readback import LINES, Tally
from tuner.model.otelcol_sim import exports, merged, reads
from tuner.model.predict import predict
from tuner.model.traffic import Traffic
from tuner.spec.clients import kind_of, profile_of, rules_of
from tuner.spec.clients.base import SearchContext
from tuner.spec.clients.otelcol import OtelcolProfile, config_of
from tuner.spec.otelcol import OtelcolConfig


def profile(**settings: Any) -> OtelcolProfile:
    return OtelcolProfile(name="o", otelcol=settings or None)


def test_kind_is_registered_with_its_engine() -> None:
    kind = kind_of(profile())
    assert (kind.name, kind.engine) == ("otelcol", "otelcol") and kind.engine in ENGINES


def test_shipped_defaults_map_to_the_release_defaults() -> None:
    rules = rules_of(profile())
    assert (rules.poll_ms, rules.emit_batch, rules.emit_flush_ms) == (200, 100, 100)
    assert (rules.linger_ms, rules.in_flight, rules.batch_min, rules.record_per_line) == (10, 1, 0, False)
    assert rules.partitioning.keyless == "sticky_batch" and rules.compression == "none"


def test_dotted_and_nested_settings_are_one_config() -> None:
    dotted = profile(**{"kafka.producer.linger": "100ms", "kafka.sending_queue.batch.min_size": 500})
    nested = profile(kafka={"producer": {"linger": "100ms"}, "sending_queue": {"batch": {"min_size": 500}}})
    assert dotted == nested
    rules = rules_of(dotted)
    assert (rules.linger_ms, rules.batch_min, rules.batch_timeout_ms) == (100, 500, 200)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"kafka.producer.lingr": "1s"}, 'did you mean "linger"'),
        ({"kafka.producer.compression": "brotli"}, "compression"),
        ({"kafka.record_partitioner": {"round_robin": {}, "least_backup": {}}}, "exactly one"),
        ({"kafka.sending_queue.batch": {"min_size": 10, "max_size": 5}}, "below min_size"),
        ({"filelog.poll_interval": "0s"}, "greater than 0"),
        ({"kafka.sending_queue.batch": {"flush_timeout": "0s"}}, r"flush_timeout: must be greater than 0"),
        # the collector's own words for these: unsupported parameters {Level:3} for compression type "lz4"
        (
            {"kafka.producer.compression": "lz4", "kafka.producer.compression_params.level": 3},
            r"compression_params.level: lz4 takes none \(0\) \(got 3\)",
        ),
        (
            {"kafka.producer.compression": "gzip", "kafka.producer.compression_params.level": 10},
            r"compression_params.level: gzip takes -2 .. 9 \(got 10\)",
        ),
    ],
)
def test_bad_settings_say_why(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        profile(**settings)


def test_producer_knobs_of_other_kinds_point_to_the_collector_option() -> None:
    with pytest.raises(ValidationError, match=r"kafka\.producer\.linger"):
        profile_of({"name": "o", "client": "otelcol", "linger_ms": 5})
    with pytest.raises(ValidationError, match=r"kafka\.producer\.compression_params\.level"):
        profile_of({"name": "o", "client": "otelcol", "compression_level": 5})
    # the option the hint names is one the collector takes, and the rendered file keeps it
    hinted = profile(**{"kafka.producer.compression": "zstd", "kafka.producer.compression_params.level": 5})
    assert kind_of(hinted).client_settings(hinted)["exporters.kafka.producer.compression_params.level"] == "5"
    assert "compression_params:\n        level: 5\n" in kind_of(hinted).artifact(hinted).text


_durations = st.builds(lambda ms: f"{ms}ms", st.integers(1, 5000))
_settings = st.fixed_dictionaries(
    {},
    optional={
        "kafka.producer.linger": _durations,
        "kafka.producer.flush_max_messages": st.integers(1, 100_000),
        "kafka.producer.compression": st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]),
        "kafka.producer.compression_params": st.just({"level": 0}),  # every codec takes 0
        "kafka.producer.required_acks": st.sampled_from(["0", "1", "all", -1, 1]),
        "kafka.logs.encoding": st.sampled_from(["otlp_proto", "otlp_json", "raw"]),
        "kafka.sending_queue.batch": st.fixed_dictionaries(
            {}, optional={"flush_timeout": _durations, "min_size": st.integers(1, 20_000)}
        ),
        "kafka.record_partitioner": st.sampled_from(
            [{"round_robin": {}}, {"sticky_key": {"hasher": "murmur2"}}]
        ),
        "filelog.poll_interval": _durations,
    },
)


@settings(max_examples=60, deadline=None)
@given(_settings)
def test_any_valid_setting_round_trips_through_records_rules_and_rendering(raw: dict[str, Any]) -> None:
    p = profile(**raw)
    again = profile_of(json.loads(p.model_dump_json()))
    assert again == p
    rules = rules_of(p)
    assert rules.linger_ms > 0 and rules.poll_ms > 0
    rendered = kind_of(p).render(p, ["kbt recommend"])
    doc = YAML(typ="safe").load(rendered.text)
    sections = {"kafka": doc["exporters"]["kafka"], "filelog": (doc.get("receivers") or {}).get("file_log")}
    # The fragment read back as the collector reads it is the profile's settings again.
    back = OtelcolConfig.model_validate({k: v for k, v in sections.items() if v})
    assert back.compact() == config_of(p).compact()


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.one_of(st.integers(), st.text(max_size=8)), max_size=3))
def test_arbitrary_settings_validate_or_raise_a_validation_error(raw: dict[str, Any]) -> None:
    try:
        p = profile(**raw)
    except ValidationError as exc:
        assert "otelcol" in str(exc)  # the error names where the bad setting is
        return
    assert rules_of(p).poll_ms > 0


def test_reads_land_on_the_next_poll() -> None:
    assert reads([0.05, 0.2, 0.21, 0.59], 0.2, 0.0) == pytest.approx([0.2, 0.2, 0.4, 0.6])


def test_emitter_hands_full_batches_at_once_and_the_rest_at_its_tick() -> None:
    read_at = [0.2] * 250
    handed = exports(read_at, 100, 0.1, 0.05)
    assert [(round(t, 3), a, b) for t, a, b in handed] == [(0.2, 0, 100), (0.2, 100, 200), (0.25, 200, 250)]


def test_exporter_batching_merges_exports_until_min_size_or_the_timer() -> None:
    rules = rules_of(profile(**{"kafka.sending_queue.batch": {"min_size": 150, "flush_timeout": "1s"}}))
    handed = [(0.1, 0, 100), (0.3, 100, 200), (0.5, 200, 250)]
    assert merged(handed, rules, 0.0) == [(0.3, 0, 200), (1.3, 200, 250)]


def test_model_requests_follow_the_polls_and_batching() -> None:
    traffic = Traffic(producers=4, rate=40.0, message_bytes=1600, partitions=(24,), brokers=3)
    shipped = predict(traffic, profile()).requests_per_s
    # 40 lines/s read every 200 ms: one export per poll, one request each, so ~5 per pod per second.
    assert 4 * 4.5 <= shipped <= 4 * 5.5
    held = predict(traffic, profile(**{"kafka.sending_queue.batch": {"flush_timeout": "1s"}})).requests_per_s
    assert 4 * 0.8 <= held <= 4 * 1.2
    raw_rr = profile(**{"kafka.logs.encoding": "raw", "kafka.record_partitioner": {"round_robin": {}}})
    assert predict(traffic, raw_rr).requests_per_s > shipped  # lines spread over every broker


def test_render_is_a_collector_fragment_and_the_recommender_families_are_valid() -> None:
    p = profile(**{"kafka.producer.linger": "50ms", "kafka.sending_queue.batch.flush_timeout": "500ms"})
    text = kind_of(p).render(p, ["why"]).text
    assert text.startswith("# why\n")
    doc = YAML(typ="safe").load(text)
    assert doc["exporters"]["kafka"]["producer"] == {"linger": "50ms"}
    assert doc["exporters"]["kafka"]["sending_queue"]["batch"]["flush_timeout"] == "500ms"
    ctx = SearchContext(
        budget_ms=1000,
        rate_per_producer=40,
        keyless=True,
        topic_max_bytes=1_048_588,
        max_request_bytes=None,
        base=None,
    )
    for family in kind_of(p).families(ctx):
        made = family.make(700, "zstd")
        assert rules_of(made).batch_timeout_ms == 700 and rules_of(made).compression == "zstd"
        assert rules_of(made).batch_min > 40 * 0.7  # the timer sends the batch, not its size


def test_the_pod_base_holds_none_of_the_profiles_settings(tmp_path: Path) -> None:
    doc = base_config(log_file=tmp_path / "a.log", metrics_port=9, workdir=tmp_path)
    kafka = doc["exporters"]["kafka"]
    # The profile's settings come from its rendered fragment, merged over this base by the collector.
    assert kafka == {"brokers": "${env:KAFKA_HOSTS}", "logs": {"topic": "${env:KAFKA_TOPIC}"}}
    assert doc["receivers"]["file_log"] == {"include": [str(tmp_path / "a.log")], "start_at": "beginning"}
    assert deployment_env("h1:1,h2:2", "t") == {"KAFKA_HOSTS": "h1:1,h2:2", "KAFKA_TOPIC": "t"}
    json.dumps(doc)  # written as JSON (which is YAML)


def test_readback_finds_every_line_of_an_export() -> None:
    tally = Tally(window=(0.0, 2e9), line=LINES)
    body = b"".join(b"\x0a\x05" + f"1795543999{k:06d} 3-{k} text".encode() for k in range(5))
    tally.add(0, body, (2, 1795543999500))
    assert bytes(tally.marks.seen[3]).rstrip(b"\x00") == b"\x01" * 5 and tally.marks.distinct == 5
    assert tally.events_in_window == 5


_BUILT = collector_binary()


@pytest.mark.skipif(_BUILT is None, reason="no OpenTelemetry Collector build: run make install")
@settings(max_examples=8, deadline=None)
@given(_settings)
def test_the_collector_validates_every_rendered_fragment(tmp_path_factory: Any, raw: dict[str, Any]) -> None:
    p = profile(**raw)
    path = tmp_path_factory.mktemp("frag") / "otelcol.yaml"
    path.write_text(kind_of(p).render(p, ["kbt"]).text, encoding="utf-8")
    assert check_fragment(path) is None


@pytest.mark.skipif(_BUILT is None, reason="no OpenTelemetry Collector build: run make install")
def test_the_collector_refuses_what_it_does_not_know(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("exporters:\n  kafka:\n    producer: {lingr: 5ms}\n", encoding="utf-8")
    problem = check_fragment(path)
    assert problem is not None and "lingr" in problem


@pytest.mark.skipif(_BUILT is None, reason="no OpenTelemetry Collector build: run make install")
def test_a_numeric_option_from_the_environment_is_checked_with_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config templated for its deployment (`max_message_bytes: ${env:MAX_BYTES}`): with the
    variable set here the collector checks its value; unset, the complaint names it. A secret's
    variable is named too (quoted, it showed as `${env:[redacted]}`): its value is never handed over."""
    path = tmp_path / "team.yaml"
    path.write_text(
        "exporters:\n  kafka:\n    producer:\n      max_message_bytes: ${env:KBT_UNIT_MAX_BYTES}\n"
        '    auth:\n      sasl:\n        username: u\n        password: "${env:KBT_UNIT_PASSWORD}"\n'
        "        mechanism: PLAIN\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("KBT_UNIT_MAX_BYTES", raising=False)
    monkeypatch.delenv("KBT_UNIT_PASSWORD", raising=False)
    problem = check_fragment(path)
    assert problem is not None
    shown = scrub(problem)  # as it is printed: every output passes the scrubber
    assert shown.endswith("given a placeholder: ${env:KBT_UNIT_MAX_BYTES}, ${env:KBT_UNIT_PASSWORD})")
    monkeypatch.setenv("KBT_UNIT_MAX_BYTES", "2000000")
    monkeypatch.setenv("KBT_UNIT_PASSWORD", "never-handed-over")  # a secret's variable: a placeholder
    assert check_fragment(path) is None


@pytest.mark.skipif(_BUILT is None, reason="no OpenTelemetry Collector build: run make install")
def test_a_brokers_variable_as_one_list_element_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`brokers: ["${env:KAFKA_HOSTS}"]` is one seed address "h1:9092,h2:9092" to the collector (it
    drops every record and runs on); the variable alone is every broker. A list of one variable per
    broker passes, unless this environment gives one of them several."""
    path = tmp_path / "team.yaml"
    path.write_text('exporters:\n  kafka/logs:\n    brokers: ["${env:KAFKA_HOSTS}"]\n', encoding="utf-8")
    with pytest.raises(BadInput) as err:
        check_fragment(path)
    assert err.value.message == (
        f"{path}: exporters.kafka/logs.brokers: a ${{env:KAFKA_HOSTS}} list element is one broker"
        " address to the collector: with several brokers in the variable every record is dropped; write"
        " brokers: ${env:KAFKA_HOSTS} (the variable alone, not in a list)"
    )
    path.write_text("exporters:\n  kafka:\n    brokers: ${env:KAFKA_HOSTS}\n", encoding="utf-8")
    assert check_fragment(path) is None
    path.write_text('exporters:\n  kafka:\n    brokers: ["${env:KBT_B1}", "${KBT_B2}"]\n', encoding="utf-8")
    monkeypatch.setenv("KBT_B1", "k1:9092")
    monkeypatch.setenv("KBT_B2", "k2:9092")
    assert check_fragment(path) is None
    monkeypatch.setenv("KBT_B2", "k2:9092,k3:9092")
    with pytest.raises(BadInput, match=r"\$\{env:KBT_B2\} holds several brokers here"):
        check_fragment(path)


@pytest.mark.skipif(_BUILT is None, reason="no OpenTelemetry Collector build: run make install")
def test_kbt_check_otelcol_says_ok_or_one_line_per_refused_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "otelcol.yaml"
    p = profile(**{"kafka.sending_queue.batch.flush_timeout": "1s", "kafka.producer.compression": "zstd"})
    good.write_text(kind_of(p).render(p, ["kbt"]).text, encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text("exporters:\n  kafka:\n    sending_queue: {batch: {flush_timeot: 1s}}\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["check", "otelcol", str(good)])
    assert exc.value.code == ExitStatus.OK
    assert capsys.readouterr().out.strip().endswith("otelcol.yaml: ok")
    with pytest.raises(SystemExit) as exc:
        main(["check", "otelcol", str(good), str(bad), str(tmp_path / "missing.yaml")])
    assert exc.value.code == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("kbt: error: ") for line in err)
    assert "flush_timeot" in err[0] and "missing.yaml: no such collector config" in err[1]


@pytest.mark.parametrize("keyless", [True, False])
def test_candidates_keep_the_baselines_collector_settings_but_the_searched_ones(keyless: bool) -> None:
    """The baseline's acks, record size, encoding, partitioner, queue consumers and poll interval
    stay (the collector runs them and the runs measure them); linger, codec and the queue's batch are
    the search's, and a queue the baseline turned off is turned on, stated, for the fragment's merge."""
    base = profile(
        **{
            "kafka.producer": {"required_acks": "all", "max_message_bytes": 5_000_000, "linger": "5ms"},
            "kafka.logs.encoding": "raw",
            "kafka.record_partitioner.round_robin": {},
            "kafka.sending_queue": {"enabled": False, "num_consumers": 4},
            "filelog.poll_interval": "1s",
        }
    )
    kind = kind_of(base)
    for family in kind.families(SearchContext(500.0, 200.0, keyless, 10_000_000, None, base)):
        got = config_of(family.make(100.0, "lz4"))
        kafka = got.kafka
        assert (kafka.producer.required_acks, kafka.producer.max_message_bytes) == ("all", 5_000_000)
        assert (got.encoding, kafka.record_partitioner, got.poll_interval.ms) == (
            "raw",
            config_of(base).kafka.record_partitioner,
            1000,
        )
        assert (kafka.sending_queue.num_consumers, kafka.sending_queue.enabled) == (4, True)
        assert got.compression == "lz4" and got.linger.ms in (10, 100) and got.batching is not None


def test_the_collectors_complaint_is_its_words_without_its_log_time(tmp_path: Path) -> None:
    """The collector logs a config it cannot resolve with Go's time prefix: the line kbt shows is
    the complaint alone."""
    from tuner.driver.otelcol.build import validate

    fake = tmp_path / "otelcol"
    fake.write_text(
        "#!/bin/sh\necho 'starting' >&2\n"
        "echo '2026/11/30 23:51:01 failed to get config: cannot resolve the configuration' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    assert validate(fake, [tmp_path / "c.yaml"]) == "failed to get config: cannot resolve the configuration"


def test_a_collector_that_does_not_answer_is_one_line_in_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`validate` worked 30 s through sending_queue.num_consumers 2147483648: the check is bounded
    (the answer names the bound: a collector that ran to its end would have answered otherwise)."""
    from tuner.driver.otelcol import build

    fake = tmp_path / "otelcol"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setattr(build, "VALIDATE_TIMEOUT_S", 0.5)
    assert build.validate(fake, [tmp_path / "c.yaml"]) == "the collector did not answer within 0.5 s"
