"""Counter dataclasses merged, and shipped as plain data, field by field.

A field is a count or a sum (added), a maximum (named in `maxima`: the larger kept), a dict of
counts (added key by key) or an object with its own `merge` / `to_wire` / `from_wire` (a latency
histogram; its wire key `<name>_us` of older reports is read too).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar, Self, get_args, get_origin, get_type_hints


class Summed:
    """Base of a counter dataclass: `merge`, `to_wire` and `from_wire` from its fields."""

    maxima: ClassVar[tuple[str, ...]] = ()

    def merge(self, other: Self) -> None:
        for f in fields(self):  # type: ignore[arg-type]
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name in self.maxima:
                setattr(self, f.name, max(mine, theirs))
            elif isinstance(mine, dict):
                for key, n in theirs.items():
                    mine[key] = mine.get(key, 0) + n
            elif hasattr(mine, "merge"):
                mine.merge(theirs)
            else:
                setattr(self, f.name, mine + theirs)

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, dict):
                value = dict(value)
            elif hasattr(value, "to_wire"):
                value = value.to_wire()
            out[f.name] = value
        return out

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Self:
        hints = _hints(cls)
        values: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            name, kind = f.name, hints[f.name]
            if get_origin(kind) is dict:
                key, value = get_args(kind)
                values[name] = {key(k): value(v) for k, v in data.get(name, {}).items()}
            elif hasattr(kind, "from_wire"):
                values[name] = kind.from_wire(data.get(name, data.get(f"{name}_us", "")))
            else:
                values[name] = kind(data.get(name, 0))
        return cls(**values)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """A class's field types, resolved once (from_wire runs on every worker report)."""
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]
