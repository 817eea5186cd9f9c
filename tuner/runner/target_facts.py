"""What a target's cluster and Prometheus say about themselves: brokers, controller, Kafka
version, the metric dialect and which of kbt's series are present. Connects, sends no load,
creates nothing (`kbt target check`, and every command's preflight before load).

And where a live cluster's produced topics sit, for `kbt forecast --target`: their replication
factor, partitions and the partitions each broker leads, from the cluster's metadata (one admin
metadata request). A diagnosis from Prometheus holds none of them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tuner.core.errors import Unreachable
from tuner.core.kafka_clients import Connection, Reach, admin_client, answer, metadata, reached_admin

if TYPE_CHECKING:
    from tuner.model.forecast_baseline import TopicPlacement
    from tuner.target.base import TargetSource

ADMIN_TIMEOUT_S = 10.0


class _Captured(Reach):
    """The admin client's connections watched (a cluster that never answers is one line at once)
    and the brokers' ApiVersions answers kept (debug "feature"), not printed."""

    def __init__(self, conn: Connection) -> None:
        super().__init__(conn)
        self.api_lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("APIVERSION"):
            self.api_lines.append(text)
            return
        super().emit(record)


def cluster_facts(target: Any) -> dict[str, Any]:
    """Brokers, controller and Kafka version through the admin API (no topic is created)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import ConfigResource

    from tuner.target.security import connection

    conn = connection(target)  # the runs' own: a run's start then asks no second time
    logs = _Captured(conn)
    settings: dict[str, Any] = {
        "socket.timeout.ms": int(ADMIN_TIMEOUT_S * 1000),
        **logs.settings(),  # librdkafka's log lines and errors feed the one-line error, not stderr
        "debug": "feature",  # and the brokers' ApiVersions answers (the version when nothing says it)
    }
    admin = admin_client(conn, settings)
    try:
        future = admin.describe_cluster(request_timeout=ADMIN_TIMEOUT_S)
        described = answer(admin, logs, future, ADMIN_TIMEOUT_S + 2)  # every broker down: at once
    except Unreachable as exc:
        raise Unreachable(f"{target.name}: {exc.message}") from None
    except (KafkaException, TimeoutError) as exc:
        admin.poll(0.2)  # a Python logger gets librdkafka's queued log lines on poll
        detail = next(reversed(logs.failures.values()), "") or str(exc.args[0] if exc.args else "no answer")
        raise Unreachable(f"{target.name}: cannot reach {target.bootstrap_servers} ({detail})") from None
    brokers = sorted(
        ({"id": n.id, "host": n.host, "port": n.port} for n in described.nodes), key=lambda b: b["id"]
    )
    from tuner.measure.kafka_version import PROTOCOL_KEYS, api_versions

    protocol: dict[str, str | None] | None = None  # None: the configs could not be described
    if brokers:
        resource = ConfigResource(ConfigResource.Type.BROKER, str(brokers[0]["id"]))
        try:
            configs = admin.describe_configs([resource], request_timeout=ADMIN_TIMEOUT_S)[resource].result(
                timeout=ADMIN_TIMEOUT_S + 2
            )
            protocol = {k: configs[k].value for k in PROTOCOL_KEYS if k in configs}
        except (KafkaException, TimeoutError):  # not allowed to describe configs: say so, not fail
            protocol = None
    admin.poll(0.2)  # the queued log lines (the ApiVersions answers) reach the logger on poll
    return {
        "cluster_id": described.cluster_id,
        "controller": described.controller.id if described.controller is not None else None,
        "brokers": brokers,
        "protocol_configs": protocol,
        "api_versions": api_versions(logs.api_lines),
    }


def metric_facts(target: Any) -> dict[str, Any]:
    """The dialect detected (or named) and which of kbt's series the target's Prometheus holds."""
    from tuner.measure.catalog import SERIES
    from tuner.measure.dialects import DIALECTS, Source, assess, detect, scope_matchers
    from tuner.measure.kafka_version import version_query
    from tuner.measure.prometheus import Prometheus

    if target.prometheus is None:
        return {"prometheus": None}
    prom = Prometheus(target.prometheus)
    sel = target.selectors
    present = prom.series_names(scope_matchers(sel.job, sel.matchers))
    detection = detect(present) if present else None
    detected = detection.dialect if detection else None
    chosen = DIALECTS[target.dialect] if target.dialect != "auto" else detected
    series: dict[str, str] = {}
    if chosen is not None:
        for s in SERIES:
            src = chosen.source(s.name)
            if not isinstance(src, Source):
                series[s.name] = f"not exported: {src.reason}"
                continue
            series[s.name] = "present" if src.all_names & present else "absent"
    brokers = prom.instant(f"count by ({sel.broker_label})({{{scope_matchers(sel.job, sel.matchers)}}})")
    versions = prom.instant(version_query(scope_matchers(sel.job, sel.matchers)))
    return {
        "version_series": [dict(s.labels) for s in versions],
        "prometheus": prom.shown,  # never the user info or query
        "dialect": chosen.name if chosen else None,
        "dialect_detected": detected.name if detected else None,
        "dialect_scores": dict(detection.scores) if detection else {},
        "dialect_statement": assess(chosen, present).statement() if chosen else None,
        "broker_label_values": sorted(s.labels.get(sel.broker_label, "") for s in brokers),
        "series": series,
        "notes": {},  # kept in the JSON: no dialect's series carries a note of how it differs
    }


def topic_placement(source: TargetSource, topics: Sequence[str]) -> TopicPlacement | None:
    """The placement of `topics` (the diagnosis' busiest; none of them there: every topic but Kafka's
    internal ones); None when the cluster has no such topic."""
    from tuner.model.forecast_baseline import TopicPlacement
    from tuner.target.registry import resolve_target
    from tuner.target.security import connection

    target = resolve_target(None, source)
    conn = connection(target)
    try:
        admin = reached_admin(conn, ADMIN_TIMEOUT_S)  # a cluster that never answers: said at once
    except Unreachable as exc:
        raise Unreachable(f"{target.name}: {exc.message}") from None
    try:
        meta = metadata(admin, ADMIN_TIMEOUT_S)
    except Unreachable as exc:
        raise Unreachable(f"{target.name}: {exc.message}") from None
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
