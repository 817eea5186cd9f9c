"""Window queries come from the named catalog, aggregate over the whole window, escape topics."""

from __future__ import annotations

import re

from tuner.measure.broker_window import WINDOW_FIELDS, BrokerStats, topic_regex, window_queries
from tuner.measure.promql import query


def test_every_broker_field_is_measured_from_a_catalog_query() -> None:
    stats_fields = set(BrokerStats.model_fields) - {"broker"}
    queries = window_queries(50.0, ["t"], 5.0, queue_cap=16)
    assert set(queries) == stats_fields
    # the queue's time at its cap only where the cap is known
    assert set(window_queries(50.0, ["t"], 5.0)) == stats_fields - {"request_queue_at_cap_share"}
    at_cap = r"avg_over_time\(\(max by \(broker\)\(kafka_network_request_queue_size\) >= bool 16\)"
    assert re.fullmatch(at_cap + r"\[50000ms:5000ms\]\)", queries["request_queue_at_cap_share"])
    for field, (name, _agg) in WINDOW_FIELDS.items():
        query(name)  # raises on an unknown name
        assert field in queries


def test_rate_queries_span_the_window_and_gauges_use_subqueries() -> None:
    queries = window_queries(50.0, ["t"], 5.0)
    assert "[50000ms]" in queries["produce_requests_per_s"]
    assert "$__rate_interval" not in "".join(queries.values())
    assert re.fullmatch(
        r"avg_over_time\(\(.*kafka_network_processor_avg_idle_ratio.*\)\[50000ms:5000ms\]\)",
        queries["network_idle_ratio"],
    )
    assert queries["request_queue_size_max"].startswith("max_over_time((")


def test_topic_regex_matches_only_those_topics() -> None:
    topics = ["qunar.logs-r0-1", "other"]
    expr = topic_regex(topics)
    as_regex = expr.replace("\\\\", "\\")  # what Prometheus sees after unquoting the PromQL string
    assert re.fullmatch(as_regex, "qunar.logs-r0-1")
    assert not re.fullmatch(as_regex, "qunarXlogs-r0-1")
    assert not re.fullmatch(as_regex, "other-2")
