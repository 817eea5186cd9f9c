"""The client-kind registry: each kind round-trips settings -> engine data -> rendered file, the
profile surface validates or rejects with a message, a Filebeat duration walks from the sweep spec
to filebeat.yml as one typed value, and version-1 records still load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from ruamel.yaml import YAML

from tuner.driver.engines import ENGINES
from tuner.driver.filebeat.plan import output_section, queue_section
from tuner.spec.clients import KINDS, kind_of, profile_of
from tuner.spec.clients import rules_of as rules_for
from tuner.spec.clients.filebeat import FilebeatProfile, config_of
from tuner.spec.clients.java import JavaProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.duration import Duration
from tuner.spec.engine_id import EngineId
from tuner.spec.filebeat_load import load_filebeat
from tuner.spec.loader import load_sweep
from tuner.store.record_upgrade import upgrade_profiles
from tuner.store.results import ResultsStore


def test_every_kind_is_registered_once_and_names_a_registered_engine() -> None:
    assert set(KINDS) == {"librdkafka", "java", "filebeat", "otelcol"}
    for name, kind in KINDS.items():
        assert kind.name == name and kind.codecs and kind.title
        assert isinstance(kind.engine, EngineId) and ENGINES[kind.engine].id is kind.engine


def test_librdkafka_round_trip() -> None:
    profile = LibrdkafkaProfile(
        name="p", linger_ms=50, batch_messages=500, compression="zstd", partitioner="sticky"
    )
    kind = kind_of(profile)
    props = kind.client_settings(profile)
    assert props == {
        "linger.ms": "50", "batch.num.messages": "500", "compression.type": "zstd",
        "partitioner": "consistent_random", "sticky.partitioning.linger.ms": "100",
        # durability is always stated: librdkafka's own defaults here
        "acks": "-1", "enable.idempotence": "false", "retries": "2147483647",
        "max.in.flight.requests.per.connection": "1000000",
    }  # fmt: skip
    rules = rules_for(profile)
    assert (rules.kind, rules.linger_ms, rules.partitioning.sticky_ms) == ("librdkafka", 50, 100)
    rendered = kind.render(profile, ["recommended"])
    assert rendered.filename == "librdkafka.properties"
    assert rendered.text.startswith("# recommended\n") and "\nlinger.ms=50\n" in rendered.text
    assert not kind.multi_partition_requests


@pytest.mark.parametrize(
    ("knobs", "override"),
    [
        ({"linger_ms": 5}, {"queue.buffering.max.ms": "200"}),
        ({"compression": "zstd"}, {"compression.codec": "lz4"}),
    ],
)
def test_librdkafka_property_set_under_two_names_is_refused(
    knobs: dict[str, Any], override: dict[str, str]
) -> None:
    """librdkafka takes the name set last (checked with librdkafka_reading), the model read the
    knob: the profile said two things."""
    with pytest.raises(
        ValidationError, match=r"set one librdkafka property \((queue.buffering.max.ms|compression.codec)\)"
    ):
        LibrdkafkaProfile(name="p", **knobs, overrides=override)
    same = LibrdkafkaProfile(
        name="p", acks="all", overrides={"request.required.acks": "-1", "queue.buffering.max.ms": "200"}
    )
    assert rules_for(same).linger_ms == 200  # one name, or two with one value, is fine


def test_java_round_trip() -> None:
    profile = JavaProfile(name="j", linger_ms=20, batch_bytes=131_072, partitioner="random")
    kind = kind_of(profile)
    props = kind.client_settings(profile)
    assert props["batch.size"] == "131072" and props["partitioner.class"].endswith("RoundRobinPartitioner")
    rules = rules_for(profile)
    assert (rules.kind, rules.linger_ms, rules.partitioning.keyless) == ("java", 20, "round_robin")
    rendered = kind.render(profile, ["x"])
    assert rendered.filename == "java.properties" and "\nlinger.ms=20\n" in rendered.text
    assert kind.describe(profile) == "java linger 20 ms batch.size 131072 random default codec"
    with pytest.raises(ValidationError, match="batch_messages: not a java setting"):
        JavaProfile(name="j", batch_messages=10)


# The one order of the producer kinds' knob properties (rendered files, settings lines): batching,
# compression, durability, then partitioning; the durability defaults a profile leaves unset follow.
_ORDER = {
    "linger.ms": 0, "batch.num.messages": 1, "batch.size": 1, "compression.type": 2, "acks": 3,
    "enable.idempotence": 4, "max.in.flight.requests.per.connection": 5,
    "partitioner": 6, "partitioner.class": 6, "sticky.partitioning.linger.ms": 6,
}  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    client=st.sampled_from(["librdkafka", "java"]),
    partitioner=st.sampled_from(["default", "random", "sticky", "hash"]),
    acks=st.sampled_from(["0", "1", "all"]),
    max_in_flight=st.integers(1, 5),
    compression=st.sampled_from(["none", "gzip", "zstd"]),
)
def test_producer_kinds_state_their_knobs_in_one_order(
    client: str, partitioner: str, acks: str, max_in_flight: int, compression: str
) -> None:
    knobs = {"linger_ms": 7, "batch_bytes": 65_536, "compression": compression, "acks": acks}
    profile = profile_of({"name": "p", "client": client, **knobs, "idempotence": False,
                          "max_in_flight": max_in_flight, "partitioner": partitioner})  # fmt: skip
    ranks = [_ORDER[k] for k in kind_of(profile).client_settings(profile) if k in _ORDER]
    assert ranks == sorted(ranks) and {0, 1, 2, 3, 4, 5} <= set(ranks)


def test_java_overrides_take_the_env_provider_form_the_rendered_file_holds() -> None:
    """`${env:VAR}` (Kafka's EnvVarConfigProvider; what java.properties holds) is a profile's
    `${VAR}`: a team's file pasted into overrides is not refused as a literal secret, and a file's
    own config providers are kept beside env."""
    kind = KINDS["java"]
    pasted = JavaProfile(name="j", overrides={"ssl.truststore.password": "${env:TS_PASS}"})
    assert pasted == JavaProfile(name="j", overrides={"ssl.truststore.password": "${TS_PASS}"})
    own = {
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "ssl.keystore.location": "${file:/etc/kafka/paths.properties:keystore}",
    }
    text = kind.artifact(JavaProfile(name="j", overrides={**own, "ssl.key.password": "${env:K}"})).text
    assert "\nssl.key.password=${env:K}\n" in text and "\nconfig.providers=file,env\n" in text
    assert "\nssl.keystore.location=${file:/etc/kafka/paths.properties:keystore}\n" in text
    with pytest.raises(ValidationError, match="holds a secret"):
        JavaProfile(name="j", overrides={"ssl.key.password": "${env:K:literal}"})


def test_filebeat_round_trip(tmp_path: Path) -> None:
    section = {
        "output.kafka": {
            "bulk_max_size": 4096,
            "bulk_flush_frequency": "1m30s",
            "partition.random.group_events": 64,
        },
        "queue.mem": {"events": 8192, "flush.min_events": 4096, "flush.timeout": "0s"},
    }
    profile = profile_of({"name": "f", "client": "filebeat", "filebeat": section})
    kind = kind_of(profile)
    config = config_of(profile)
    assert output_section(config)["bulk_flush_frequency_ms"] == 90_000
    assert queue_section(config) == {"events": 8192, "flush_min_events": 4096, "flush_timeout_ms": 0}
    rules = rules_for(profile)
    assert (rules.kind, rules.flush_ms, rules.queue_batch, rules.partitioning.sticky_events) == (
        "filebeat", 90_000, 4096, 64,
    )  # fmt: skip
    rendered = kind.render(profile, ["recommended"])
    assert rendered.filename == "filebeat.yml"
    path = tmp_path / "filebeat.yml"
    path.write_text(rendered.text)
    assert load_filebeat(path).config == config  # the rendered file is exactly the profile
    assert kind.client_settings(profile)["output.kafka.bulk_flush_frequency"] == "1m30s"
    # The profile dumps to its short form and reads back equal.
    dumped = profile.model_dump(mode="json")
    assert dumped["filebeat"]["output"]["kafka"]["bulk_flush_frequency"] == "1m30s"
    assert "hosts" not in dumped["filebeat"]["output"]["kafka"]
    assert profile_of(dumped) == profile


def test_bulk_flush_frequency_walks_from_spec_to_filebeat_yml_as_one_typed_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\n"
        "workload: {name: w, topics: [{name: t, partitions: 1}], rate_per_producer: 1,"
        " message: {kind: generated, bytes: 100}, duration_s: 5}\n"
        "profiles:\n"
        "  - {name: p, client: filebeat, filebeat: {output.kafka.bulk_flush_frequency: 850ms}}\n"
    )
    plan = load_sweep(spec).runs[0]
    value = plan.profile.filebeat.kafka.bulk_flush_frequency  # type: ignore[union-attr]
    assert isinstance(value, Duration) and value.ns == 850_000_000

    parsed: list[Any] = []
    original = Duration.parse.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Duration], raw: Any) -> Duration:
        parsed.append(raw)
        return original(cls, raw)  # type: ignore[no-any-return]

    monkeypatch.setattr(Duration, "parse", classmethod(spy))
    config = config_of(plan.profile)
    assert config.kafka.bulk_flush_frequency is value  # the same object, not a copy in another unit
    engine = output_section(config)["bulk_flush_frequency_ms"]
    text = kind_of(plan.profile).render(plan.profile, ["walk"]).text
    assert parsed == []  # nothing between the spec and the file parses the duration again
    assert engine == 850.0
    assert "\n  bulk_flush_frequency: 850ms\n" in text


_DURATION_TEXT = st.one_of(
    st.integers(0, 10**6).map(lambda n: f"{n}ms"),
    st.integers(0, 3600).map(lambda n: f"{n}s"),
    st.tuples(st.integers(1, 59), st.integers(1, 59)).map(lambda t: f"{t[0]}m{t[1]}s"),
    st.floats(0, 1e5, allow_nan=False),
    st.sampled_from(["0", "-1s", "1x", "", "ms", "1.5.5s", "850 ms", "true"]),
)
_KAFKA_KEYS = st.sampled_from(
    [
        "bulk_max_size",
        "bulk_flush_frequency",
        "compression",
        "required_acks",
        "max_message_bytes",
        "bulk_max_sze",
    ]
)
_VALUES = st.one_of(
    st.integers(-5, 10**7), _DURATION_TEXT, st.sampled_from(["gzip", "zstd", "lz4", "none", "-1"])
)
_KNOBS = st.fixed_dictionaries(
    {},
    optional={
        "linger_ms": st.integers(0, 10_000),
        "batch_messages": st.integers(1, 10**6),
        "batch_bytes": st.integers(1, 10**7),
        "compression": st.sampled_from(["none", "gzip", "zstd"]),
        "acks": st.sampled_from(["0", "1", "all"]),
        "filebeat": st.dictionaries(_KAFKA_KEYS.map(lambda k: f"output.kafka.{k}"), _VALUES, max_size=4),
    },
)


@settings(max_examples=300, deadline=None)
@given(client=st.sampled_from(sorted(KINDS)), knobs=_KNOBS)
def test_profile_surface_validates_or_says_why(client: str, knobs: dict[str, Any]) -> None:
    try:
        profile = profile_of({"name": "p", "client": client, **knobs})
    except ValidationError as exc:
        assert exc.errors()[0]["msg"]  # a message, never another exception
        return
    kind = kind_of(profile)
    assert set(knobs) <= set(kind.model.model_fields) and type(profile) is kind.model  # its own only
    again = profile_of(json.loads(profile.model_dump_json()))
    assert again == profile
    assert kind.client_settings(again) == kind.client_settings(profile)
    assert rules_for(again) == rules_for(profile)
    kind.render(profile, ["h"])


@given(_DURATION_TEXT)
def test_duration_text_round_trips_or_is_refused(raw: Any) -> None:
    try:
        d = Duration.parse(raw)
    except ValueError as exc:
        assert "duration" in str(exc) or "negative" in str(exc)
        return
    assert Duration.parse(str(d)) == d
    assert YAML(typ="safe").load(f"v: {d}")["v"] == str(d)  # written unquoted, read back as text


_V1_RECORDS = Path(__file__).parent / "data" / "records-v1"


def test_version_1_filebeat_records_load_with_the_typed_section() -> None:
    records = {r.plan.name: r for r in ResultsStore(_V1_RECORDS).records()}
    config = config_of(records["filebeat-small-logs"].plan.profile)
    assert config.kafka.bulk_flush_frequency == Duration.parse("500ms")
    assert (config.mem.events, config.mem.flush.timeout) == (4096, Duration(0))
    assert config.kafka.partition.group_events == 2048
    assert config_of(records["filebeat-default"].plan.profile) == config_of(FilebeatProfile(name="d"))


def test_upgrade_leaves_todays_profiles_alone() -> None:
    today = profile_of(
        {"name": "f", "client": "filebeat", "filebeat": {"queue.mem.flush.timeout": "1s"}}
    ).model_dump(mode="json")
    assert upgrade_profiles(json.loads(json.dumps(today))) == today
    rdk = LibrdkafkaProfile(name="r", linger_ms=5).model_dump(mode="json")
    assert upgrade_profiles(dict(rdk)) == rdk
