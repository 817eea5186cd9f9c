"""exporters/jmx/kafka-broker.yml against real broker MBean names and the metrics catalog.

The corpus (tests/unit/data/jmx_corpus.txt) holds attribute names scraped from a real Kafka 4.1.1
lab broker (scripts/capture_jmx_corpus.py). The rules are applied the way jmx_exporter 1.0.1 does
(tests/unit/jmx_emulator.py); the integration golden test checks the same names in Prometheus.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from tests.unit.jmx_emulator import Output, Rules, load_corpus
from tuner.measure.catalog import SERIES, Kind

ROOT = Path(__file__).resolve().parents[2]
RULES = Rules.load(ROOT / "exporters" / "jmx" / "kafka-broker.yml")
CORPUS = load_corpus(Path(__file__).parent / "data" / "jmx_corpus.txt")
# The series exporters/jmx/kafka-broker.yml must produce.
RULE_SERIES = tuple(s for s in SERIES if s.from_rules)


def _outputs(include_filter: bool = True) -> list[Output]:
    out = []
    for line in CORPUS:
        if include_filter and not RULES.included(line):
            continue
        produced = RULES.apply(line)
        if produced is not None:
            out.append(produced)
    return out


OUTPUTS = _outputs()

GOLDEN = [
    (
        "kafka.server<type=Request, client-id=corpus-producer><>request-time",
        "kafka_server_client_request_time_percent",
        {"client_id": "corpus-producer"},
    ),
    (
        "kafka.server<type=Produce, user=alice, client-id=corpus-producer><>byte-rate",
        "kafka_server_client_byte_rate",
        {"quota": "Produce", "user": "alice", "client_id": "corpus-producer"},
    ),
    ("kafka.server<type=Produce><>queue-size", None, {}),
    ("kafka.server<type=Request><>exempt-request-time", None, {}),
    (
        "kafka.network<type=RequestChannel, name=RequestQueueSize><>Value",
        "kafka_network_request_queue_size",
        {},
    ),
    (
        "kafka.network<type=RequestChannel, name=ResponseQueueSize><>Value",
        "kafka_network_response_queue_size",
        {},
    ),
    ("kafka.network<type=RequestChannel, name=ResponseQueueSize, processor=0><>Value", None, {}),
    (
        "kafka.network<type=SocketServer, name=NetworkProcessorAvgIdlePercent><>Value",
        "kafka_network_processor_avg_idle_ratio",
        {},
    ),
    (
        "kafka.network<type=Processor, name=IdlePercent, networkProcessor=2><>Value",
        "kafka_network_processor_idle_ratio",
        {"network_processor": "2"},
    ),
    (
        "kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>Count",
        "kafka_server_request_handler_idle_ns_total",
        {},
    ),
    (
        "kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>OneMinuteRate",
        "kafka_server_request_handler_avg_idle_ratio",
        {},
    ),
    ("kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>MeanRate", None, {}),
    ("kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>Count", "kafka_log_flush_total", {}),
    (
        "kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>50thPercentile",
        "kafka_log_flush_time_ms",
        {"quantile": "0.5"},
    ),
    (
        "kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>999thPercentile",
        "kafka_log_flush_time_ms",
        {"quantile": "0.999"},
    ),
    ("kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>Mean", None, {}),
    (
        "kafka.server<type=BrokerTopicMetrics, name=TotalProduceRequestsPerSec><>Count",
        "kafka_server_produce_requests_total",
        {},
    ),
    (
        "kafka.server<type=BrokerTopicMetrics, name=TotalProduceRequestsPerSec, topic=corpus-plain><>Count",
        "kafka_server_produce_requests_total",
        {"topic": "corpus-plain"},
    ),
    (
        "kafka.server<type=BrokerTopicMetrics, name=TotalFetchRequestsPerSec><>Count",
        "kafka_server_fetch_requests_total",
        {},
    ),
    (
        "kafka.server<type=BrokerTopicMetrics, name=BytesInPerSec, topic=corpus-tiered><>Count",
        "kafka_server_bytes_in_total",
        {"topic": "corpus-tiered"},
    ),
    ("kafka.server<type=BrokerTopicMetrics, name=ReplicationBytesInPerSec><>Count", None, {}),
    ("kafka.server<type=BrokerTopicMetrics, name=BytesOutPerSec><>Count", "kafka_server_bytes_out_total", {}),
    (
        "kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec><>Count",
        "kafka_server_messages_in_total",
        {},
    ),
    ("kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec><>OneMinuteRate", None, {}),
    (
        "kafka.network<type=RequestMetrics, name=RequestsPerSec, request=Produce, version=10><>Count",
        "kafka_network_requests_total",
        {"request": "Produce", "version": "10"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>999thPercentile",
        "kafka_network_request_time_ms",
        {"request": "Produce", "phase": "total", "quantile": "0.999"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=RequestQueueTimeMs, request=FetchConsumer><>99thPercentile",
        "kafka_network_request_time_ms",
        {"request": "FetchConsumer", "phase": "request_queue", "quantile": "0.99"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=LocalTimeMs, request=FetchFollower><>75thPercentile",
        "kafka_network_request_time_ms",
        {"request": "FetchFollower", "phase": "local", "quantile": "0.75"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=RemoteTimeMs, request=Produce><>50thPercentile",
        "kafka_network_request_time_ms",
        {"request": "Produce", "phase": "remote", "quantile": "0.5"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=ResponseQueueTimeMs, request=Produce><>95thPercentile",
        "kafka_network_request_time_ms",
        {"request": "Produce", "phase": "response_queue", "quantile": "0.95"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=ResponseSendTimeMs, request=Produce><>98thPercentile",
        "kafka_network_request_time_ms",
        {"request": "Produce", "phase": "response_send", "quantile": "0.98"},
    ),
    (
        "kafka.network<type=RequestMetrics, name=ThrottleTimeMs, request=Produce><>99thPercentile",
        "kafka_network_request_time_ms",
        {"request": "Produce", "phase": "throttle", "quantile": "0.99"},
    ),
    ("kafka.network<type=RequestMetrics, name=TotalTimeMs, request=Produce><>Mean", None, {}),
    (
        "kafka.network<type=RequestMetrics, name=MessageConversionsTimeMs, request=Produce><>99thPercentile",
        None,
        {},
    ),
    (
        "kafka.network<type=RequestMetrics, name=RequestBytes, request=Produce><>50thPercentile",
        "kafka_network_request_bytes",
        {"request": "Produce", "quantile": "0.5"},
    ),
    (
        "kafka.server<type=BrokerTopicMetrics, name=RemoteCopyBytesPerSec><>Count",
        "kafka_server_remote_copy_bytes_total",
        {},
    ),
    (
        "kafka.server<type=BrokerTopicMetrics, name=RemoteFetchRequestsPerSec, topic=corpus-tiered><>Count",
        "kafka_server_remote_fetch_requests_total",
        {"topic": "corpus-tiered"},
    ),
    (
        "kafka.server<type=BrokerTopicMetrics, name=RemoteCopyLagBytes><>Value",
        "kafka_server_remote_copy_lag_bytes",
        {},
    ),
    ("kafka.server<type=BrokerTopicMetrics, name=RemoteCopyLagSegments><>Value", None, {}),
    (
        "kafka.server<type=BrokerTopicMetrics, name=RemoteLogSizeBytes><>Value",
        "kafka_server_remote_log_size_bytes",
        {},
    ),
    (
        "kafka.log.remote<type=RemoteLogManager, name=RemoteLogManagerTasksAvgIdlePercent><>Value",
        "kafka_log_remote_manager_tasks_avg_idle_ratio",
        {},
    ),
    (
        "kafka.log.remote<type=RemoteLogManager, name=RemoteLogReaderFetchRateAndTimeMs><>Count",
        "kafka_log_remote_reader_fetch_total",
        {},
    ),
    (
        "kafka.log.remote<type=RemoteLogManager, name=RemoteLogReaderFetchRateAndTimeMs><>99thPercentile",
        "kafka_log_remote_reader_fetch_time_ms",
        {"quantile": "0.99"},
    ),
    (
        "org.apache.kafka.storage.internals.log<type=RemoteStorageThreadPool,"
        " name=RemoteLogReaderTaskQueueSize><>Value",
        "kafka_storage_remote_thread_pool_reader_task_queue_size",
        {},
    ),
    (
        "org.apache.kafka.storage.internals.log<type=RemoteStorageThreadPool,"
        " name=RemoteLogReaderAvgIdlePercent><>Value",
        "kafka_storage_remote_thread_pool_reader_avg_idle_ratio",
        {},
    ),
]


@pytest.mark.parametrize(("line", "name", "labels"), GOLDEN, ids=[g[0][:90] for g in GOLDEN])
def test_golden_object_names(line: str, name: str | None, labels: dict[str, str]) -> None:
    assert line in CORPUS, "golden line must be a real broker MBean attribute (re-capture the corpus?)"
    out = RULES.apply(line) if RULES.included(line) else None
    if name is None:
        assert out is None, f"{line} should not be exported, got {out}"
    else:
        assert out is not None, f"{line} produced nothing"
        assert (out.name, dict(out.labels)) == (name, labels)


def test_every_catalog_series_is_produced_and_nothing_else() -> None:
    produced = {o.name for o in OUTPUTS}
    catalog = {s.name for s in RULE_SERIES}
    assert catalog - produced == set(), "catalog series without a rule producing them"
    assert produced - catalog == set(), "rules produce series the catalog does not describe"


def test_labels_match_the_catalog() -> None:
    labels_by_name: dict[str, set[frozenset[str]]] = defaultdict(set)
    for o in OUTPUTS:
        labels_by_name[o.name].add(frozenset(k for k, _ in o.labels))
    for s in RULE_SERIES:
        expected = {frozenset(s.labels)}
        if s.per_topic:
            expected.add(frozenset({*s.labels, "topic"}))
        for left_out in s.optional_labels:  # e.g. the quota sensors' user or client-id
            expected.add(frozenset(s.labels) - {left_out})
        assert labels_by_name[s.name] <= expected, s.name
        assert frozenset(s.labels) in labels_by_name[s.name], f"{s.name}: no series with labels {s.labels}"


def test_types_and_counter_names_agree() -> None:
    by_name = {s.name: s for s in SERIES}
    for o in OUTPUTS:
        kind = by_name[o.name].kind
        assert o.type == ("COUNTER" if kind is Kind.COUNTER else "GAUGE"), o.name
        assert o.name.endswith("_total") == (kind is Kind.COUNTER), o.name


def test_every_rule_is_used() -> None:
    used = {o.rule for o in OUTPUTS}
    unused = [RULES.rules[i]["pattern"] for i in range(len(RULES.rules)) if i not in used]
    assert unused == []


def test_no_duplicate_series() -> None:
    """Two beans yielding the same name+labels make the agent add an _objectname label."""
    seen: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
    for o in OUTPUTS:
        key = (o.name, o.labels)
        assert key not in seen, f"{o.source} and {seen[key]} both produce {key}"
        seen[key] = o.source


def test_include_object_names_keep_every_series() -> None:
    """The includeObjectNames filter drops only beans no rule uses."""
    unfiltered = {(o.name, o.labels) for o in _outputs(include_filter=False)}
    filtered = {(o.name, o.labels) for o in OUTPUTS}
    missing = {
        k
        for k in unfiltered - filtered
        if k[0] != "kafka_network_request_time_ms" and k[0] != "kafka_network_request_bytes"
    }
    assert missing == set()
    timed = {dict(labels)["request"] for name, labels in filtered if name == "kafka_network_request_time_ms"}
    assert timed == {"Produce", "FetchConsumer", "FetchFollower", "Metadata"}


def test_no_catch_all_rule() -> None:
    for rule in RULES.rules:
        assert rule["pattern"].strip() not in (".*", "(.*)", "(.+)", ".+")
        assert "name" in rule, rule["pattern"]
    assert "MeanRate" not in str(RULES.raw)


def test_the_release_becomes_a_label() -> None:
    """app-info's Version is a String: the rule sets the value and keeps the text as a label."""
    out = RULES.apply("kafka.server<type=app-info, id=1><>Version", value="4.1.1")
    assert out is not None and (out.name, dict(out.labels)) == (
        "kafka_server_app_version",
        {"version": "4.1.1"},
    )
    assert RULES.rules[out.rule]["value"] == 1
    assert not RULES.rules[out.rule].get("cache"), "a cached rule matches without the value: <cache>"
    assert RULES.apply("kafka.server<type=app-info, id=1><>CommitId", value="abc") is None
    assert RULES.apply("kafka.server<type=app-info><>version", value="4.1.1") is None  # one series per broker
