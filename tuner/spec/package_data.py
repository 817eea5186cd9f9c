"""JSON tables committed beside the spec modules (generated from the clients themselves by
`make generate`): read once from the package."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def package_json(name: str) -> dict[str, Any]:
    """The JSON document `tuner/spec/<name>`."""
    data: dict[str, Any] = json.loads(
        resources.files("tuner.spec").joinpath(name).read_text(encoding="utf-8")
    )
    return data
