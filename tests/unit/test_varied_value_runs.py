"""A sweep's varied value is the value its run runs, for every client kind: whatever else the profile
or its team file sets for the same setting (a knob, the property under another of its names, a file's
line, another of the client's spellings or choices), the file the run's client starts from, as the
engine reads it, holds the varied value. Two varied settings that decide one setting are one line."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.unit.team_files import SPEC
from tuner.core.errors import BadInput
from tuner.core.properties import parse_properties
from tuner.driver.rdkafka_worker import producer_config
from tuner.spec.clients import KINDS, ClientProfile, kind_of
from tuner.spec.clients.producer import ProducerKind, same_value
from tuner.spec.filebeat_load import load_filebeat
from tuner.spec.loader import load_sweep

PRODUCER_KINDS = sorted(name for name, kind in KINDS.items() if isinstance(kind, ProducerKind))
# Values each producer knob takes (any kind configured by properties shares the knobs).
KNOB_VALUES: dict[str, list[Any]] = {
    "linger_ms": [0, 0.5, 5, 250],
    "batch_messages": [1, 500, 10_000],
    "batch_bytes": [1000, 16_384, 500_000],
    "compression": ["none", "gzip", "snappy", "lz4", "zstd"],
    "compression_level": [1, 3, 9],
    "acks": ["0", "1", "all"],
    "idempotence": [True, False],
    "max_in_flight": [1, 5],
    "partitioner": ["default", "random", "sticky", "hash"],
}
CODEC = {"compression.type": "zstd"}  # what compression_level needs beside it (its codec's range)


def _runs(files: Mapping[str, str], profile: str, vary: Mapping[str, Any]) -> list[Any]:
    """The runs of a sweep whose one profile is `profile` (a team file's name or a flow mapping),
    varying `vary`, with `files` beside it."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            (Path(tmp) / name).write_text(text)
        spec = Path(tmp) / "spec.yaml"
        axes = ", ".join(f"{key}: [{json.dumps(value)}]" for key, value in vary.items())
        spec.write_text(SPEC.replace("PROFILE", profile) + f"vary: {{{axes}}}\n")
        return load_sweep(spec).runs


def _engine_config(profile: ClientProfile) -> dict[str, str]:
    """The settings the kind's engine starts its client with: its rendered file, read as it reads it."""
    kind = kind_of(profile)
    text = kind.artifact(profile).text
    if kind.name == "librdkafka":
        return {k: str(v) for k, v in producer_config(text, "kbt-test").items()}
    return parse_properties(text, kind.artifact(profile).filename)


def _knob_settings(kind: ProducerKind[Any], knob: str, value: Any) -> dict[str, str | None]:
    """The properties `knob` decides, by the client's own name, as a profile setting only it (and
    its codec) writes them; None: left to the client's default."""
    extra = {"compression": "zstd"} if knob == "compression_level" else {}
    conf = kind.model(name="bare", **extra, **{knob: value}).client_settings()
    out: dict[str, str | None] = {}
    for key in kind.knob_properties[knob]:
        found = [v for k, v in conf.items() if kind.canonical(k) == kind.canonical(key)]
        out[kind.canonical(key)] = found[-1] if found else None
    if knob in ("acks", "idempotence", "max_in_flight"):  # durability: stated whoever sets it
        out = {k: v for k, v in out.items() if v is not None}
    return out


def _names(kind: ProducerKind[Any], key: str) -> list[str]:
    """Every name the client takes for property `key`."""
    canonical = kind.canonical(key)
    return sorted({canonical, *(a for a, c in kind.aliases.items() if c == canonical)})


def _ran(kind: ProducerKind[Any], conf: Mapping[str, str], key: str) -> set[str]:
    return {v for k, v in conf.items() if kind.canonical(k) == kind.canonical(key)}


ProducerCase = tuple[str, dict[str, str], str, dict[str, Any], dict[str, Any]]


@st.composite
def producer_cases(draw: Callable[..., Any]) -> ProducerCase:
    """(kind, files, profile, vary, expected properties): a knob or a property varied over a profile
    whose team file, overrides or knob set the same property under any of its names, to another
    value."""
    kind_name = draw(st.sampled_from(PRODUCER_KINDS))
    kind = KINDS[kind_name]
    assert isinstance(kind, ProducerKind)
    knob = draw(st.sampled_from(sorted(kind.knob_properties)))
    values = KNOB_VALUES[knob]
    varied, rival = draw(st.sampled_from(values)), draw(st.sampled_from(values))
    context = CODEC if knob == "compression_level" else {}
    # the rival: what the knob's other value writes, each property under a name the client takes
    rival_props = {
        draw(st.sampled_from(_names(kind, key))): value
        for key, value in _knob_settings(kind, knob, rival).items()
        if value is not None
    }
    base = draw(st.sampled_from(["file", "overrides", "knob"]))
    written = sorted((k, v) for k, v in _knob_settings(kind, knob, varied).items() if v is not None)
    if written and draw(st.booleans()):  # the property itself varied, by any of its names
        key, value = draw(st.sampled_from(written))
        name = draw(st.sampled_from(_names(kind, key)))
        vary: dict[str, Any] = {f"profile.overrides.{name}": value}
        expected: dict[str, Any] = {key: value}
    else:
        if base == "knob":
            base = "overrides"
        vary = {f"profile.{knob}": varied}
        expected = _knob_settings(kind, knob, varied)
    files: dict[str, str] = {}
    if base == "file":
        lines = [f"{k}={v}" for k, v in {**context, **rival_props}.items()]
        files["producer.properties"] = "\n".join(lines) + "\n"
        profile = f"{kind_name}:producer.properties"
    elif base == "overrides":
        profile = json.dumps({"name": "p", "client": kind_name, "overrides": {**context, **rival_props}})
    else:
        profile = json.dumps({"name": "p", "client": kind_name, knob: rival, "overrides": context})
    return kind_name, files, profile, vary, expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(producer_cases())
def test_a_varied_producer_setting_is_what_the_engine_runs(
    case: ProducerCase,
) -> None:
    kind_name, files, profile, vary, expected = case
    kind = KINDS[kind_name]
    assert isinstance(kind, ProducerKind)
    [run] = _runs(files, profile, vary)
    conf = _engine_config(run.profile)
    for key, value in expected.items():
        ran = _ran(kind, conf, key)
        if value is None:
            assert ran == set(), (vary, key, conf)  # the client's own default, as the knob leaves it
        else:
            assert len(ran) == 1 and same_value(key, ran.pop(), str(value)), (vary, key, conf)
    # the dry run shows the same (its settings are the run's own)
    shown = run.profile.client_settings()
    for key in expected:
        assert _ran(kind, shown, key) == _ran(kind, conf, key)


def _filebeat(profile: ClientProfile) -> Any:
    """The run's filebeat.yml as Filebeat reads it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "filebeat.yml"
        path.write_text(kind_of(profile).artifact(profile).text)
        return load_filebeat(path).config


def _collector(profile: ClientProfile) -> Any:
    """The run's collector fragment, its exporter's section as the collector reads it."""
    return YAML(typ="safe").load(kind_of(profile).artifact(profile).text)["exporters"]["kafka"]


TEAM_FILEBEAT = "output.kafka:\n  hosts: ['kafka:9092']\n  topic: logs\n{rival}"
TEAM_COLLECTOR = """\
receivers: {{filelog: {{include: [/var/log/app.log]}}}}
exporters:
  kafka:
    brokers: [kafka:9092]
{rival}
service: {{pipelines: {{logs: {{receivers: [filelog], exporters: [kafka]}}}}}}
"""
# Per kind configured by a section: (the team file, the varied path, its values, the other lines of
# the file that set the same setting, what the engine reads back from the run's file).
SectionCase = tuple[str, str, list[Any], list[str], Callable[[ClientProfile], Any]]
SECTION_CASES: dict[str, list[SectionCase]] = {
    "filebeat": [
        (TEAM_FILEBEAT, "filebeat.output.kafka.worker", [1, 3], ["  workers: 2\n", "  worker: 4\n", ""],
         lambda p: _filebeat(p).kafka.effective_workers),
        (TEAM_FILEBEAT, "filebeat.output.kafka.workers", [1, 3], ["  worker: 2\n", "  workers: 4\n", ""],
         lambda p: _filebeat(p).kafka.effective_workers),
        (TEAM_FILEBEAT, "filebeat.output.kafka.partition.round_robin.group_events", [1, 5],
         ["  partition.random: {group_events: 3}\n", "  partition.hash: {}\n",
          "  partition.round_robin: {group_events: 2}\n"],
         lambda p: (_filebeat(p).kafka.partition.strategy, _filebeat(p).kafka.partition.group_events)),
        (TEAM_FILEBEAT, "filebeat.output.kafka.partition.random.group_events", [1, 5],
         ["  partition.round_robin: {group_events: 3}\n", "  partition.hash: {random: false}\n"],
         lambda p: (_filebeat(p).kafka.partition.strategy, _filebeat(p).kafka.partition.group_events)),
        (TEAM_FILEBEAT, "filebeat.output.kafka.bulk_max_size", [100, 4096], ["  bulk_max_size: 7\n", ""],
         lambda p: _filebeat(p).kafka.bulk_max_size),
        (TEAM_FILEBEAT, "filebeat.queue.mem.flush.timeout", ["250ms", "5s"],
         ["queue.mem: {flush.timeout: 1s}\n", "queue.mem.flush.timeout: 2s\n"],
         lambda p: str(_filebeat(p).mem.flush.timeout)),
    ],
    "otelcol": [
        (TEAM_COLLECTOR, "otelcol.kafka.record_partitioner.sticky_key.hasher", ["murmur2", "sarama_compat"],
         ["    record_partitioner: {round_robin: {}}", "    record_partitioner: {least_backup: {}}",
          "    record_partitioner: {sticky_key: {hasher: sarama_compat}}"],
         lambda p: _collector(p)["record_partitioner"]),
        (TEAM_COLLECTOR, "otelcol.kafka.producer.linger", ["5ms", "250ms"],
         ["    producer: {linger: 1s}", "    producer: {linger: 0s, compression: zstd}"],
         lambda p: _collector(p)["producer"]["linger"]),
    ],
}  # fmt: skip


def _section_expected(path: str, value: Any) -> Any:
    """What the engine reads back for `path` varied to `value`."""
    if path.endswith("partition.round_robin.group_events"):
        return ("round_robin", value)
    if path.endswith("partition.random.group_events"):
        return ("random", value)
    if path.endswith("record_partitioner.sticky_key.hasher"):
        return {"sticky_key": {"hasher": value}}
    return value


def test_every_kind_has_varied_settings_here() -> None:
    """A kind added to the registry is held to this too: a producer kind by its knobs, another kind
    by its cases here, each of its alternatives among them."""
    assert set(KINDS) == set(PRODUCER_KINDS) | set(SECTION_CASES)
    for name, kind in KINDS.items():
        if isinstance(kind, ProducerKind):
            assert set(kind.knob_properties) <= set(KNOB_VALUES)
            continue
        varied = {case[1] for case in SECTION_CASES[name]}
        for group in kind.alternatives:
            assert any(v.startswith(member) for member in group for v in varied), group


@st.composite
def section_cases(draw: Callable[..., Any]) -> tuple[str, str, Any, str, Callable[[ClientProfile], Any]]:
    kind = draw(st.sampled_from(sorted(SECTION_CASES)))
    team, path, values, rivals, read = draw(st.sampled_from(SECTION_CASES[kind]))
    return team.format(rival=draw(st.sampled_from(rivals))), path, draw(st.sampled_from(values)), kind, read


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(section_cases())
def test_a_varied_section_setting_is_what_the_engine_runs(
    case: tuple[str, str, Any, str, Callable[[ClientProfile], Any]],
) -> None:
    team, path, value, kind, read = case
    name = "team.yml"
    [run] = _runs({name: team}, name, {f"profile.{path}": value})
    assert run.profile.client == kind
    assert read(run.profile) == _section_expected(path, value)


@pytest.mark.parametrize(
    ("profile", "files", "vary", "line"),
    [
        (
            '{"name": "p"}',
            {},
            {"profile.linger_ms": 5, "profile.overrides.queue.buffering.max.ms": 9},
            "profile.linger_ms and profile.overrides.queue.buffering.max.ms decide one librdkafka setting",
        ),
        (
            '{"name": "p", "client": "java", "compression": "zstd"}',
            {},
            {"profile.compression_level": 3, "profile.overrides.compression.zstd.level": 4},
            "profile.compression_level and profile.overrides.compression.zstd.level decide one Java setting",
        ),
        (
            "team.yml",
            {"team.yml": TEAM_FILEBEAT.format(rival="")},
            {"profile.filebeat.output.kafka.worker": 1, "profile.filebeat.output.kafka.workers": 2},
            "profile.filebeat.output.kafka.worker and profile.filebeat.output.kafka.workers decide one"
            " Filebeat setting",
        ),
    ],
)
def test_two_varied_settings_of_one_setting_are_one_line(
    profile: str, files: dict[str, str], vary: dict[str, Any], line: str
) -> None:
    with pytest.raises(BadInput, match=line):
        _runs(files, profile, vary)


def test_settings_that_decide_different_things_are_varied_together() -> None:
    [run] = _runs(
        {"producer.properties": "linger.ms=0.5\nbatch.size=1000\n"},
        "librdkafka:producer.properties",
        {"profile.linger_ms": 5, "profile.batch_bytes": 2000, "profile.overrides.batch.num.messages": 7},
    )
    conf = _engine_config(run.profile)
    assert (conf["linger.ms"], conf["batch.size"], conf["batch.num.messages"]) == ("5", "2000", "7")


def test_the_knobs_decide_the_properties_they_name() -> None:
    """knob_properties holds what client_settings writes: every property a knob's value writes is
    one the mapping names (so a varied knob takes every one of them from the file)."""
    for name in PRODUCER_KINDS:
        kind = KINDS[name]
        assert isinstance(kind, ProducerKind)
        plain = kind.model(name="bare", compression="zstd").client_settings()
        for knob, values in KNOB_VALUES.items():
            if knob not in kind.model.model_fields:
                continue
            assert knob in kind.knob_properties, (name, knob)
            named = {kind.canonical(k) for k in kind.knob_properties[knob]}
            for value in values:
                extra = {"compression": "zstd"} if knob != "compression" else {}
                conf = kind.model(name="bare", **extra, **{knob: value}).client_settings()
                written = {kind.canonical(k) for k, v in conf.items() if plain.get(k) != v}
                # a durability default the client derives from the knob's value is stated, not decided
                derived = {kind.canonical(k) for k, _ in kind.DURABILITY}
                assert written - named <= derived, (name, knob, value, written)


def test_the_sticky_partitioning_linger_follows_the_linger_that_runs() -> None:
    """`partitioner: sticky` is librdkafka's consistent_random with sticky.partitioning.linger.ms
    twice the linger: the linger a varied override runs, not the knob's default."""
    runs = _runs({}, '{"name": "p", "partitioner": "sticky"}', {"profile.overrides.linger.ms": 100})
    conf = _engine_config(runs[0].profile)
    assert (conf["linger.ms"], conf["sticky.partitioning.linger.ms"]) == ("100", "200")


# A varied setting another setting of the profile turns off, and that setting.
IDLE = [
    (
        TEAM_FILEBEAT.format(rival="queue.mem.flush.min_events: 0\n"),
        "filebeat.queue.mem.flush.timeout",
        "250ms",
        "filebeat.queue.mem.flush.min_events",
        512,
        lambda p: str(_filebeat(p).mem.effective_flush_timeout),
    ),
    (
        TEAM_COLLECTOR.format(rival="    sending_queue: {enabled: false}"),
        "otelcol.kafka.sending_queue.batch.flush_timeout",
        "250ms",
        "otelcol.kafka.sending_queue.enabled",
        True,
        lambda p: _collector(p)["sending_queue"]["batch"]["flush_timeout"],
    ),
]


@pytest.mark.parametrize(("team", "path", "value", "gate", "on", "read"), IDLE)
def test_a_varied_setting_the_profile_turns_off_is_one_line_unless_the_run_turns_it_on(
    team: str, path: str, value: Any, gate: str, on: Any, read: Callable[[ClientProfile], Any]
) -> None:
    with pytest.raises(
        BadInput, match=rf"profile\.{path} would not run: .* \(set profile\.{gate} in the run too\)"
    ):
        _runs({"team.yml": team}, "team.yml", {f"profile.{path}": value})
    [run] = _runs({"team.yml": team}, "team.yml", {f"profile.{path}": value, f"profile.{gate}": on})
    assert read(run.profile) == value


# Durability the client states whoever decides it: a knob that sets one of these may state the others.
DURABILITY = {"acks", "enable.idempotence", "max.in.flight.requests.per.connection"}


@pytest.mark.parametrize("kind_name", PRODUCER_KINDS)
def test_each_knobs_table_row_names_what_it_changes(kind_name: str) -> None:
    """Every property a knob changes in the client's settings is in its row of knob_properties (the
    table drop_rivals reads), so a varied knob drops every rival of what it decides."""
    kind = KINDS[kind_name]
    assert isinstance(kind, ProducerKind)
    for knob, values in KNOB_VALUES.items():
        if knob not in kind.model.model_fields:
            continue
        extra = {"compression": "zstd"} if knob == "compression_level" else {}
        bare = {kind.canonical(k): v for k, v in kind.model(name="bare", **extra).client_settings().items()}
        row = {kind.canonical(k) for k in kind.knob_properties.get(knob, ())}
        for value in values:
            conf = kind.model(name="bare", **extra, **{knob: value}).client_settings()
            changed = {kind.canonical(k) for k, v in conf.items() if bare.get(kind.canonical(k)) != v}
            changed |= {k for k in bare if k not in {kind.canonical(c) for c in conf}}
            assert changed - DURABILITY <= row, (knob, value, changed - row)
