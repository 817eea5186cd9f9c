"""The metric setups teams run today (issue 44): Strimzi Metrics Reporter naming, the exporter's
default naming (MSK open monitoring), KIP-1207's per-pool handler meter, brokers named by pod labels,
and the allowlist doctor. Translation and detection only: the live check is the dialect lab test in
tests/integration/test_targets.py."""

from __future__ import annotations

import pytest

from tuner.measure.dialects import (
    BROKER_LABELS,
    DIAGNOSE_NEEDS,
    DIALECTS,
    Translator,
    allowlist_advice,
    assess,
    detect,
    dialect_names,
    pick_broker_label,
    resolve_translator,
)
from tuner.measure.prometheus import Sample
from tuner.measure.promql import QUERIES, promql
from tuner.runner.live_diagnosis import handler_idle_notes
from tuner.target.base import BrokerSelectors, Target

TODAY = ("strimzi-reporter", "exporter-default", "msk")


def test_reporter_reads_its_counters_and_summaries() -> None:
    t = Translator(DIALECTS["strimzi-reporter"], job="kafka", broker_label="pod")
    assert t.translate(promql("PRODUCE_REQUESTS_RATE", "30s")) == (
        "sum by (pod)(rate(kafka_network_requestmetrics_requestspersec_total"
        '{job="kafka",request="Produce"}[30s]))'
    )
    # The summary's quantiles are written as kbt writes them ("0.5"): no value mapping.
    assert t.translate(promql("PRODUCE_REQUEST_BYTES_P50", "30s")).endswith(
        'kafka_network_requestmetrics_requestbytes{job="kafka",request="Produce",quantile="0.5"})'
    )
    # The handler meter is a counter of nanoseconds: rate / 1e9, the broker pool's (KIP-1207) first.
    idle = t.translate(promql("REQUEST_HANDLER_IDLE", "30s"))
    assert "brokerrequesthandleravgidlepercent_total" in idle and "/ 1e9" in idle
    present = frozenset({"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total"})
    older = Translator(DIALECTS["strimzi-reporter"], present=present)
    older_idle = older.translate(promql("REQUEST_HANDLER_IDLE", "30s"))
    assert "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total{" in older_idle


def test_default_naming_puts_phase_in_name_and_quantile_in_the_series_name() -> None:
    t = Translator(DIALECTS["exporter-default"], job="msk", broker_label="instance")
    out = t.translate(promql("PRODUCE_TOTAL_P999_MS", "30s"))
    assert out == (
        "max by (instance)(kafka_network_RequestMetrics_999thPercentile"
        '{job="msk",request="Produce",name="TotalTimeMs"})'
    )
    p50 = t.translate(
        'max by (broker)(kafka_network_request_time_ms{request="Produce",phase="local",quantile="0.5"})'
    )
    assert 'RequestMetrics_50thPercentile{job="msk",request="Produce",name="LocalTimeMs"}' in p50
    produce = t.translate(promql("PRODUCE_REQUESTS_RATE", "30s"))
    assert 'kafka_network_RequestMetrics_Count{job="msk",request="Produce",name="RequestsPerSec"}' in produce
    # Back to kbt's labels: `name` gives the phase only where it is one.
    assert t.labels({"instance": "b-1:11001", "name": "TotalTimeMs"})["phase"] == "total"
    assert "phase" not in t.labels({"instance": "b-1:11001", "name": "RequestsPerSec"})
    assert t.labels({"instance": "b-1:11001"})["broker"] == "b-1:11001"
    assert DIALECTS["msk"].series is DIALECTS["exporter-default"].series


@pytest.mark.parametrize("name", TODAY)
def test_every_catalog_query_translates_or_names_its_missing_series(name: str) -> None:
    t = Translator(DIALECTS[name], job="kafka")
    translated = 0
    for q in QUERIES:
        try:
            out = t.translate(promql(q.name, "30s"))
        except Exception as exc:  # MissingSeries: the reason is said
            assert getattr(exc, "reason", ""), (q.name, exc)
            continue
        translated += 1
        assert "kafka-broker" not in out and ("kafka_" not in out or 'job="kafka"' in out)
    assert translated > len(QUERIES) // 2


@pytest.mark.parametrize("name", ["strimzi-reporter", "exporter-default"])
def test_detection_picks_todays_setups(name: str) -> None:
    found = detect(dialect_names(DIALECTS[name]) | {"process_cpu_seconds_total"})
    assert found.dialect.name == name and found.missing == ()


def test_detection_still_picks_the_older_dialects() -> None:
    for name in ("strimzi", "upstream", "confluent"):
        assert detect(dialect_names(DIALECTS[name])).dialect.name == name


# What Strimzi's default allowlist lets through of the names diagnose reads (its KafkaCluster's
# DEFAULT_METRICS_ALLOW_LIST): RequestMetrics, BrokerTopicMetrics, the network idle gauge, the
# handler meter; not the request queue, not each network thread.
STRIMZI_DEFAULT_EXPORTS = {
    "kafka_network_requestmetrics_requestspersec_total",
    "kafka_network_requestmetrics_totaltimems",
    "kafka_network_requestmetrics_requestbytes",
    "kafka_network_socketserver_networkprocessoravgidlepercent",
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total",
    "kafka_server_brokertopicmetrics_bytesinpersec_total",
    "kafka_server_brokertopicmetrics_messagesinpersec_total",
}


def test_allowlist_doctor_names_the_entry_to_add() -> None:
    found = detect(STRIMZI_DEFAULT_EXPORTS)
    assert found.dialect.name == "strimzi-reporter"
    assert set(found.missing) == {"kafka_network_request_queue_size", "kafka_network_processor_idle_ratio"}
    advice = allowlist_advice(found)
    assert len(advice) == 2 and all("\n" not in a for a in advice)
    queue = next(a for a in advice if a.startswith("kafka_network_request_queue_size"))
    assert '"kafka_network_requestchannel_requestqueuesize"' in queue
    assert "metricsConfig.values.allowList" in queue and "prometheus.metrics.reporter.allowlist" in queue
    threads = next(a for a in advice if a.startswith("kafka_network_processor_idle_ratio"))
    assert '"kafka_network_processor_idlepercent"' in threads
    # Nothing to say once the entries are there.
    everything = STRIMZI_DEFAULT_EXPORTS | {
        "kafka_network_requestchannel_requestqueuesize",
        "kafka_network_processor_idlepercent",
    }
    assert allowlist_advice(assess(DIALECTS["strimzi-reporter"], everything)) == []


def test_allowlist_doctor_on_a_rules_dialect_names_the_mbean() -> None:
    present = dialect_names(DIALECTS["exporter-default"]) - {"kafka_network_RequestChannel_Value"}
    found = detect(present)
    advice = allowlist_advice(found)
    assert found.dialect.name == "exporter-default"
    assert advice == [a for a in advice if "kafka.network:type=RequestChannel,name=RequestQueueSize" in a]
    assert len(advice) == 1


def test_broker_label_from_pod_labels_in_order() -> None:
    assert pick_broker_label({"broker", "pod", "instance"}) == "broker"
    assert pick_broker_label({"pod", "kubernetes_pod_name", "instance"}) == "kubernetes_pod_name"
    assert pick_broker_label({"pod", "instance"}) == "pod"
    assert pick_broker_label({"node_name", "instance"}) == "node_name"
    assert pick_broker_label({"instance"}) == "instance"
    assert pick_broker_label(set()) == "broker"
    assert BROKER_LABELS[0] == "broker" and BROKER_LABELS[-1] == "instance"


class _Prom:
    """Answers the two questions resolve_translator asks of a Prometheus."""

    def __init__(self, names: set[str], labels: set[str]) -> None:
        self.names, self.labels = names, labels
        self.windows: list[tuple[float, float] | None] = []

    def series_names(self, matchers: str, window: tuple[float, float] | None = None) -> set[str]:
        self.windows.append(window)
        return self.names

    def labels_present(
        self, matchers: str, labels: tuple[str, ...], window: tuple[float, float] | None = None
    ) -> set[str]:
        self.windows.append(window)
        return self.labels & set(labels)


def test_diagnose_tells_pods_apart_without_a_broker_label() -> None:
    target = Target(name="t", kind="file", bootstrap_servers="h:1", selectors=BrokerSelectors(job="kafka"),
                    dialect="auto")  # fmt: skip
    prom = _Prom(dialect_names(DIALECTS["strimzi-reporter"]), {"kubernetes_pod_name", "pod", "instance"})
    t = resolve_translator(prom, target)
    assert t.dialect.name == "strimzi-reporter" and t.broker_label == "kubernetes_pod_name"
    assert "by (kubernetes_pod_name)" in t.translate(promql("NETWORK_IDLE", "30s"))
    # A broker label named in the target file is kept as it is.
    named = Target(name="t", kind="file", bootstrap_servers="h:1",
                   selectors=BrokerSelectors(job="kafka", broker_label="pod"), dialect="auto")  # fmt: skip
    assert resolve_translator(prom, named).broker_label == "pod"


def test_diagnose_needs_are_all_mapped_on_todays_dialects() -> None:
    for name in TODAY:
        assert assess(DIALECTS[name], dialect_names(DIALECTS[name])).found == DIAGNOSE_NEEDS


class _Rates:
    """A Prometheus answering the handler idle query with fixed per-broker readings."""

    def __init__(self, readings: dict[str, float]) -> None:
        self.readings = readings
        self.asked: list[str] = []

    def instant(self, expr: str, at: float | None = None) -> list[Sample]:
        self.asked.append(expr)
        return [Sample({"broker": b}, v) for b, v in self.readings.items()]


def test_combined_mode_handler_idle_above_one_is_said() -> None:
    """A KRaft combined-mode node before KIP-1207's fix reads up to ~2: kbt clamps it and says why."""
    prom = _Rates({"1": 1.93, "2": 0.71, "3": 1.01})
    notes = handler_idle_notes(prom, 60.0, 1000.0)  # type: ignore[arg-type]
    assert len(notes) == 1 and notes[0].startswith("broker 1: request handler idle reads 1.93 (above 1)")
    assert "combined-mode" in notes[0] and "clamped" in notes[0]
    assert "[60000ms]" in prom.asked[0] and "/ 1e9" in prom.asked[0]
    assert handler_idle_notes(_Rates({"1": 0.5}), 60.0, 1000.0) == []  # type: ignore[arg-type]
