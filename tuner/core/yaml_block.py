"""Block YAML for the YAML files kbt writes (profiles, config fragments, Prometheus configs and rule
files). ruamel.yaml's emitter quotes a string only where YAML would read it as something else
(a number, a bool, a `key: value`), keeps the mappings' order and never folds a long value. The
Go programs that read them (Filebeat, Prometheus: gopkg.in/yaml.v2) resolve plain scalars by YAML
1.1, where `yes`, `on`, `n`, `0755` and `1_000` are no strings: such a string is quoted too."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

WIDTH = 4096  # one value per line, however long
_SCALARS = (str, int, float, bool, type(None))
_YAML_1_1 = VersionedResolver(version=(1, 1))
_STR_TAG = "tag:yaml.org,2002:str"


def yaml_document(node: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """A whole file: each `header` line as a `# ` comment, then `node` (mappings, lists and scalars)
    in block style."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = WIDTH
    out = io.StringIO()
    for line in header:
        out.write(f"# {line}\n")
    yaml.dump(_plain(node), out)
    return out.getvalue()


def block_yaml(node: Mapping[str, Any], indent: int = 0) -> list[str]:
    """The lines of `node` in block style, indented by `indent` levels of two spaces. An empty
    mapping is `{}`; a value that is not a YAML scalar (a typed duration) is written as its text."""
    pad = "  " * indent
    return [pad + line for line in yaml_document(node).removesuffix("\n").split("\n")]


def yaml_scalar(value: Any) -> str:
    """One scalar as YAML text, quoted only where it has to be."""
    (line,) = block_yaml({"v": value})
    return line.removeprefix("v: ")


def _plain(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {_text(str(key)): _plain(value) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [_plain(item) for item in node]
    if isinstance(node, str):
        return _text(node)
    return node if isinstance(node, _SCALARS) else _text(str(node))


def _text(text: str) -> str:
    """A string with a character that is not printable (a line break, NEL, U+2028, a control) goes
    double-quoted, where YAML escapes it: unquoted or single-quoted, a reader folds it to a space.
    One a YAML 1.1 reader would take for another type goes single-quoted."""
    if not text.isprintable():
        return DoubleQuotedScalarString(text)
    if _YAML_1_1.resolve(ScalarNode, text, (True, False)) != _STR_TAG:
        return SingleQuotedScalarString(text)
    return text
