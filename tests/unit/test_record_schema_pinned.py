"""A run record's on-disk schema changes only with its version. The client's figures are one
definition shared by the drivers and the records (tuner/core/client_figures.py), so a field an engine
adds reaches the records at once: this pin makes that a deliberate change (bump SCHEMA_VERSION in
tuner/store/record_upgrade.py with an upgrade of the older records, then the pin below)."""

from __future__ import annotations

import hashlib
import re
import typing
from typing import Any

from pydantic import BaseModel, Field, create_model

from tuner.store.record import RunRecord
from tuner.store.record_upgrade import SCHEMA_VERSION

# (schema version, sha256 of every model a record holds: its fields, their types and defaults)
PINNED = (7, "15f51610718d618963dfb236b8610910088801d691a5c9de5043fedf548dbdc1")


def _models(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _constraints(metadata: list[object]) -> list[str]:
    """A field's bounds and validators by value and name (not by a library's repr of them)."""
    out = []
    for item in metadata:
        for key in ("gt", "ge", "lt", "le", "min_length", "max_length", "pattern"):
            if getattr(item, key, None) is not None:
                out.append(f"{key}={getattr(item, key)}")
        func = getattr(item, "func", None)
        if func is not None:
            out.append(f"{type(item).__name__}:{getattr(func, '__name__', '?')}")
    return sorted(out)


def _fingerprint(root: type[BaseModel] = RunRecord) -> str:
    lines: list[str] = []
    seen: set[type[BaseModel]] = set()
    todo: list[type[BaseModel]] = [root]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, field in model.model_fields.items():
            default = (
                "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
            )
            lines.append(
                f"{model.__name__}.{name}: {field.annotation!r} = {default} {_constraints(field.metadata)}"
            )
            todo += _models(field.annotation)
    # a type's module is not the schema (a class moved keeps its fields)
    text = re.sub(r"\btuner(\.\w+)+\.(?=[A-Z])", "", "\n".join(sorted(lines)))
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_record_schema_changes_only_with_its_version() -> None:
    assert (SCHEMA_VERSION, _fingerprint()) == PINNED, (
        "the run record's schema changed: bump SCHEMA_VERSION (with an upgrade of older records) and"
        f" pin ({SCHEMA_VERSION + 1}, {_fingerprint()!r})"
    )


def test_the_fingerprint_sees_a_field_a_type_and_a_bound() -> None:
    def outer(**fields: Any) -> type[BaseModel]:  # the same names each time: only the fields differ
        return create_model("Outer", inner=(create_model("Inner", **fields), ...))

    base = outer(n=(int, Field(0, le=10)))
    assert _fingerprint(base) == _fingerprint(outer(n=(int, Field(0, le=10))))
    changed = [
        outer(n=(int, Field(0, le=11))),  # a bound
        outer(n=(float, Field(0, le=10))),  # a type
        outer(n=(int, Field(1, le=10))),  # a default
        outer(n=(int, Field(0, le=10)), m=(int, 0)),  # a field
    ]
    assert all(_fingerprint(m) != _fingerprint(base) for m in changed)
