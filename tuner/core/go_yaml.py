"""Plain YAML scalars typed as Go's YAML readers type them into an untyped map: gopkg.in/yaml.v2,
the reader of Filebeat's configuration library (go-ucfg), and yaml.v3, the collector's (confmap).
kbt's own files are YAML 1.2; a team's filebeat.yml or collector config must read as its client reads
it, or kbt checks and runs other numbers than the pods do:

- integers follow Go's syntax after every `_` is dropped: `0777` and `0o777` are octal, `0x`, `0b`;
  `09` is no integer but a float; past 64 bits a number is a float (both readers);
- yaml.v2 takes the YAML 1.1 words for booleans: y, yes, on, n, no, off (any of their spellings);
  yaml.v3 only true and false (the collector refuses `enabled: yes`);
- no sexagesimal numbers (`1:30` is text), and a timestamp stays text.
Checked against Filebeat 7.17's `export config` and the collector's `print-config`.
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

_TAG = "tag:yaml.org,2002:"
_BOOLS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"), False),
}
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_SPECIAL_FLOATS = {
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
}
# yaml.v2's yamlStyleFloat, tried on a number that is no integer
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)")
_INT_RANGE = (-(2**63), 2**64)  # ParseInt, then ParseUint


def go_int(text: str) -> int | None:
    """The integer Go's strconv.ParseInt/ParseUint (base 0) read from `text`, `_`s dropped first."""
    plain = text.replace("_", "")
    if not _GO_INT.fullmatch(plain):
        return None
    sign, digits = (-1, plain[1:]) if plain[0] == "-" else (1, plain.lstrip("+"))
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "0123456789":
        digits = "0o" + digits[1:]  # Go's leading-zero octal
    value = sign * int(digits, 0)
    return value if _INT_RANGE[0] <= value < _INT_RANGE[1] else None


_YAML_1_2_BOOLS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})


def go_tag(value: str, v3: bool = False) -> str:
    """The tag yaml.v2 (or v3) resolves a plain scalar to (its resolve(), untyped target)."""
    if value in _BOOLS and (not v3 or value in _YAML_1_2_BOOLS):
        return "bool"
    if value in _NULLS:
        return "null"
    if value in _SPECIAL_FLOATS:
        return "float"
    if value == "<<":
        return "merge"
    if value[0] in "+-0123456789":
        if go_int(value) is not None:
            return "int"
        return "float" if _FLOAT.fullmatch(value.replace("_", "")) else "str"
    if value[0] == "." and _FLOAT.fullmatch(value):
        return "float"
    return "str"


class GoYamlV2Resolver(VersionedResolver):
    """Plain scalars by yaml.v2's rules; everything else as ruamel resolves it."""

    v3 = False

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0]:
            return Tag(suffix=_TAG + go_tag(value, self.v3))
        return super().resolve(kind, value, implicit)


class GoYamlV3Resolver(GoYamlV2Resolver):
    """yaml.v3: booleans are true and false alone."""

    v3 = True


class GoYamlConstructor(RoundTripConstructor):
    """Numbers built as Go builds them, for both readers (ruamel's own 1.1 rules take `1:30` and miss
    `0o17`)."""

    def construct_go_int(self, node: Any) -> int | float:
        text = str(self.construct_scalar(node))
        value = go_int(text)
        return value if value is not None else float(text.replace("_", ""))

    def construct_go_float(self, node: Any) -> float:
        text = str(self.construct_scalar(node))
        return _SPECIAL_FLOATS[text] if text in _SPECIAL_FLOATS else float(text.replace("_", ""))

    def construct_go_bool(self, node: Any) -> bool:
        return _BOOLS[str(self.construct_scalar(node))]


GoYamlConstructor.add_constructor(_TAG + "int", GoYamlConstructor.construct_go_int)
GoYamlConstructor.add_constructor(_TAG + "float", GoYamlConstructor.construct_go_float)
GoYamlConstructor.add_constructor(_TAG + "bool", GoYamlConstructor.construct_go_bool)


def non_text_key(data: Any) -> tuple[int | None, str] | None:
    """The first mapping key that is not text, with its line (1-based) and how Filebeat reads it:
    go-ucfg refuses such a file ("string key required"), and an unquoted `y:`, `on:` or `12:` is one."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str):
                    try:
                        line: int | None = node.lc.key(key)[0] + 1  # type: ignore[attr-defined]
                    except (AttributeError, KeyError, TypeError):
                        line = None
                    return line, _as_read(key)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return None


def _as_read(key: Any) -> str:
    if isinstance(key, bool):
        return "true (an unquoted y, yes or on)" if key else "false (an unquoted n, no or off)"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return f"the number {key}"
    # a `? [a, b]` or `? {a: 1}` key, or a tagged one (!!binary): no Python rendering of it
    if isinstance(key, tuple | list):
        return "a list"
    return "a mapping" if hasattr(key, "keys") else "binary data" if isinstance(key, bytes) else "no text"
