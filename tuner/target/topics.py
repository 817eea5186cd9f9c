"""Create a run's topics fresh (so per-topic broker counters start at zero) and delete them after:
the one place topics are created for a run (sweeps, stress, a plain locust run of a spec). A topic
whose spec pins its leaders gets an explicit replica assignment."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from tuner.core.errors import BadInput, KbtError, Unreachable
from tuner.core.kafka_clients import METADATA_RETRY_S, metadata, outcome, served
from tuner.spec.workload import TopicSpec

ADMIN_TIMEOUT_S = 30.0


def run_topic_name(base: str, index: int, stamp: str, tag: str = "r") -> str:
    """`<topic>-<tag><index>-<stamp>`: unique per run, readable, within Kafka's 249-character limit
    (tag r: a sweep run, s: a stress profile)."""
    return f"{base}-{tag}{index}-{stamp}"[:249]


def broker_ids(admin: AdminClient) -> list[int]:
    """The cluster's broker ids, sorted."""
    return sorted(metadata(admin, ADMIN_TIMEOUT_S).brokers)


def replica_assignment(
    spec: TopicSpec, brokers: Sequence[int], where: str = "topic"
) -> list[list[int]] | None:
    """Each partition's replicas for a topic that pins its leaders: the leader first, the other
    replicas on the next brokers in id order (wrapping), as an operator's reassignment would place
    them; None when the spec pins none. BadInput when a leader is not one of `brokers`."""
    if spec.leaders is None:
        return None
    ids = sorted(set(brokers))
    missing = sorted(set(spec.leaders) - set(ids))
    if missing:
        have = ", ".join(map(str, ids)) or "none"
        raise BadInput(
            f"{where}.leaders names broker{'s' if len(missing) > 1 else ''}"
            f" {', '.join(map(str, missing))}; the cluster has broker{'s' if len(ids) != 1 else ''} {have}"
        )
    if spec.replication_factor > len(ids):
        raise BadInput(
            f"{where}.replication_factor {spec.replication_factor} exceeds the cluster's {len(ids)} brokers"
        )
    position = {broker: i for i, broker in enumerate(ids)}
    return [
        [ids[(position[leader] + k) % len(ids)] for k in range(spec.replication_factor)]
        for leader in spec.leaders
    ]


def _new_topic(spec: TopicSpec, name: str, brokers: Sequence[int], where: str) -> NewTopic:
    assignment = replica_assignment(spec, brokers, where)
    if assignment is not None:  # the replication factor then comes from the assignment
        return NewTopic(
            name, num_partitions=len(assignment), replica_assignment=assignment, config=dict(spec.configs)
        )
    return NewTopic(
        name,
        num_partitions=spec.partitions,
        replication_factor=spec.replication_factor,
        config=dict(spec.configs),
    )


def check_fits_cluster(topics: Sequence[TopicSpec], brokers: int, ids: Sequence[int] = ()) -> None:
    """Before any run: each topic's replication factor within the cluster's brokers and, given
    the broker `ids`, each pinned leader one of them."""
    for i, topic in enumerate(topics):
        if topic.replication_factor > brokers:
            raise BadInput(
                f"workload.topics[{i}].replication_factor {topic.replication_factor} exceeds the"
                f" cluster's {brokers} broker{'s' if brokers != 1 else ''}"
            )
        if ids:
            replica_assignment(topic, ids, f"workload.topics[{i}]")


def create_topics(admin: AdminClient, specs: Sequence[TopicSpec], names: Sequence[str]) -> None:
    """Create each topic and wait until every partition has a leader in the metadata (a pinned
    topic: the leader it asked for)."""
    pinned = any(spec.leaders is not None for spec in specs)
    brokers = broker_ids(admin) if pinned else []
    new = [
        _new_topic(spec, name, brokers, f"workload.topics[{i}]")
        for i, (spec, name) in enumerate(zip(specs, names, strict=True))
    ]
    futures = admin.create_topics(new, request_timeout=ADMIN_TIMEOUT_S, operation_timeout=ADMIN_TIMEOUT_S)
    for name, future in futures.items():
        outcome(future, ADMIN_TIMEOUT_S, f"create topic {name}")
    wait_led(admin, dict(zip(names, specs, strict=True)), ADMIN_TIMEOUT_S)


def wait_led(admin: AdminClient, wanted: Mapping[str, TopicSpec], timeout_s: float) -> None:
    """Wait until every partition of the `wanted` topics has a leader in the metadata (a pinned
    topic: the leader it asked for), a broker restarting meanwhile ridden out within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    pinned = any(spec.leaders is not None for spec in wanted.values())
    what = "not every partition led as pinned" if pinned else "no leader"
    while True:
        try:
            meta = metadata(admin, max(deadline - time.monotonic(), METADATA_RETRY_S))
        except Unreachable as exc:
            raise Unreachable(
                f"topics {', '.join(wanted)}: {what} after {timeout_s:g} s: {exc.message}"
            ) from None
        if all(name in meta.topics and _led(meta.topics[name], spec) for name, spec in wanted.items()):
            return
        if time.monotonic() > deadline:
            raise Unreachable(f"topics {', '.join(wanted)}: {what} after {timeout_s:g} s")
        time.sleep(0.2)


def _led(topic: Any, spec: TopicSpec) -> bool:
    """Every partition has a leader, the one the spec pins where it pins one (Kafka elects a new
    partition's first live replica: the pinned leader while that broker is up)."""
    parts = topic.partitions
    if len(parts) != spec.partitions or any(p.leader < 0 for p in parts.values()):
        return False
    return spec.leaders is None or all(parts[i].leader == leader for i, leader in enumerate(spec.leaders))


def delete_topics(admin: AdminClient, names: Sequence[str]) -> list[str]:
    """Delete topics; return the problems (cleanup never raises, it reports)."""
    if not names:
        return []
    problems: list[str] = []
    futures = admin.delete_topics(
        list(names), request_timeout=ADMIN_TIMEOUT_S, operation_timeout=ADMIN_TIMEOUT_S
    )
    for name, future in futures.items():
        try:
            outcome(future, ADMIN_TIMEOUT_S, f"delete topic {name}")
        except KbtError as exc:
            problems.append(exc.message)
    served(admin)  # the run's lines, into its file before the run ends
    return problems
