"""Where a key of a YAML spec file is: its path as a message names it, and its line (ruamel's
round-trip nodes remember it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def dotted_path(path: tuple[Any, ...]) -> str:
    """A key path as a message names it: `profiles[0].linger_ms`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def node_line(node: Any, part: Any) -> int | None:
    """The line (from 1) of `part` in `node`: a key of a mapping, an index of a list."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        pos = lc.key(part) if isinstance(node, Mapping) else lc.item(part)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return int(pos[0]) + 1 if pos else None


def located(raw: Any, loc: tuple[Any, ...], keep_last: bool = False) -> tuple[tuple[Any, ...], int | None]:
    """Drop pydantic's internal loc parts (union tags, validator names) by walking the YAML data;
    return the key path as the user wrote it and the line of its deepest existing node."""
    node = raw
    kept: list[Any] = []
    line: int | None = None
    for i, part in enumerate(loc):
        child = _child(node, part)
        if child is _MISSING:
            if keep_last and i == len(loc) - 1:
                kept.append(part)
            continue
        line = node_line(node, part) or line
        kept.append(part)
        node = child
    return tuple(kept), line


def node_at(raw: Any, loc: tuple[Any, ...]) -> Any:
    """The YAML node at `loc` (pydantic's internal parts skipped, as `located`), or None."""
    node, found = raw, True
    for part in loc:
        child = _child(node, part)
        found = child is not _MISSING
        node = child if found else node
    return node if found else None


_MISSING = object()


def _child(node: Any, part: Any) -> Any:
    if isinstance(node, Mapping) and isinstance(part, str) and part in node:
        return node[part]
    if isinstance(node, Sequence) and not isinstance(node, str) and isinstance(part, int):
        return node[part] if 0 <= part < len(node) else _MISSING
    return _MISSING
