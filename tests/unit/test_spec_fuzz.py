"""Property: loading a sweep spec or a Filebeat profile either succeeds or raises BadInput with one
line of text. Nothing else (KeyError, TypeError, a pydantic ValidationError, a YAML error) escapes,
whatever the file holds."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.e2e.bad_inputs import GOOD_FILEBEAT, GOOD_SPEC
from tuner.core.errors import BadInput
from tuner.spec.filebeat_load import load_filebeat
from tuner.spec.loader import load_sweep

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["max", "all", "-1", "gzip", "zstd", "1e309", "${NOPE}", "", " ", "0x10", "10s"]),
    # issue 30: digits of other scripts, underscores, and strings that made patterns backtrack
    st.text(alphabet="\u0660\u0669\u0966\uff10\u09e6._1", min_size=1, max_size=8),
    st.sampled_from(["11s", "1.1ms", "a:", "?a=b&"]).map(lambda unit: unit * 60 + "x"),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def _yaml_load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            out += _paths(child, (*prefix, i))
    return out


def _replace(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    tree = copy.deepcopy(tree)
    node = tree
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return tree


def _dump(data: Any, path: Path) -> None:
    yaml = YAML(typ="safe")
    yaml.allow_unicode = True
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)


def _assert_only_bad_input(load: Any, path: Path) -> None:
    try:
        load(path)
    except BadInput as exc:
        assert exc.message.strip(), "empty error message"
        assert len(exc.message.splitlines()) == 1, exc.message


GOOD_SPEC_TREE = _yaml_load(GOOD_SPEC)
SPEC_PATHS = _paths(GOOD_SPEC_TREE)
GOOD_FILEBEAT_TREE = _yaml_load(GOOD_FILEBEAT)
FILEBEAT_PATHS = _paths(GOOD_FILEBEAT_TREE)
# A profile of every kind, each kind's own section nested as well as dotted: its before-validators
# (a filebeat: section whose output was not a mapping was an AttributeError) see every shape too
EVERY_KIND_SPEC_TREE = _yaml_load(
    GOOD_SPEC.replace(
        "  - {name: batched, linger_ms: 50, compression: lz4}\n",
        "  - {name: batched, linger_ms: 50, compression: lz4}\n"
        "  - {name: fb, client: filebeat, filebeat: {output: {kafka: {bulk_max_size: 512}},"
        " queue.mem.flush.timeout: 1s, input: {engine: real}}}\n"
        "  - {name: otel, client: otelcol, otelcol: {kafka: {producer: {linger: 100ms}},"
        " kafka.sending_queue.batch: {flush_timeout: 1s}}}\n"
        "  - {name: java, client: java, linger_ms: 20, batch_bytes: 16384, overrides: {retries: '3'}}\n",
    )
)
EVERY_KIND_PATHS = _paths(EVERY_KIND_SPEC_TREE)


@SETTINGS
@given(where=st.sampled_from(SPEC_PATHS), value=values)
def test_sweep_spec_with_any_value_anywhere(tmp_path: Path, where: tuple[Any, ...], value: Any) -> None:
    path = tmp_path / "spec.yaml"
    _dump(_replace(GOOD_SPEC_TREE, where, value), path)
    _assert_only_bad_input(load_sweep, path)


@SETTINGS
@given(where=st.sampled_from(EVERY_KIND_PATHS), value=values)
def test_every_kinds_profile_with_any_value_anywhere(
    tmp_path: Path, where: tuple[Any, ...], value: Any
) -> None:
    path = tmp_path / "spec.yaml"
    _dump(_replace(EVERY_KIND_SPEC_TREE, where, value), path)
    _assert_only_bad_input(load_sweep, path)


@SETTINGS
@given(where=st.sampled_from(SPEC_PATHS), key=st.text(min_size=1, max_size=12), value=values)
def test_sweep_spec_with_any_extra_key(tmp_path: Path, where: tuple[Any, ...], key: str, value: Any) -> None:
    tree = copy.deepcopy(GOOD_SPEC_TREE)
    node = tree
    for part in where:
        node = node[part]
    if not isinstance(node, dict):
        return
    node[key] = value
    path = tmp_path / "spec.yaml"
    _dump(tree, path)
    _assert_only_bad_input(load_sweep, path)


@SETTINGS
@given(text=st.text(max_size=300))
def test_sweep_spec_from_any_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    _assert_only_bad_input(load_sweep, path)


@SETTINGS
@given(data=st.binary(max_size=200))
def test_sweep_spec_from_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(data)
    _assert_only_bad_input(load_sweep, path)


@SETTINGS
@given(where=st.sampled_from(FILEBEAT_PATHS), value=values)
def test_filebeat_profile_with_any_value_anywhere(tmp_path: Path, where: tuple[Any, ...], value: Any) -> None:
    path = tmp_path / "filebeat.yml"
    _dump(_replace(GOOD_FILEBEAT_TREE, where, value), path)
    _assert_only_bad_input(load_filebeat, path)


@SETTINGS
@given(text=st.text(max_size=300))
def test_filebeat_profile_from_any_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "filebeat.yml"
    path.write_text(text, encoding="utf-8")
    _assert_only_bad_input(load_filebeat, path)


def test_the_good_inputs_load(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(GOOD_SPEC)
    assert [run.name for run in load_sweep(spec).runs] == ["batched"]
    _dump(EVERY_KIND_SPEC_TREE, spec)
    assert [run.name for run in load_sweep(spec).runs] == ["batched", "fb", "otel", "java"]
    profile = tmp_path / "filebeat.yml"
    profile.write_text(GOOD_FILEBEAT)
    assert load_filebeat(profile) is not None
