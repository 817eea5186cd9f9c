"""`vary:` by dotted path: any setting of a kind, typed and validated like the profile; labelled
axes; the old flat knobs and existing specs' names and hashes unchanged."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.spec.clients import rules_of
from tuner.spec.clients.filebeat import FilebeatProfile, config_of
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import SweepSpec

WORKLOAD: dict[str, Any] = {
    "name": "w",
    "topics": [{"name": "w", "partitions": 6}],
    "producers": 4,
    "processes": 2,
    "rate_per_producer": 10,
    "message": {"kind": "generated", "bytes": 100},
    "duration_s": 10,
    "warmup_s": 1,
}
FILEBEAT = {"name": "fb", "client": "filebeat", "filebeat": {"output.kafka": {"compression": "lz4"}}}
LIBRDKAFKA = {"name": "rd", "linger_ms": 5}


def _spec(vary: dict[str, Any], profiles: list[dict[str, Any]] | None = None, **more: Any) -> SweepSpec:
    return SweepSpec.model_validate(
        {"name": "s", "workload": WORKLOAD, "profiles": profiles or [FILEBEAT], "vary": vary, **more}
    )


def _error(vary: dict[str, Any], profiles: list[dict[str, Any]] | None = None) -> str:
    with pytest.raises(ValueError) as exc:
        _spec(vary, profiles).expand()
    return str(exc.value)


def test_issue_example_expands_to_three_typed_runs() -> None:
    plans = _spec({"profile.filebeat.output.kafka.bulk_max_size": [512, 2048, 4096]}).expand()
    assert [p.name for p in plans] == ["fb-bulk_max_size512", "fb-bulk_max_size2048", "fb-bulk_max_size4096"]
    assert [config_of(p.profile).kafka.bulk_max_size for p in plans] == [512, 2048, 4096]
    # the profile's other settings are kept, and the value is the model's type
    assert all(config_of(p.profile).kafka.compression == "lz4" for p in plans)


def test_duration_path_is_typed() -> None:
    plans = _spec({"profile.filebeat.queue.mem.flush.timeout": ["250ms", "1s"]}).expand()
    assert [config_of(p.profile).mem.flush.timeout.ms for p in plans] == [250.0, 1000.0]


def test_unknown_path_says_did_you_mean() -> None:
    msg = _error({"profile.filebeat.output.kafka.bulk_max_sise": [1]})
    assert 'unknown key "profile.filebeat.output.kafka.bulk_max_sise"' in msg
    assert 'did you mean "profile.filebeat.output.kafka.bulk_max_size"' in msg
    assert 'did you mean "profile.filebeat"' in _error({"profile.filebet.output.kafka.bulk_max_size": [1]})


def test_section_and_leaf_misuse_are_named() -> None:
    assert "is a section" in _error({"profile.filebeat.output.kafka": [1]})
    assert "is a setting, not a section" in _error({"profile.filebeat.output.kafka.bulk_max_size.x": [1]})


def test_invalid_value_is_the_profiles_error() -> None:
    msg = _error({"profile.filebeat.output.kafka.bulk_max_size": [-1]})
    assert msg.startswith("run (profile=fb, profile.filebeat.output.kafka.bulk_max_size=-1)")
    assert "bulk_max_size" in msg and "greater than or equal to 0" in msg


def test_path_of_another_kind_is_an_error_naming_the_kind() -> None:
    msg = _error({"profile.filebeat.output.kafka.bulk_max_size": [512]}, [LIBRDKAFKA])
    assert "not a librdkafka setting" in msg


def test_raw_properties_take_the_rest_of_the_path_as_their_key() -> None:
    plans = _spec({"profile.overrides.queue.buffering.max.kbytes": [1024]}, [LIBRDKAFKA]).expand()
    assert plans[0].profile.overrides == {"queue.buffering.max.kbytes": "1024"}  # type: ignore[union-attr]


def test_flat_knobs_keep_working() -> None:
    plans = _spec({"profile.linger_ms": [0, 50]}, [LIBRDKAFKA]).expand()
    assert [p.name for p in plans] == ["rd-linger_ms0", "rd-linger_ms50"]
    assert [p.profile.linger_ms for p in plans] == [0, 50]  # type: ignore[union-attr]


def test_labelled_axis_sets_different_settings_and_names_runs() -> None:
    wait = {
        "freq-200": {"profile.filebeat.output.kafka.bulk_flush_frequency": "200ms"},
        "queue-200": {"profile.filebeat.queue.mem.flush.timeout": "200ms"},
    }
    plans = _spec({"wait": wait}).expand()
    assert [p.name for p in plans] == ["fb-freq-200", "fb-queue-200"]
    assert config_of(plans[0].profile).kafka.bulk_flush_frequency.ms == 200
    assert config_of(plans[1].profile).mem.flush.timeout.ms == 200
    named = _spec({"wait": wait}, name_format="{wait}").expand()
    assert [p.name for p in named] == ["freq-200", "queue-200"]


def test_axis_misuse() -> None:
    with pytest.raises(ValueError, match="is not a setting"):
        _spec({"wait": {"a": {"bulk_max_size": 1}}})
    with pytest.raises(ValueError, match="did you mean"):
        _spec({"wait": {"a": {"profile.filebeat.output.kafka.bulk_max_sise": 1}}})
    with pytest.raises(ValueError, match="a setting takes a list of values"):
        _spec({"profile.filebeat.output.kafka.bulk_max_size": {"a": {"x": 1}}})


def test_the_filebeat_grid_expands_to_its_18_runs() -> None:
    plans = load_sweep(repo_root() / "loadtests" / "recommend-grid-filebeat.yaml").runs
    waits = ["freq-0", "freq-200", "freq-400", "freq-600", "freq-800"]
    waits += ["queue-200", "queue-400", "queue-600", "queue-800"]
    assert [p.name for p in plans] == [f"{w}-{c}" for c in ("lz4", "gzip") for w in waits]
    for p in plans:
        config = config_of(p.profile)
        wait, _, codec = p.name.rpartition("-")
        family, _, ms = wait.partition("-")
        assert config.kafka.compression == codec
        assert config.kafka.bulk_flush_frequency.ms == (float(ms) if family == "freq" else 0)
        assert config.mem.flush.timeout.ms == (float(ms) if family == "queue" else 0)
        assert (config.kafka.bulk_max_size, config.mem.events, config.mem.flush.min_events) == (
            2048,
            4096,
            2048,
        )


def test_flat_vary_names_and_hashes_runs_as_written_out() -> None:
    """A flat knob varied names its runs as before and hashes each like the same profile written
    out (the hash is of what runs, so resume and records keep matching)."""
    varied = _spec({"profile.linger_ms": [0, 50]}, [LIBRDKAFKA]).expand()
    assert [p.name for p in varied] == ["rd-linger_ms0", "rd-linger_ms50"]
    for plan, linger in zip(varied, (0, 50), strict=True):
        written = _spec({}, [{**LIBRDKAFKA, "linger_ms": linger}]).expand()[0]
        assert plan.spec_hash == written.spec_hash


def test_grid_runs_hash_like_the_old_profiles_but_for_their_name() -> None:
    grid = load_sweep(repo_root() / "loadtests" / "recommend-grid-filebeat.yaml").runs
    for plan in grid:
        renamed = plan.profile.model_copy(update={"name": plan.name})
        assert renamed.model_dump(mode="json")["name"] == plan.name


# ---- properties over dotted paths and values ------------------------------------------------------

INT_PATHS = {
    "profile.filebeat.output.kafka.bulk_max_size": (0, 10**6),
    "profile.filebeat.output.kafka.channel_buffer_size": (1, 10**5),
    "profile.filebeat.output.kafka.partition.random.group_events": (1, 10**5),
    "profile.filebeat.queue.mem.events": (2048, 10**6),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(INT_PATHS)), st.data())
def test_any_int_setting_lands_where_its_path_says(path: str, data: st.DataObject) -> None:
    low, high = INT_PATHS[path]
    values = data.draw(st.lists(st.integers(low, high), min_size=1, max_size=4, unique=True))
    plans = _spec({path: values}).expand()
    got = []
    for p in plans:
        node: Any = config_of(p.profile)
        for part in path.split(".")[2:]:
            node = getattr(node, part)
        got.append(node)
    assert got == values


def _load(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_text(json.dumps(spec))  # JSON is YAML
        load_sweep(path)


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.", min_size=1, max_size=30))
def test_any_path_is_a_setting_or_a_one_line_error(tail: str) -> None:
    """Whatever the path, loading either applies a setting or says why in one line."""
    spec = {
        "name": "s",
        "workload": WORKLOAD,
        "profiles": [FILEBEAT],
        "vary": {f"profile.filebeat.{tail}": [1]},
    }
    try:
        _load(spec)
    except BadInput as exc:
        assert "\n" not in exc.message and "profile.filebeat" in exc.message


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=-(10**6), max_value=-1))
def test_out_of_range_values_are_refused_through_the_loader(value: int) -> None:
    path = "profile.filebeat.output.kafka.bulk_max_size"
    spec = {"name": "s", "workload": WORKLOAD, "profiles": [FILEBEAT], "vary": {path: [value]}}
    with pytest.raises(BadInput) as exc:
        _load(spec)
    assert "bulk_max_size" in exc.value.message and "\n" not in exc.value.message


def _leaf_paths(model: Any, prefix: str) -> list[str]:
    """Every setting path under a settings model (raw-property dicts left out)."""
    from pydantic import BaseModel

    from tuner.spec.sweep import _section

    out = []
    for name, field in model.model_fields.items():
        if name in ("name", "description", "client"):
            continue
        inner = _section(field.annotation)
        if inner is None:
            out.append(f"{prefix}.{name}")
        elif inner is not dict and issubclass(inner, BaseModel):
            out += _leaf_paths(inner, f"{prefix}.{name}")
    return out


SET_FILEBEAT = {
    "name": "fb",
    "client": "filebeat",
    "filebeat": {
        "output.kafka": {"compression": "lz4", "bulk_max_size": 4096, "partition.random.group_events": 64},
        "queue.mem": {"events": 8192, "flush.min_events": 2048, "flush.timeout": "250ms"},
    },
}
FILEBEAT_LEAVES = _leaf_paths(FilebeatProfile, "profile")


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(FILEBEAT_LEAVES))
def test_setting_any_path_to_its_current_value_changes_nothing(path: str) -> None:
    """The path -> nested keys mapping, over every leaf of the Filebeat settings: a run that sets a
    setting to the value the profile already has runs the same settings (the setting lands where
    its path says, and nothing else moves)."""
    base = _spec({}, [SET_FILEBEAT]).expand()[0]
    node: Any = base.profile
    for part in path.split(".")[1:]:
        node = getattr(node, part, None)
        if node is None:
            return  # an unset optional section (ssl, kerberos, ...): nothing to compare with
    if isinstance(node, list | dict):
        return  # vary takes scalars: a list setting is not varied element by element
    value = node if isinstance(node, str | int | float | bool) else str(node)  # a Duration: its text
    (plan,) = _spec({path: [value]}, [SET_FILEBEAT]).expand()
    got: Any = plan.profile
    for part in path.split(".")[1:]:
        got = getattr(got, part)
    assert got == node
    assert config_of(plan.profile) == config_of(base.profile)
    assert rules_of(plan.profile) == rules_of(base.profile)
