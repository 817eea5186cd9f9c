"""Older run records, read as the current schema. Each step takes a version's JSON to the next.

Version 1: the record embedded the driver's and measurement's own types (ClientResult,
DeliveryResult, BrokerWindow). Version 2 defines them in tuner.store.figures; the fields are the
same, so a version-1 document only changes its number. Version 3: a profile carries its client
kind's own settings (Filebeat's as one typed `filebeat:` section instead of producer knobs and
dotted string overrides); each kind converts its old shape (ClientKind.upgrade_v1). Version 4 adds
the optional ClientResult.client_metrics (the client's own metrics by name: the Java producer's); a
version-3 document has none, so it only changes its number. Version 5 adds DeliveryResult.unread,
read_back_s and read_back_limit_s (a read-back cut short: unread records, never lost) and the run
status "unverified", and the optional BrokerStats.request_queue_at_cap_share,
BrokerWindow.request_queue_cap and RunRecord.attribution (where a local broker's network threads
spent their busy time); a version-4 document read every record it did not call lost and has no
attribution, so it only changes its number. Version 6 adds the optional ClientResult.artifact (the
rendered client file the run's client started from, by name and SHA-256); older runs built their
client settings in memory and have none, so a version-5 document only changes its number. Version 7
reads client settings as the clients do: an otelcol profile may set the exporter's
`producer.compression_params`, a Filebeat list option may be one string, `backoff.*` may be 0 and
`timeout` / `broker_timeout` are at least 1s (libbeat's own bound: no Filebeat ran with less), so a
version-6 document only changes its number. A step that renames or reshapes fields goes here, never
into the readers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tuner.spec.clients import KINDS

SCHEMA_VERSION = 7


class UpgradeError(ValueError):
    """An old record whose fields the upgrade cannot read."""


def _renumbered(data: dict[str, Any]) -> dict[str, Any]:
    """A step whose version only added optional fields: the document changes its number only."""
    return {**data, "schema_version": data["schema_version"] + 1}


STEPS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _renumbered,
    2: lambda data: {**upgrade_profiles(data), "schema_version": 3},
    3: _renumbered,
    4: _renumbered,
    5: _renumbered,
    6: _renumbered,
}


def upgrade_profiles(node: Any) -> Any:
    """`node` with every client profile inside it in today's shape (in place; returned too)."""
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


def readable(version: object) -> bool:
    """A schema version this kbt reads: a whole number (never `true`, which Python counts as 1)."""
    return type(version) is int and (version == SCHEMA_VERSION or version in STEPS)


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """`data` (a record of any readable version) as the current schema."""
    while data.get("schema_version") != SCHEMA_VERSION:
        try:
            data = STEPS[data["schema_version"]](data)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # An odd field in an old record (a profile knob of the wrong type): the caller names
            # the file; here the field and what went wrong, in one line.
            raise UpgradeError(
                f"cannot upgrade from schema_version {data['schema_version']}: {exc}"
            ) from None
    return data
