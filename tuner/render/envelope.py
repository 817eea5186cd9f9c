"""The fields of the `--json` envelope (tuner.cli.json_out writes it) and a document read back
without them: a reader of a document kbt wrote takes it with or without the envelope."""

from __future__ import annotations

from typing import Any

ENVELOPE = ("kbt", "schema_version", "command")


def unwrap(data: Any) -> Any:
    """A document's own fields without the envelope (as they were before it had one)."""
    if isinstance(data, dict) and "command" in data and "schema_version" in data:
        return {k: v for k, v in data.items() if k not in ENVELOPE}
    return data
