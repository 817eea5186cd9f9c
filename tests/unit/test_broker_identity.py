"""Which series are one broker: a pod rescheduled in the window (a new `instance`, its series twice,
one after the other) is one broker, read as such; one broker's series twice at once (two scrapes,
Prometheus replicas behind one URL, two clusters' brokers under one name) and brokers of several
clusters are refused in one line; a network idle scaled to percent is refused, never read as idle.
Prometheus is faked by its HTTP API answering the translated queries with the JSON it would send."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.unit.caps import SUBPROCESS_CAP_S, needs_promtool
from tests.unit.prometheus_api import Api, serving
from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.measure.broker_window import window_query
from tuner.measure.cluster_snapshot import one_cluster, take_snapshot
from tuner.measure.dialects import CLUSTER_LABELS, DIALECTS, Translator, dialect_names, resolve_translator
from tuner.measure.prometheus import Prometheus, Sample
from tuner.model.diagnosis import diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.store.snapshot import ClusterSnapshot
from tuner.target.base import BrokerSelectors, Target

END = 1_800_000_000.0
POD = "my-cluster-kafka-1"
# Strimzi's kafka-metrics.yaml names, as a Kubernetes Prometheus scrapes them (job kafka, pod labels).
IDLE = "kafka_network_socketserver_networkprocessoravgidle_percent"
THREAD_IDLE = "kafka_network_processor_idle_percent"
HANDLER = "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count"


def _translator() -> Translator:
    strimzi = DIALECTS["strimzi"]
    return Translator(strimzi, "kafka", {}, "pod", frozenset(dialect_names(strimzi)))


class _Queries(Api):
    """/api/v1/query: the vector of the first of `vectors` (query substring, result) the query holds."""

    vectors: ClassVar[list[tuple[str, list[dict[str, Any]]]]] = []

    def reply(self, path: str, query: dict[str, list[str]]) -> Any:
        expr = query.get("query", [""])[0]
        return {"resultType": "vector", "result": next((r for part, r in self.vectors if part in expr), [])}


@pytest.fixture
def api() -> Iterator[tuple[Prometheus, type[_Queries]]]:
    with serving(_Queries) as (url, handler):
        yield Prometheus(url, translator=_translator()), handler


def _asked(handler: type[Api]) -> list[str]:
    return [q.get("query", [""])[0] for _, q in handler.asked]


def _series(value: float, **labels: str) -> dict[str, Any]:
    return {"metric": {"job": "kafka", "namespace": "kafka", **labels}, "value": [END, f"{value}"]}


def _pods(**extra: dict[str, str]) -> list[dict[str, Any]]:
    """Network idle of pods kafka-0 and kafka-1, kafka-1 once per label set in `extra`."""
    out = [_series(0.9, pod="my-cluster-kafka-0", instance="10.0.0.5:9404")]
    return out + [_series(0.9, pod=POD, **labels) for labels in extra.values()]


def test_a_rescheduled_pod_is_one_broker_with_its_threads_once(
    api: tuple[Prometheus, type[_Queries]],
) -> None:
    prom, handler = api
    instances = {"old": {"instance": "10.0.0.6:9404"}, "new": {"instance": "10.0.0.9:9404"}}
    threads = [
        _series(0.9, pod=pod, instance=i, networkProcessor=str(n))
        for pod, i in [
            ("my-cluster-kafka-0", "10.0.0.5:9404"),
            (POD, "10.0.0.6:9404"),
            (POD, "10.0.0.9:9404"),
        ]
        for n in range(3)
    ]
    handler.vectors = [
        ("max_over_time(count by (pod)", [{"metric": {"pod": POD}, "value": [END, "1"]}]),  # one at a time
        (f"last_over_time({THREAD_IDLE}", threads),
        (f"last_over_time({IDLE}", _pods(**instances)),
    ]
    snap = take_snapshot(prom, window_s=600, step_s=15, end=END)
    by = {b["broker"]: b for b in snap["brokers"]}
    assert sorted(by) == ["my-cluster-kafka-0", POD]
    assert by[POD]["network_threads"] == 3 and by["my-cluster-kafka-0"]["network_threads"] == 3
    assert any(q.startswith("max_over_time(count by (pod)(") and IDLE in q for q in _asked(handler))


def test_one_broker_twice_at_once_is_refused_naming_the_label(api: tuple[Prometheus, type[_Queries]]) -> None:
    """Two Prometheus replicas behind one URL (a querier without deduplication): every series twice."""
    prom, handler = api
    replicas = {"a": {"instance": "10.0.0.6:9404", "prometheus_replica": "prometheus-k8s-0"},
                "b": {"instance": "10.0.0.6:9404", "prometheus_replica": "prometheus-k8s-1"}}  # fmt: skip
    handler.vectors = [
        ("max_over_time(count by (pod)", [{"metric": {"pod": POD}, "value": [END, "2"]}]),
        (f"last_over_time({IDLE}", _pods(**replicas)),
    ]
    with pytest.raises(BadInput) as err:
        take_snapshot(prom, window_s=600, step_s=15, end=END)
    assert str(err.value) == (
        f"broker {POD} has 2 network idle series at once (prometheus_replica: prometheus-k8s-0,"
        " prometheus-k8s-1): one broker scraped twice (two jobs or Prometheus replicas under one name)"
        " or two clusters' brokers under one name, whose rates kbt would add up; select one with"
        " brokers.matchers in a target file"
    )
    # No figure was asked for: the refusal comes first.
    assert not any("rate(" in q for q in _asked(handler))


def test_an_absurd_series_count_is_shown_as_a_number_not_300_digits(
    api: tuple[Prometheus, type[_Queries]],
) -> None:
    """A server answering 1e308 series at once: the line said 1 followed by 308 digits."""
    prom, handler = api
    replicas = {"a": {"instance": "10.0.0.6:9404"}, "b": {"instance": "10.0.0.7:9404"}}
    handler.vectors = [
        ("max_over_time(count by (pod)", [{"metric": {"pod": POD}, "value": [END, "1e308"]}]),
        (f"last_over_time({IDLE}", _pods(**replicas)),
    ]
    with pytest.raises(
        BadInput, match=rf"^broker {POD} has 1e\+308 network idle series at once \(instance: "
    ):
        take_snapshot(prom, window_s=600, step_s=15, end=END)


def test_brokers_of_two_clusters_are_refused(api: tuple[Prometheus, type[_Queries]]) -> None:
    """Strimzi's example cluster name in two namespaces under one PodMonitor's job."""
    prom, handler = api
    handler.vectors = [
        (f"last_over_time({IDLE}", [
            _series(0.9, pod="my-cluster-kafka-0", namespace="team-a"),
            _series(0.2, pod="my-cluster-kafka-0", namespace="team-b"),
        ]),
    ]  # fmt: skip
    with pytest.raises(
        BadInput, match=r"belong to 2 clusters \(namespace: team-a, team-b\): kbt diagnoses one"
    ):
        take_snapshot(prom, window_s=600, step_s=15, end=END)


def test_a_network_idle_in_percent_is_refused(api: tuple[Prometheus, type[_Queries]]) -> None:
    prom, handler = api
    handler.vectors = [
        (f"avg_over_time((avg by (pod)({IDLE}", [{"metric": {"pod": POD}, "value": [END, "45.2"]}]),
        (f"last_over_time({IDLE}", _pods(one={"instance": "10.0.0.6:9404"})),
    ]
    with pytest.raises(
        EnvironmentProblem, match=f"broker {POD}: network idle reads 45.2, above 1: .* percent"
    ):
        take_snapshot(prom, window_s=600, step_s=15, end=END)


def test_a_window_shorter_than_the_scrape_interval_is_said(api: tuple[Prometheus, type[_Queries]]) -> None:
    """Scraped every 60 s, diagnosed over 30 s: no sample in the window, though the series are there
    (it used to say Prometheus had no broker series at all)."""
    prom, handler = api
    handler.vectors = [(f"count by (pod)({IDLE}", [{"metric": {"pod": POD}, "value": [END, "1"]}])]
    with pytest.raises(
        BadInput, match="no sample of them within the 30 s window: it is shorter than their scrape"
    ):
        take_snapshot(prom, window_s=30, step_s=15, end=END)


def _scrapes(answered: dict[str, int], attempted: int = 40) -> list[tuple[str, list[dict[str, Any]]]]:
    """Scrape health: `attempted` scrapes of each pod, `answered[pod]` of them answered."""

    def per_pod(values: dict[str, float]) -> list[dict[str, Any]]:
        return [{"metric": {"pod": pod}, "value": [END, f"{v}"]} for pod, v in values.items()]

    return [
        ("count_over_time(up", per_pod(dict.fromkeys(answered, attempted))),
        ("sum_over_time(up", per_pod({pod: float(n) for pod, n in answered.items()})),
    ]


def test_a_broker_scraped_without_its_network_idle_is_unmeasured(
    api: tuple[Prometheus, type[_Queries]],
) -> None:
    """kafka-1's rules leave the SocketServer MBean out: it is not called healthy for want of the
    figure. A ZooKeeper pod under the same job (Strimzi's example PodMonitor) is no broker: it is
    left out and named, not reported as one without figures (it read "no idle ratios", a warning)."""
    prom, handler = api
    zookeeper = "my-cluster-zookeeper-0"

    def per_pod(values: dict[str, float]) -> list[dict[str, Any]]:
        return [{"metric": {"pod": pod}, "value": [END, f"{v}"]} for pod, v in values.items()]

    handler.vectors = [
        *_scrapes({"my-cluster-kafka-0": 40, POD: 40, zookeeper: 40}),
        (f"avg_over_time((avg by (pod)({IDLE}", per_pod({"my-cluster-kafka-0": 0.9})),
        ("kafka_server_brokertopicmetrics_bytesin_total", per_pod({"my-cluster-kafka-0": 1e6, POD: 1e6})),
        ("process_cpu_seconds_total", per_pod({"my-cluster-kafka-0": 0.5, POD: 0.5, zookeeper: 0.1})),
        (f"last_over_time({IDLE}", [_series(0.9, pod="my-cluster-kafka-0")]),
    ]
    notes: list[str] = []
    figures = take_snapshot(prom, window_s=600, step_s=15, end=END, notes=notes)
    snap = ClusterSnapshot.model_validate(figures)
    by = {b.broker: b for b in diagnose(snap, DiagnoseThresholds()).brokers}
    assert sorted(by) == ["my-cluster-kafka-0", POD]
    assert by["my-cluster-kafka-0"].status == "healthy"
    assert by[POD].status == "warning" and by[POD].cause == "unmeasured"
    assert "answered 40 of 40 scrapes, but none held its network idle" in by[POD].findings[0].summary
    assert notes == [
        "left out as not brokers (their scrapes hold no broker series in this naming; a broker exporting"
        f" another naming would be among them): {zookeeper}"
    ]


def test_kraft_controller_pods_are_left_out_and_named(api: tuple[Prometheus, type[_Queries]]) -> None:
    """Strimzi node pools: three controller pods (strimzi.io/broker-role false) under the brokers'
    PodMonitor have network threads of their own listener, nearly idle. They are no brokers: counted
    as such, they made six brokers of three and a cluster's average idle look healthier."""
    prom, handler = api
    brokers = {f"my-cluster-broker-{n}": 0.3 for n in range(3)}
    controllers = {f"my-cluster-controller-{n}": 0.99 for n in range(3, 6)}

    def idle(values: dict[str, float]) -> list[dict[str, Any]]:
        return [
            _series(
                v,
                pod=pod,
                strimzi_io_broker_role=str(pod in brokers).lower(),
                strimzi_io_controller_role="true",
            )
            for pod, v in values.items()
        ]

    def per_pod(values: dict[str, float]) -> list[dict[str, Any]]:
        return [{"metric": {"pod": pod}, "value": [END, f"{v}"]} for pod, v in values.items()]

    handler.vectors = [
        *_scrapes(dict.fromkeys([*brokers, *controllers], 40)),
        (f"avg_over_time((avg by (pod)({IDLE}", per_pod({**brokers, **controllers})),
        ("process_cpu_seconds_total", per_pod(dict.fromkeys([*brokers, *controllers], 0.5))),
        (f"last_over_time({IDLE}", idle({**brokers, **controllers})),
    ]
    notes: list[str] = []
    snap = ClusterSnapshot.model_validate(take_snapshot(prom, window_s=600, step_s=15, end=END, notes=notes))
    assert [b.broker for b in snap.brokers] == sorted(brokers)
    assert [b.network_idle_ratio for b in snap.brokers] == [0.3, 0.3, 0.3]
    assert notes == [
        "left out as KRaft controllers (their pods' strimzi.io/broker-role is false: no client talks to"
        f" them): {', '.join(controllers)}"
    ]
    # A selection of controllers alone is refused: it misses the brokers.
    handler.vectors = [
        *_scrapes(dict.fromkeys(controllers, 40)),
        (f"last_over_time({IDLE}", idle(controllers)),
    ]
    with pytest.raises(
        BadInput, match=r"every node selected is a KRaft controller alone \(strimzi_io_broker_role="
    ):
        take_snapshot(prom, window_s=600, step_s=15, end=END)


def test_no_network_idle_for_any_answering_broker_is_refused(api: tuple[Prometheus, type[_Queries]]) -> None:
    """A dialect named wrong in the target file: every broker answered, none has the series. Each
    broker read "no idle ratios" (or healthy, where a handler idle series matched), no cause named."""
    prom, handler = api
    handler.vectors = _scrapes({"my-cluster-kafka-0": 40, POD: 40})
    with pytest.raises(EnvironmentProblem, match="has no kbt broker metrics"):
        take_snapshot(prom, window_s=600, step_s=15, end=END)
    # Brokers whose every scrape failed have no series either: they are reported unmeasured.
    handler.vectors = _scrapes({"my-cluster-kafka-0": 0, POD: 0})
    snap = take_snapshot(prom, window_s=600, step_s=15, end=END)
    assert [b["measured"] for b in snap["brokers"]] == [False, False]


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6), st.sampled_from(CLUSTER_LABELS))
def test_one_cluster_refuses_exactly_several(clusters: list[str], label: str) -> None:
    present = [Sample({"broker": str(i), label: c}, 0.9) for i, c in enumerate(clusters)]
    present.append(Sample({"broker": "9"}, 0.9))  # a broker without the label names no cluster
    if len(set(clusters)) > 1:
        with pytest.raises(BadInput, match=f"belong to {len(set(clusters))} clusters"):
            one_cluster(present)
    else:
        one_cluster(present)


class _Reader:
    """Answers take_snapshot's per-thread query with each processor's series once per instance."""

    def __init__(self, processors: int, instances: int) -> None:
        self.processors, self.instances = processors, instances

    def instant(self, expr: str, at: float | None = None) -> list[Sample]:
        if expr.startswith("max_over_time(count by (broker)"):
            return [Sample({"broker": "1"}, 1.0)]
        if expr.startswith("last_over_time(kafka_network_processor_avg_idle_ratio"):
            return [Sample({"broker": "1", "instance": f"i{i}"}, 0.9) for i in range(self.instances)]
        if expr.startswith("last_over_time(kafka_network_processor_idle_ratio"):
            return [
                Sample({"broker": "1", "instance": f"i{i}", "network_processor": str(n)}, 0.9)
                for i in range(self.instances)
                for n in range(self.processors)
            ]
        return []

    def samples(self, selector: str, start: float, end: float) -> list[Any]:
        return []


@given(st.integers(1, 16), st.integers(1, 5))
def test_network_threads_are_the_processors_however_often_a_pod_moved(processors: int, moves: int) -> None:
    snap = take_snapshot(_Reader(processors, moves), window_s=600, step_s=15, end=END)
    assert snap["brokers"][0]["network_threads"] == processors


@needs_promtool
def test_handler_idle_and_requests_over_a_rescheduled_pod(tmp_path: Path) -> None:
    """Real PromQL (promtool) over the translated window queries: the pod moves at 10 min of a 20 min
    window, its handler meter 0.9 idle and 50 produce requests/s throughout. The mean of the two
    series' rates read 0.44 idle."""
    t = _translator()
    requests = "kafka_network_requestmetrics_requests_total"
    old, new = (
        f'{{job="kafka",pod="{POD}",instance="10.0.0.6:9404"',
        f'{{job="kafka",pod="{POD}",instance="10.0.0.9:9404"',
    )
    series = [
        {"series": f"{HANDLER}{old}}}", "values": "0+13.5e9x40 stale"},
        {"series": f"{HANDLER}{new}}}", "values": "_x42 0+13.5e9x38"},
        {"series": f'{requests}{old},request="Produce",version="9"}}', "values": "0+750x40 stale"},
        {"series": f'{requests}{new},request="Produce",version="9"}}', "values": "_x42 0+750x38"},
    ]  # fmt: skip

    def within(name: str, low: float, high: float) -> dict[str, Any]:
        expr = t.translate(window_query(name, "rate", 1200, 15))
        return {
            "expr": f"(({expr}) > bool {low}) * (({expr}) < bool {high})",
            "eval_time": "20m",
            "exp_samples": [{"labels": f'{{pod="{POD}"}}', "value": 1}],
        }

    tests = [within("REQUEST_HANDLER_IDLE", 0.85, 0.95), within("PRODUCE_REQUESTS_RATE", 45, 55)]
    doc = {"tests": [{"interval": "15s", "input_series": series, "promql_expr_test": tests}]}
    path = tmp_path / "rescheduled_test.yml"
    with path.open("w") as f:
        YAML(typ="safe").dump(doc, f)
    result = subprocess.run(
        ["promtool", "test", "rules", path.name], capture_output=True, text=True, cwd=tmp_path,
        timeout=SUBPROCESS_CAP_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


class _TwoJobs:
    """A bare Prometheus (kbt's names) where a second job, `kafka-staging`, scrapes other brokers with
    the same node ids. The figures' queries read every job: before, the brokers were found under
    kafka-broker alone and each broker's rates were the two clusters' sum."""

    def instant(self, expr: str, at: float | None = None) -> list[Sample]:
        if expr.startswith("max_over_time(count by (broker)(kafka_network_processor_avg_idle_ratio)"):
            return [Sample({"broker": "1"}, 2.0)]
        if expr.startswith("last_over_time(kafka_network_processor_avg_idle_ratio["):
            return [Sample({"broker": "1", "job": job}, 0.9) for job in ("kafka-broker", "kafka-staging")]
        return []

    def samples(self, selector: str, start: float, end: float) -> list[Any]:
        return []


def test_a_bare_prometheus_sees_a_second_job_s_brokers() -> None:
    with pytest.raises(
        BadInput, match=r"broker 1 has 2 network idle series at once \(job: kafka-broker, kafka-staging\)"
    ):
        take_snapshot(_TwoJobs(), window_s=600, step_s=15, end=END)


def test_live_broker_requests_read_the_brokers_job_alone() -> None:
    """A lab with kubernetes_job scrapes each broker twice (jobs kafka-broker and kafka, kbt's names
    both): the live figure summed both, twice the requests."""
    from tuner.measure.live import _queries

    expr = _queries(20.0)["broker_requests_per_s"]
    assert 'job="kafka-broker"' in expr and 'request="Produce"' in expr
    assert 'job="kafka"' in _translator().translate(expr)  # a target's own job


class _RecordedBeside:
    """Strimzi's raw series (pod labels) beside kbt's dialect recording rules' copies of them, which
    add a `broker` label: only the recorded series carry it."""

    def series_names(self, matchers: str, window: tuple[float, float] | None = None) -> set[str]:
        return dialect_names(DIALECTS["strimzi"]) | {"kafka_network_processor_avg_idle_ratio"}

    def labels_present(
        self, matchers: str, labels: tuple[str, ...], window: tuple[float, float] | None = None
    ) -> set[str]:
        raw = f'__name__=~"{IDLE}"' in matchers
        return {"pod", "instance"} if raw else {"broker", "pod", "instance"}


def test_the_broker_label_is_read_off_the_network_idle_series() -> None:
    """It was read off every series of the job: `broker` (the recordings') named no raw series, and
    diagnose found no broker at all."""
    target = Target(name="t", kind="file", bootstrap_servers="h:1", selectors=BrokerSelectors(job="kafka"),
                    dialect="strimzi")  # fmt: skip
    assert resolve_translator(_RecordedBeside(), target).broker_label == "pod"
