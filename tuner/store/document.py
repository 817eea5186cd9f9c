"""Reading the store's JSON documents: kind and schema version checked, then validated, each
problem one line naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tuner.core.errors import BadInput
from tuner.core.inputs import read_json

M = TypeVar("M", bound=BaseModel)


def read_document(path: Path, what: str, kind: str, not_a: str, versions: tuple[int, ...]) -> dict[str, Any]:
    """The JSON object at `path` when it is a `kind` document (else "not `not_a`") of one of
    `versions` (oldest first)."""
    data = read_json(path, what)
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise BadInput(f"{path}: not {not_a}")
    version = data.get("schema_version")
    if version not in versions:
        reads = f"{versions[0]} to {versions[-1]}" if len(versions) > 1 else f"{versions[0]}"
        raise BadInput(f"{path}: {what} schema_version {version!r}, this kbt reads {reads}")
    return data


def validated(model: type[M], data: Any, path: Path, what: str) -> M:
    """`data` as `model`, or a one-line BadInput naming the first invalid field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise BadInput(f"{path}: invalid {what}: {loc}: {err['msg']}") from None
