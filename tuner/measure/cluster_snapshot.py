"""What `kbt diagnose` reads from a live Prometheus: every broker over the last window.

Any Prometheus that scrapes brokers with exporters/jmx/kafka-broker.yml works (job="kafka-broker",
a `broker` target label); every expression is a named query of the shared catalog
(tuner.measure.promql), aggregated over the window the same way run records are
(tuner.measure.broker_window.window_query).

    snap = take_snapshot(Prometheus(url), window_s=300)
    snap.brokers[0].bytes_per_produce_request
"""

from __future__ import annotations

import math
import time
from typing import Any

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.measure.broker_window import BROKER_FIELDS, broker_order, duration, window_query
from tuner.measure.dialects import CLUSTER_LABELS, CONTROLLER_ONLY_LABELS, MissingSeries, scope_matchers
from tuner.measure.prometheus import Prometheus, Sample
from tuner.measure.promql import query
from tuner.measure.series_names import (
    BROKER_JOB,
    BROKER_START_SERIES,
    NETWORK_IDLE_SERIES,
    NETWORK_THREAD_IDLE_SERIES,
)
from tuner.spec.thresholds import THRESHOLDS, too_few_scrapes

# Topic figures, summed over the brokers (queries grouped by topic). Per topic Kafka counts partition
# appends (TotalProduceRequests{topic}), never requests: a request carrying three partitions of a
# topic counts three times there.
TOPIC_FIELDS: dict[str, tuple[str, str]] = {
    "partition_appends_per_s": ("PRODUCE_REQUESTS_RATE_BY_TOPIC", "rate"),
    "bytes_in_per_s": ("BYTES_IN_RATE_BY_TOPIC", "rate"),
}
# Per client and broker, from Kafka's quota sensors (absent until a client quota is set; a dialect
# without them gives no clients).
CLIENT_FIELDS: dict[str, tuple[str, str]] = {
    "request_threads": ("CLIENT_REQUEST_THREADS", "avg"),
    "produce_bytes_per_s": ("CLIENT_PRODUCE_BYTES_RATE", "avg"),
}


def snapshot_queries(window_s: float, step_s: float) -> dict[str, str]:
    fields = {f: window_query(n, a, window_s, step_s) for f, (n, a) in BROKER_FIELDS.items()}
    fields |= {f"topic.{f}": window_query(n, a, window_s, step_s) for f, (n, a) in TOPIC_FIELDS.items()}
    fields |= {f"client.{f}": window_query(n, a, window_s, step_s) for f, (n, a) in CLIENT_FIELDS.items()}
    return fields


# Scrape health per broker over the window (Prometheus' own series for each scrape of the target).
SCRAPE_FIELDS: dict[str, str] = {
    "scrape_attempts": "sum by (broker)(count_over_time(up{{{scope}}}[{w}]))",
    "scrape_samples": "sum by (broker)(sum_over_time(up{{{scope}}}[{w}]))",
    "scrape_duration_max_s": "max by (broker)(max_over_time(scrape_duration_seconds{{{scope}}}[{w}]))",
}


def _scope(prom: Prometheus) -> str:
    """The matchers of the target's broker scrapes (`up` carries the job and target labels only)."""
    t = getattr(prom, "translator", None)
    return scope_matchers(t.job, t.matchers) if t is not None else scope_matchers(BROKER_JOB, {})


def scrape_health(prom: Prometheus, window_s: float, end: float) -> dict[str, dict[str, float]]:
    """Per broker: scrapes attempted and answered in the window, the slowest scrape, and the share
    answered (scrape_coverage)."""
    scope, w = _scope(prom), f"{max(1, int(window_s * 1000))}ms"
    out: dict[str, dict[str, float]] = {}
    for field, template in SCRAPE_FIELDS.items():
        for sample in prom.instant(template.format(scope=scope, w=w), end):
            broker = sample.labels.get("broker")
            if broker is not None and math.isfinite(sample.value):
                out.setdefault(broker, {})[field] = sample.value
    for row in out.values():
        attempts = row.get("scrape_attempts", 0.0)
        row["scrape_coverage"] = row.get("scrape_samples", 0.0) / attempts if attempts else 0.0
    return out


def unmeasured(health: dict[str, float]) -> bool:
    """Too few answered scrapes in the window for any rate: the broker is reported unmeasured."""
    return too_few_scrapes(health.get("scrape_samples", 0.0), health.get("scrape_coverage", 0.0))


# The snapshot fields any JVM's exporter gives (its process collector), a ZooKeeper's or a Connect
# worker's as much as a broker's.
JVM_FIELDS = {f for f, (q, _) in BROKER_FIELDS.items() if "process_" in query(q).expr} | {"started_at"}
_SELECT_ONE = "select one with brokers.matchers in a target file"


def one_cluster(present: list[Sample]) -> None:
    """BadInput when the brokers' network idle series name several clusters (CLUSTER_LABELS)."""
    for label in CLUSTER_LABELS:
        values = sorted({s.labels[label] for s in present if "broker" in s.labels and label in s.labels})
        if len(values) > 1:
            raise BadInput(
                f"the selected brokers belong to {len(values)} clusters ({label}: {', '.join(values)}):"
                f" kbt diagnoses one; {_SELECT_ONE} (e.g. {label}: {values[0]})"
            )


def one_series_per_broker(
    prom: Prometheus, present: list[Sample], span: str, step_s: float, end: float
) -> None:
    """BadInput when a broker has several network idle series at once: the broker scraped twice (two
    scrape configs under one job, or Prometheus replicas behind one URL) or brokers of two clusters
    under one name. Its rates would be added up. Series one after the other (a pod rescheduled
    with a new `instance` in the window) are one broker and are read as such."""
    seen: dict[str, list[dict[str, str]]] = {}
    for s in present:
        if "broker" in s.labels:
            seen.setdefault(s.labels["broker"], []).append(s.labels)
    if all(len(series) < 2 for series in seen.values()):
        return
    count = f"count by (broker)({NETWORK_IDLE_SERIES})"
    at_once = f"max_over_time({count}[{span}:{duration(step_s)}])"
    for sample in prom.instant(at_once, end):
        series = seen.get(sample.labels.get("broker", ""), [])
        if sample.value > 1 and series:
            differ = sorted(
                k for k in set().union(*series) - {"broker"} if len({s.get(k) for s in series}) > 1
            )
            told = "; ".join(
                f"{k}: {', '.join(sorted({s.get(k) or '(none)' for s in series}))}" for k in differ
            )
            raise BadInput(
                f"broker {sample.labels['broker']} has {sample.value:.4g} network idle series at once"
                f" ({told}):"
                f" one broker scraped twice (two jobs or Prometheus replicas under one name) or two"
                f" clusters' brokers under one name, whose rates kbt would add up; {_SELECT_ONE}"
            )


def controllers_only(present: list[Sample]) -> set[str]:
    """The nodes whose series say they are KRaft controllers alone (CONTROLLER_ONLY_LABELS); BadInput
    when every node selected is one (the selection misses the brokers)."""
    found = {
        s.labels["broker"]
        for s in present
        if "broker" in s.labels and any(s.labels.get(k) == v for k, v in CONTROLLER_ONLY_LABELS)
    }
    brokers = {s.labels["broker"] for s in present if "broker" in s.labels} - found
    if found and not brokers:
        label, value = CONTROLLER_ONLY_LABELS[0]
        raise BadInput(
            f"every node selected is a KRaft controller alone ({label}={value}: "
            f"{', '.join(sorted(found, key=broker_order))}): kbt diagnoses brokers; select them with"
            " brokers.matchers in a target file"
        )
    return found


def scaled_idle(by_broker: dict[str, dict[str, float | int | bool]]) -> None:
    """EnvironmentProblem when a network idle ratio reads above 1: the exporter's rules or a
    recording rule scale Kafka's 0-1 gauge (to percent?), and every verdict would read it as idle."""
    for broker, row in by_broker.items():
        for field in ("network_idle_ratio", "busiest_network_thread_idle_ratio"):
            value = row.get(field)
            if isinstance(value, float) and value > THRESHOLDS.idle_ratio_max:
                raise EnvironmentProblem(
                    f"broker {broker}: network idle reads {value:.3g}, above 1: kbt reads Kafka's 0-1"
                    f" ratio ({NETWORK_IDLE_SERIES}, {NETWORK_THREAD_IDLE_SERIES}), and this setup"
                    " scales it (to percent?): export the MBean value unscaled"
                )


def take_snapshot(
    prom: Prometheus,
    window_s: float,
    step_s: float = 15.0,
    end: float | None = None,
    top_topics: int = 5,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Query every snapshot field: the figures in the shape of tuner.store.snapshot.ClusterSnapshot;
    a line for `notes` names the scrape targets left out as not brokers.
    EnvironmentProblem when Prometheus holds no broker series of ours
    (Unreachable / PrometheusError come from the client as they are)."""
    end = time.time() if end is None else end
    # what may be shown of the URL: never its user info or query (diagnose's header printed both)
    url = getattr(prom, "shown", None) or getattr(prom, "url", "?")
    # Any sample in the window, not the one at its end: a failed scrape marks the series stale at
    # once, and a broker whose last scrape failed is still there (scrape health says how well).
    span = f"{max(1, int(window_s * 1000))}ms"
    # Without this series nobody scrapes brokers with our rules.
    # No job matcher, as in the figures' queries: a target's translator scopes every selector to its
    # job; on a bare Prometheus the brokers are read as the figures read them, whatever the job (so a
    # second job's copy of a broker, or another cluster's, is seen and refused, never added up).
    present = prom.instant(f"last_over_time({NETWORK_IDLE_SERIES}[{span}])", end)
    health = scrape_health(prom, window_s, end)
    controllers = controllers_only(present)
    present = [s for s in present if s.labels.get("broker") not in controllers]
    for node in controllers:
        health.pop(node, None)
    named = {s.labels["broker"] for s in present if "broker" in s.labels}
    # No network idle series at all, though brokers answered their scrapes: the series are not there
    # under these names (brokers whose every scrape failed are reported unmeasured below).
    if not named and all(not unmeasured(h) for h in health.values()):
        # Series at the window's end (Prometheus' 5 minute lookback) but no sample within it: the
        # window is shorter than the scrape interval, not a Prometheus without brokers.
        lookback = f"count by (broker)({NETWORK_IDLE_SERIES})"
        if any("broker" in s.labels for s in prom.instant(lookback, end)):
            raise BadInput(
                f"Prometheus at {url} holds the brokers' series but no sample of them within the"
                f" {window_s:g} s window: it is shorter than their scrape interval; widen --window"
            )
        translator = getattr(prom, "translator", None)
        if translator is not None and translator.detection is not None and not translator.identity:
            raise EnvironmentProblem(
                f"Prometheus at {url} has no network idle series for the target's brokers"
                f" ({translator.detection.statement()})"
            )
        raise EnvironmentProblem(
            f'Prometheus at {url} has no kbt broker metrics ({NETWORK_IDLE_SERIES}{{job="{BROKER_JOB}"}} '
            "with a broker label): is it scraping brokers with exporters/jmx/kafka-broker.yml?"
        )
    one_cluster(present)
    one_series_per_broker(prom, present, span, step_s, end)
    queries = snapshot_queries(window_s, step_s)
    by_broker: dict[str, dict[str, float | int | bool]] = {}
    by_topic: dict[str, dict[str, float]] = {}
    by_client: dict[tuple[str, str, str], dict[str, float]] = {}
    for field, expr in queries.items():
        try:
            samples = prom.instant(expr, end)
        except MissingSeries:
            if field.startswith("client."):
                continue  # the dialect's rules do not export the quota sensors
            raise
        for sample in samples:
            labels, broker = sample.labels, sample.labels.get("broker")
            if not math.isfinite(sample.value):
                continue
            if field.startswith("client."):
                if broker is not None:
                    client = (broker, labels.get("client_id", ""), labels.get("user", ""))
                    by_client.setdefault(client, {})[field.removeprefix("client.")] = max(sample.value, 0.0)
            elif field.startswith("topic."):
                if labels.get("topic"):
                    row = by_topic.setdefault(labels["topic"], {})
                    key = field.removeprefix("topic.")
                    row[key] = row.get(key, 0.0) + sample.value
            elif broker is not None:
                by_broker.setdefault(broker, {})[field] = sample.value
    # The per-thread idle series: the processors a broker has are its network thread count, each
    # counted once (a pod rescheduled in the window has every processor's series twice).
    threads = f"last_over_time({NETWORK_THREAD_IDLE_SERIES}[{span}])"
    processors: dict[str, set[str]] = {}
    for sample in prom.instant(threads, end):
        broker = sample.labels.get("broker")
        if broker is not None:
            processor = sample.labels.get("network_processor") or str(sorted(sample.labels.items()))
            processors.setdefault(broker, set()).add(processor)
    for broker, ids in processors.items():
        by_broker.setdefault(broker, {})["network_threads"] = len(ids)
    scaled_idle(by_broker)
    # JVM start: whether the window holds the idle meters' start-up padding (tuner.measure.meter_warmup).
    # Job-scoped on a bare Prometheus too: every exporter has a process_start_time_seconds.
    start = f'max by (broker)({BROKER_START_SERIES}{{job="{BROKER_JOB}"}})'
    for sample in prom.instant(start, end):
        broker = sample.labels.get("broker")
        if broker is not None and math.isfinite(sample.value):
            by_broker.setdefault(broker, {})["started_at"] = sample.value
    for broker in named:
        by_broker.setdefault(broker, {})
    # A broker whose scrapes failed in the window keeps its scrape figures and nothing else: a rate
    # from the few samples left is never reported. So does one with broker series but no network idle
    # (its rules leave the MBean out): no verdict is made without it.
    others = []
    for broker, figures in health.items():
        row = by_broker.setdefault(broker, {})
        if broker not in named and not unmeasured(figures) and not set(row) - JVM_FIELDS:
            # It answered its scrapes with no broker series at all: not a broker (Strimzi's example
            # PodMonitor scrapes ZooKeeper, Connect and Cruise Control pods under the brokers' job).
            del by_broker[broker]
            others.append(broker)
            continue
        if unmeasured(figures) or broker not in named:
            row.clear()
            row["measured"] = False
        row.update(figures)
    for node in controllers:
        by_broker.pop(node, None)
    if controllers and notes is not None:
        notes.append(
            "left out as KRaft controllers (their pods' strimzi.io/broker-role is false: no client"
            f" talks to them): {', '.join(sorted(controllers, key=broker_order))}"
        )
    if others and notes is not None:
        notes.append(
            f"left out as not brokers (their scrapes hold no broker series in this naming; a broker"
            f" exporting another naming would be among them): {', '.join(sorted(others, key=broker_order))}"
        )
    brokers = [{"broker": b, **f} for b, f in sorted(by_broker.items(), key=lambda i: broker_order(i[0]))]
    busy = sorted(
        ((t, f) for t, f in by_topic.items() if f.get("partition_appends_per_s", 0.0) > 0),
        key=lambda item: (-item[1].get("partition_appends_per_s", 0.0), item[0]),
    )
    topics = [{"topic": t, **f} for t, f in busy]
    unmeasured_brokers = {b for b, f in by_broker.items() if f.get("measured") is False}
    clients = [
        {"broker": b, "client_id": c, "user": u, **f}
        for (b, c, u), f in sorted(by_client.items())
        if b not in unmeasured_brokers
    ]
    return {
        "prometheus": url,
        "end": end,
        "window_s": window_s,
        "step_s": step_s,
        "brokers": brokers,
        "topics": topics[:top_topics],
        "clients": clients,
        "queries": queries,
    }
