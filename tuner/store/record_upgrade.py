"""Older run records, read as the current schema. Each step takes a version's JSON to the next.

Version 1: the record embedded the driver's and measurement's own types (ClientResult,
DeliveryResult, BrokerWindow). Version 2 defines them in tuner.store.figures; the fields are the
same, so a version-1 document only changes its number. A step that renames or reshapes fields
goes here, never into the readers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SCHEMA_VERSION = 2


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "schema_version": 2}


STEPS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_1}


def readable(version: object) -> bool:
    return version == SCHEMA_VERSION or version in STEPS


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """`data` (a record of any readable version) as the current schema."""
    while data.get("schema_version") != SCHEMA_VERSION:
        data = STEPS[data["schema_version"]](data)
    return data
