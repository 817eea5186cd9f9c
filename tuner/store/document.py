"""Reading the store's JSON documents: kind and schema version checked, then validated, each
problem one line naming the file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tuner.core.errors import BadInput, field_message
from tuner.core.inputs import read_json, shown_path
from tuner.core.text import cut
from tuner.spec.yaml_places import dotted_path, located

M = TypeVar("M", bound=BaseModel)

# pydantic's error types of a value past its field's bound (tuner.core.units): a number, a string
# or a list or mapping too large.
OUT_OF_BOUNDS = frozenset(
    {"less_than", "less_than_equal", "greater_than", "greater_than_equal", "too_long", "string_too_long"}
)


def read_document(path: Path, what: str, kind: str, not_a: str, versions: tuple[int, ...]) -> dict[str, Any]:
    """The JSON object at `path` when it is a `kind` document (else "not `not_a`") of one of
    `versions` (oldest first)."""
    data = read_json(path, what)
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise BadInput(f"{path}: not {not_a}")
    version = data.get("schema_version")
    if type(version) is not int or version not in versions:  # `true` is not version 1
        raise version_refused(path, what, version, versions)
    return data


def version_refused(path: Path, what: str, version: Any, versions: Sequence[int]) -> BadInput:
    """The one line for a document of a schema version this kbt does not read: the version as
    written, cut (a 100 KB string pushed the versions kbt reads off the end of the line)."""
    reads = f"{versions[0]} to {versions[-1]}" if len(versions) > 1 else f"{versions[0]}"
    return BadInput(f"{path}: {what} schema_version {cut(json.dumps(version), 40)}, this kbt reads {reads}")


def validated(model: type[M], data: Any, path: Path, what: str) -> M:
    """`data` as `model`, or a one-line BadInput naming the first invalid field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadInput(f"{shown_path(path)}: invalid {what}: {field_problem(exc, data)}") from None
    except ValueError as exc:  # an upgrade step that could not read an old field
        raise BadInput(f"{shown_path(path)}: invalid {what}: {exc}") from None


def field_problem(exc: ValidationError, data: Any = None) -> str:
    """The first problem of a validation error in kbt's words: `field.path: what is wrong (got x)`;
    with the `data` validated, the path as the file spells it (a union's tag, `FilebeatProfile`,
    is pydantic's, not a key of the file)."""
    err = exc.errors(include_url=False)[0]
    parts = tuple(err["loc"])
    if data is not None:
        parts = located(data, parts, keep_last=err["type"] == "missing")[0]
    loc = dotted_path(parts)
    msg = field_message(err)
    return f"{loc}: {msg}" if loc else msg
