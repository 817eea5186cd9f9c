"""Create a run's topics fresh (so per-topic broker counters start at zero) and delete them after:
the one place topics are created for a run (sweeps, stress, a plain locust run of a spec). A topic
whose spec pins its leaders gets an explicit replica assignment."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from tuner.core.errors import BadInput, Unreachable
from tuner.spec.workload import TopicSpec

ADMIN_TIMEOUT_S = 30.0


def run_topic_name(base: str, index: int, stamp: str, tag: str = "r") -> str:
    """`<topic>-<tag><index>-<stamp>`: unique per run, readable, within Kafka's 249-character limit
    (tag r: a sweep run, s: a stress profile)."""
    return f"{base}-{tag}{index}-{stamp}"[:249]


def broker_ids(admin: AdminClient) -> list[int]:
    """The cluster's broker ids, sorted."""
    try:
        meta = admin.list_topics(timeout=ADMIN_TIMEOUT_S)
    except KafkaException as exc:
        err = exc.args[0]
        raise Unreachable(
            f"cannot reach the Kafka cluster: {err.str() if hasattr(err, 'str') else err}"
        ) from None
    return sorted(meta.brokers)


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
        try:
            future.result(timeout=ADMIN_TIMEOUT_S)
        except KafkaException as exc:
            err = exc.args[0]
            text = err.str() if hasattr(err, "str") else str(err)
            raise BadInput(f"cannot create topic {name}: {text}") from None
        except TimeoutError:  # the future's own timeout (concurrent.futures.TimeoutError)
            raise Unreachable(f"creating topic {name} got no answer in {ADMIN_TIMEOUT_S:g} s") from None
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    wanted = dict(zip(names, specs, strict=True))
    while True:
        meta = admin.list_topics(timeout=ADMIN_TIMEOUT_S)
        if all(name in meta.topics and _led(meta.topics[name], spec) for name, spec in wanted.items()):
            return
        if time.monotonic() > deadline:
            what = "not every partition led as pinned" if pinned else "no leader"
            raise Unreachable(f"topics {', '.join(names)}: {what} after {ADMIN_TIMEOUT_S:g} s")
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
            future.result(timeout=ADMIN_TIMEOUT_S)
        except KafkaException as exc:
            problems.append(f"cannot delete topic {name}: {exc.args[0]}")
        except TimeoutError:
            problems.append(f"cannot delete topic {name}: no answer in {ADMIN_TIMEOUT_S:g} s")
    return problems
