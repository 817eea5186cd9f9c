"""Read profiles as version-1 records stored them.

Version 1 spelled Filebeat settings as producer knobs plus dotted string overrides; each client
kind converts its own old shape (ClientKind.upgrade_v1). Applied to raw JSON before validation, so
old run and recommendation records load with today's types.
"""

from __future__ import annotations

from typing import Any

from tuner.spec.clients import KINDS


def upgrade_profiles(node: Any) -> Any:
    """`node` with every profile inside it in today's shape (in place; returned for chaining)."""
    if isinstance(node, dict):
        client = node.get("client")
        kind = KINDS.get(client) if isinstance(client, str) else None
        if kind is not None and "name" in node and "profile" not in node:
            kind.upgrade_v1(node)
        for value in node.values():
            upgrade_profiles(value)
    elif isinstance(node, list):
        for value in node:
            upgrade_profiles(value)
    return node
