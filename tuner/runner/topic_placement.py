"""Where a live cluster's produced topics sit, for `kbt forecast --target`: their replication
factor, partitions and the partitions each broker leads, from the cluster's metadata (one admin
metadata request; read-only, nothing is created). A diagnosis from Prometheus holds none of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tuner.core.errors import Unreachable
from tuner.model.forecast_baseline import TopicPlacement

if TYPE_CHECKING:
    from tuner.target.base import TargetSource

METADATA_TIMEOUT_S = 10.0


def topic_placement(source: TargetSource, topics: Sequence[str]) -> TopicPlacement | None:
    """The placement of `topics` (the diagnosis' busiest; none of them there: every topic but Kafka's
    internal ones); None when the cluster has no such topic."""
    from confluent_kafka import KafkaException

    from tuner.core.kafka_clients import admin_client
    from tuner.target.registry import resolve_target
    from tuner.target.security import connection

    target = resolve_target(None, source)
    admin = admin_client(connection(target))
    try:
        meta = admin.list_topics(timeout=METADATA_TIMEOUT_S)
    except KafkaException as exc:
        raise Unreachable(f"{target.name}: cannot read the cluster's metadata ({exc.args[0]})") from None
    # the diagnosed topics; when none is named or left (deleted since), every topic but Kafka's own
    wanted = [t for t in topics if t in meta.topics] or sorted(
        t for t in meta.topics if not t.startswith("__")
    )
    if not wanted:
        return None
    leaders: dict[str, int] = {}
    replication_factor = partitions = 0
    for name in wanted:
        for p in meta.topics[name].partitions.values():
            partitions += 1
            replication_factor = max(replication_factor, len(p.replicas))
            if p.leader >= 0:
                leaders[str(p.leader)] = leaders.get(str(p.leader), 0) + 1
    return TopicPlacement(
        replication_factor=max(replication_factor, 1),
        partitions=partitions,
        leaders=leaders,
        source=f"{target.name}'s metadata, topic(s) {_names(wanted)}",
    )


def _names(topics: Sequence[str], shown: int = 5) -> str:
    more = len(topics) - shown
    return ", ".join(topics[:shown]) + (f" and {more} more" if more > 0 else "")
