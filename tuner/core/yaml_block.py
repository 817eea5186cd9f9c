"""Block YAML of nested mappings of scalars, for the YAML files kbt writes (profiles, config
fragments). ruamel.yaml's emitter quotes a string only where YAML would read it as something else
(a number, a bool, a `key: value`), keeps the mappings' order and never folds a long value."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

WIDTH = 4096  # one value per line, however long
_SCALARS = (str, int, float, bool, type(None))


def block_yaml(node: Mapping[str, Any], indent: int = 0) -> list[str]:
    """The lines of `node` in block style, indented by `indent` levels of two spaces. An empty
    mapping is `{}`; a value that is not a YAML scalar (a typed duration) is written as its text."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = WIDTH
    out = io.StringIO()
    yaml.dump(_plain(node), out)
    pad = "  " * indent
    return [pad + line for line in out.getvalue().removesuffix("\n").split("\n")]


def yaml_scalar(value: Any) -> str:
    """One scalar as YAML text, quoted only where it has to be."""
    (line,) = block_yaml({"v": value})
    return line.removeprefix("v: ")


def _plain(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {_text(str(key)): _plain(value) for key, value in node.items()}
    if isinstance(node, str):
        return _text(node)
    return node if isinstance(node, _SCALARS) else _text(str(node))


def _text(text: str) -> str:
    """A string with a character that is not printable (a line break, NEL, U+2028, a control) goes
    double-quoted, where YAML escapes it: unquoted or single-quoted, a reader folds it to a space."""
    return text if text.isprintable() else DoubleQuotedScalarString(text)
