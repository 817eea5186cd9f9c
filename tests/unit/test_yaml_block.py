"""The one block-YAML writer (tuner/core/yaml_block.py): what it writes reads back as what it was
given, whatever the strings hold, and it quotes only where YAML would read something else."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tuner.core.yaml_block import block_yaml, yaml_scalar
from tuner.spec.duration import Duration

KEYS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
    | st.sampled_from(["1s", "0s", "true", "no", "on", "123", "1e3", "null", "~", "a: b", "#x", "${VAR}", ""])
    # strings only YAML 1.1 (Filebeat's and Prometheus' gopkg.in/yaml.v2) reads as something else
    | st.sampled_from(["yes", "Off", "y", "N", "0755", "1_000", "0x1F", "0b101", "12:30", "2001-12-14"])
)
NODES = st.recursive(SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=12)


def _read(lines: list[str], version: tuple[int, int] | None = None) -> Any:
    yaml = YAML(typ="safe")
    yaml.version = version
    return yaml.load("\n".join(lines) + "\n")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, NODES, max_size=5))
def test_what_it_writes_reads_back_unchanged(node: dict[str, Any]) -> None:
    lines = block_yaml(node)
    assert _read(lines) == (node or {})
    assert _read(lines, (1, 1)) == (node or {})


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(KEYS, NODES, min_size=1, max_size=3), st.integers(0, 3))
def test_indented_lines_read_back_under_their_parent(node: dict[str, Any], indent: int) -> None:
    lines = block_yaml(node, indent)
    assert all(line.startswith("  " * indent) for line in lines)
    parents = [f"{'  ' * level}k{level}:" for level in range(indent)]
    doc = _read([*parents, *lines]) if indent else _read(lines)
    for level in range(indent):
        doc = doc[f"k{level}"]
    assert doc == node


def test_quotes_only_what_yaml_would_read_as_something_else() -> None:
    assert yaml_scalar("1s") == "1s"
    assert yaml_scalar("zstd") == "zstd"
    assert yaml_scalar("a (b, c) d.") == "a (b, c) d."
    assert yaml_scalar("123") == "'123'"
    assert yaml_scalar("true") == "'true'"
    assert yaml_scalar("a: b") == "'a: b'"
    assert yaml_scalar(True) == "true"
    assert [yaml_scalar(s) for s in ("yes", "on", "n", "0755")] == ["'yes'", "'on'", "'n'", "'0755'"]
    assert block_yaml({"kafka": {}}) == ["kafka: {}"]
    assert block_yaml({"a": {"b": 1}}, 1) == ["  a:", "    b: 1"]


def test_a_typed_value_is_written_as_its_text() -> None:
    assert block_yaml({"flush.timeout": Duration.parse("1m30s")}) == [
        f"flush.timeout: {Duration.parse('1m30s')}"
    ]
