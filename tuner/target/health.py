"""Go/no-go checks of a cluster before (and after) load: under-replicated and offline partitions
from the metadata, consumer lag of named groups (committed offsets against high watermarks), and
disk headroom where it can be measured. Read-only: nothing is created, no group is joined."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from tuner.core.kafka_clients import metadata, outcome

TIMEOUT_S = 10.0
# Free-space series a Prometheus may hold for the brokers' disks (node_exporter's). Kafka's own
# JMX has none, and confluent-kafka has no DescribeLogDirs (whose reply carries usable bytes).
DISK_QUERY = "min(node_filesystem_avail_bytes{{{m}}} / node_filesystem_size_bytes{{{m}}})"


@dataclass
class Check:
    name: str
    ok: bool | None  # None: could not be measured (reason says why); never a guess
    value: float | None
    reason: str
    details: list[str] = field(default_factory=list)


def under_replicated(admin: AdminClient) -> Check:
    """Partitions whose in-sync replicas are fewer than their replicas, and those with no leader."""
    meta = metadata(admin, TIMEOUT_S)
    short, offline, total = [], [], 0
    for name, topic in sorted(meta.topics.items()):
        for pid, p in sorted(topic.partitions.items()):
            total += 1
            if p.leader < 0:
                offline.append(f"{name}-{pid}")
            elif len(p.isrs) < len(p.replicas):
                short.append(f"{name}-{pid} isr {len(p.isrs)}/{len(p.replicas)}")
    bad = len(short) + len(offline)
    reason = f"{len(short)} under-replicated, {len(offline)} offline of {total} partitions"
    return Check("under_replicated_partitions", bad == 0, float(bad), reason, offline + short)


def consumer_lag(admin: AdminClient, groups: Sequence[str], max_lag: int) -> list[Check]:
    """Per group: records between its committed offsets and the high watermarks (a partition
    without a committed offset is not counted and is listed). A read the cluster does not answer
    is one line (exit 5), one it refuses one line in its words (exit 2), as every admin call's."""
    checks = []
    for group in groups:
        asked = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT_S
        )
        committed = (
            outcome(asked[group], TIMEOUT_S + 2, f"read group {group}'s offsets").topic_partitions or []
        )
        if not committed:
            checks.append(Check(f"consumer_lag:{group}", None, None, "no committed offsets (no such group?)"))
            continue
        wanted = {TopicPartition(tp.topic, tp.partition): OffsetSpec.latest() for tp in committed}
        ends = {
            (tp.topic, tp.partition): outcome(
                f, TIMEOUT_S + 2, f"read the high watermark of {tp.topic}-{tp.partition} for group {group}"
            ).offset
            for tp, f in admin.list_offsets(wanted, request_timeout=TIMEOUT_S).items()
        }
        lag, unset = 0, []
        for tp in committed:
            if tp.offset < 0:
                unset.append(f"{tp.topic}-{tp.partition}")
            else:
                lag += max(0, ends[(tp.topic, tp.partition)] - tp.offset)
        reason = f"{lag} records behind over {len(committed)} partitions (limit {max_lag})"
        if unset:
            reason += f"; {len(unset)} without a committed offset"
        checks.append(Check(f"consumer_lag:{group}", lag <= max_lag, float(lag), reason, unset))
    return checks


def disk_headroom(prom: Any, selector: str, min_free: float) -> Check:
    """The smallest free fraction of the brokers' filesystems (node_exporter series matching
    `selector`, PromQL label matchers) when the Prometheus has them; otherwise says that it cannot
    be measured and why."""
    name = "disk_headroom"
    if prom is None:
        return Check(name, None, None, "cannot be measured: the target names no Prometheus")
    result = prom.instant(DISK_QUERY.format(m=selector))
    if not result:
        why = (
            "cannot be measured: Kafka's JMX exports no free disk space, confluent-kafka has no"
            " DescribeLogDirs, and Prometheus holds no node_filesystem_avail_bytes"
        )
        return Check(name, None, None, why + (f" for {selector}" if selector else ""))
    free = float(result[0].value)
    reason = f"{free:.1%} free on the fullest filesystem (min {min_free:.0%})"
    return Check(name, free >= min_free, free, reason)
