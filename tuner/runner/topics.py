"""Create a run's topics fresh (so per-topic broker counters start at zero) and delete them after."""

from __future__ import annotations

import time
from collections.abc import Sequence

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from tuner.core.errors import BadInput, Unreachable
from tuner.spec.workload import TopicSpec

ADMIN_TIMEOUT_S = 30.0


def run_topic_name(base: str, index: int, stamp: str, tag: str = "r") -> str:
    """`<topic>-<tag><index>-<stamp>`: unique per run, readable, within Kafka's 249-character limit
    (tag r: a sweep run, s: a stress profile)."""
    return f"{base}-{tag}{index}-{stamp}"[:249]


def broker_count(admin: AdminClient) -> int:
    try:
        meta = admin.list_topics(timeout=ADMIN_TIMEOUT_S)
    except KafkaException as exc:
        raise Unreachable(f"cannot reach the Kafka cluster: {exc.args[0]}") from None
    return len(meta.brokers)


def check_fits_cluster(topics: Sequence[TopicSpec], brokers: int) -> None:
    for i, topic in enumerate(topics):
        if topic.replication_factor > brokers:
            raise BadInput(
                f"workload.topics[{i}].replication_factor {topic.replication_factor} exceeds the"
                f" cluster's {brokers} broker{'s' if brokers != 1 else ''}"
            )


def create_topics(admin: AdminClient, specs: Sequence[TopicSpec], names: Sequence[str]) -> None:
    """Create each topic and wait until every partition has a leader in the metadata."""
    new = [
        NewTopic(
            name,
            num_partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            config=dict(spec.configs),
        )
        for spec, name in zip(specs, names, strict=True)
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
    wanted = dict(zip(names, (s.partitions for s in specs), strict=True))
    while True:
        meta = admin.list_topics(timeout=ADMIN_TIMEOUT_S)
        ready = all(
            name in meta.topics
            and len(meta.topics[name].partitions) == parts
            and all(p.leader >= 0 for p in meta.topics[name].partitions.values())
            for name, parts in wanted.items()
        )
        if ready:
            return
        if time.monotonic() > deadline:
            raise Unreachable(f"topics {', '.join(names)} have no leader after {ADMIN_TIMEOUT_S:g} s")
        time.sleep(0.2)


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
