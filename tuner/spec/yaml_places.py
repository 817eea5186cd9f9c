"""Where a key of a YAML spec file is: its path as a message names it, and its line (ruamel's
round-trip nodes remember it)."""

from __future__ import annotations

from collections.abc import Mapping
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
