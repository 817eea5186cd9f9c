"""kbt diagnose's classification: each cause from its evidence, severities, thresholds, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.core.errors import BadInput, ExitStatus
from tuner.measure.cluster_snapshot import snapshot_queries
from tuner.model.cost import BrokerCostModel, LinearFit
from tuner.model.diagnosis import diagnose, small_request_limit
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.render.diagnosis import findings_text
from tuner.runner.diagnose_inputs import load_thresholds
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot, TopicSnapshot

T = DiagnoseThresholds()


def _broker(broker: str = "1", **kw: float) -> BrokerSnapshot:
    base: dict[str, float] = {
        "network_threads": 3,
        "produce_requests_per_s": 30.0,
        "bytes_in_per_s": 30 * 40_000.0,
        "messages_in_per_s": 30 * 25.0,
        "network_idle_ratio": 0.95,
        "request_handler_idle_ratio": 0.95,
        "request_queue_size": 0.1,
        "produce_request_queue_p99_ms": 2.0,
        "log_flush_time_p99_ms": 5.0,
        "fetch_requests_per_s": 10.0,
        "bytes_out_per_s": 1e5,
    }
    base.update(kw)
    return BrokerSnapshot(broker=broker, **base)  # type: ignore[arg-type]


def _snap(*brokers: BrokerSnapshot, topics: list[TopicSnapshot] | None = None) -> ClusterSnapshot:
    return ClusterSnapshot(
        prometheus="http://prom", end=1.0, window_s=300, step_s=15, brokers=list(brokers), topics=topics or []
    )


def _model(a: float = 1e-4, b: float = 2.5e-8, c: float = 0.0) -> BrokerCostModel:
    fit = LinearFit(requests_coef=a, bytes_coef=b, intercept=c, r2=0.9, n=9, rmse=0.01)
    return BrokerCostModel(network=fit, handler=fit)


def test_batched_cluster_is_healthy() -> None:
    d = diagnose(_snap(_broker("1"), _broker("2")), T)
    assert d.status == "healthy" and d.exit_status is ExitStatus.OK
    assert [b.cause for b in d.brokers] == ["healthy", "healthy"]
    assert d.headline.startswith("healthy")
    # Batched to ~4.7 KB per request (zstd, 500 ms linger): not small, even at a high request rate.
    busy = _broker(produce_requests_per_s=300.0, bytes_in_per_s=300 * 4700.0)
    assert diagnose(_snap(busy), T).status == "healthy"


def test_qunar_small_requests_saturating_network_is_critical() -> None:
    qunar = _broker(
        produce_requests_per_s=900.0,
        bytes_in_per_s=900 * 3000.0,
        messages_in_per_s=900 * 1.9,
        network_idle_ratio=0.25,
    )
    d = diagnose(_snap(qunar), T)
    b = d.brokers[0]
    assert d.status == "critical" and d.exit_status is ExitStatus.CRITICAL
    assert b.cause == "small requests"
    summary = b.findings[0].summary
    assert summary.startswith(
        "network threads saturated by small produce requests: average produce request is 3.0 KB"
    )
    assert "(1.9 records)" in summary and "300/s per network thread" in summary
    assert b.requests_cut == pytest.approx(16384 / 3000)
    assert "~5x" in summary


def test_small_requests_with_idle_threads_warn() -> None:
    d = diagnose(_snap(_broker(produce_requests_per_s=320.0, bytes_in_per_s=320 * 650.0)), T)
    b = d.brokers[0]
    assert d.status == "warning" and d.exit_status is ExitStatus.WARNING
    assert b.findings[0].summary.startswith("small produce requests: average produce request is 650 B")
    assert "~25x" in b.findings[0].summary


def test_small_requests_below_the_rate_floor_are_healthy() -> None:
    # 25 req/s on 3 network threads = 8/s per thread, under the 10/s floor: size does not matter yet.
    d = diagnose(_snap(_broker(produce_requests_per_s=25.0, bytes_in_per_s=25 * 650.0)), T)
    assert d.status == "healthy"
    # The same rate on one network thread is 25/s per thread: flagged.
    d1 = diagnose(
        _snap(_broker(network_threads=1, produce_requests_per_s=25.0, bytes_in_per_s=25 * 650.0)), T
    )
    assert d1.brokers[0].cause == "small requests"


def test_cost_model_sets_the_small_request_limit() -> None:
    model = _model(a=1e-4, b=5e-8)  # break-even 2000 B
    limit, source = small_request_limit(T, model)
    assert (limit, source) == (pytest.approx(2000), "cost model")
    medium = _broker(produce_requests_per_s=300.0, bytes_in_per_s=300 * 3000.0)  # 3 KB: above break-even
    assert diagnose(_snap(medium), T, model).status == "healthy"
    assert diagnose(_snap(medium), T).brokers[0].cause == "small requests"  # default 4 KB limit
    small = _broker(produce_requests_per_s=300.0, bytes_in_per_s=300 * 1000.0)
    b = diagnose(_snap(small), T, model).brokers[0]
    assert b.cause == "small requests" and b.predicted_idle_after is not None
    assert b.predicted_idle_after[0] > model.predict_idle(300, 300_000)[0]
    assert "cost model: network idle" in b.findings[0].summary
    # Clamped to the floor / cap; an explicit threshold wins.
    assert small_request_limit(T, _model(a=1e-4, b=1e-6))[0] == T.small_request_bytes_floor
    assert small_request_limit(T, _model(b=0.0))[0] == T.small_request_bytes_cap
    assert small_request_limit(DiagnoseThresholds(small_request_bytes=2048), model) == (2048, "thresholds")


def test_a_flat_network_fit_leaves_the_default_and_says_why() -> None:
    # Neither requests nor bytes cost the network threads in the fit: no break-even to take.
    flat = BrokerCostModel(network=_model(a=0.0, b=0.0).network, handler=_model().handler)
    small = _broker(produce_requests_per_s=300.0, bytes_in_per_s=300 * 1000.0)
    given, none = diagnose(_snap(small), T, flat), diagnose(_snap(small), T)
    assert given.small_request_source == none.small_request_source == "default"
    assert given.cost_model is not None and given.cost_model.break_even_request_bytes is None
    assert "the cost model's network fit charges neither requests nor bytes" in findings_text(given).plain
    assert "no cost model given" in findings_text(none).plain


def test_disk_flush() -> None:
    d = diagnose(_snap(_broker(log_flush_time_p99_ms=850.0, produce_local_p99_ms=400.0)), T)
    b = d.brokers[0]
    assert b.cause == "disk flush" and d.status == "warning"
    assert b.findings[0].summary == "slow disk: log flush p99 850 ms, produce local time p99 400 ms"


def test_handler_threads() -> None:
    d = diagnose(
        _snap(_broker(request_handler_idle_ratio=0.2, request_queue_size=40.0, request_queue_size_max=90.0)),
        T,
    )
    b = d.brokers[0]
    assert d.status == "critical" and b.cause == "handler threads"
    assert "handler idle 0.20, request queue 40.0 on average (max 90)" in b.findings[0].summary
    queued = diagnose(_snap(_broker(request_queue_size=12.0)), T)
    assert queued.status == "warning" and queued.brokers[0].cause == "handler threads"


def test_waiting_for_idle_handlers_is_cpu_or_pauses() -> None:
    d = diagnose(_snap(_broker(produce_request_queue_p99_ms=350.0, cpu_cores=0.4)), T)
    b = d.brokers[0]
    assert d.status == "warning" and b.cause == "CPU or GC pauses"
    assert b.findings[0].summary == (
        "produce requests wait 350 ms for a handler (p99) although the handlers are 0.95 idle: "
        "the broker is short of CPU or pausing (GC), broker JVM on 0.40 cores"
    )


def test_large_fetches_only_when_network_is_busy() -> None:
    fetchy = {"fetch_requests_per_s": 20.0, "bytes_out_per_s": 20 * 4e6, "bytes_in_per_s": 5e6}
    d = diagnose(_snap(_broker(network_idle_ratio=0.35, **fetchy)), T)
    assert d.brokers[0].cause == "large fetches" and d.status == "warning"
    assert "4.0 MB per fetch request, bytes out 16.0x bytes in" in d.brokers[0].findings[0].summary
    assert diagnose(_snap(_broker(**fetchy)), T).status == "healthy"


def test_network_busy_with_big_requests_is_network_bytes() -> None:
    d = diagnose(_snap(_broker(network_idle_ratio=0.28, bytes_in_per_s=30 * 1e6)), T)
    assert d.status == "critical" and d.brokers[0].cause == "network bytes"


def test_worst_broker_sets_status_and_headline() -> None:
    d = diagnose(
        _snap(
            _broker("1"),
            _broker("2", produce_requests_per_s=900.0, bytes_in_per_s=900 * 3000.0, network_idle_ratio=0.25),
        ),
        T,
    )
    assert d.status == "critical"
    assert d.headline.startswith("critical: broker(s) 2: network threads saturated by small produce requests")


def test_missing_idle_ratios_warn() -> None:
    d = diagnose(_snap(BrokerSnapshot(broker="7")), T)
    assert d.status == "warning" and d.brokers[0].cause == "no data"


def test_topics_flagged_small() -> None:
    topics = [
        TopicSnapshot(topic="logs", partition_appends_per_s=800.0, bytes_in_per_s=800 * 700.0),
        TopicSnapshot(topic="events", partition_appends_per_s=10.0, bytes_in_per_s=10 * 50_000.0),
    ]
    d = diagnose(_snap(_broker(), topics=topics), T)
    assert [(t.topic, t.small) for t in d.topics] == [("logs", True), ("events", False)]


def test_json_roundtrip() -> None:
    from tuner.model.diagnosis import Diagnosis

    d = diagnose(_snap(_broker(produce_requests_per_s=320.0, bytes_in_per_s=320 * 650.0)), T, _model())
    again = Diagnosis.model_validate_json(d.model_dump_json())
    assert again == d and again.exit_status is ExitStatus.WARNING


def test_thresholds_file(tmp_path: Path) -> None:
    ok = tmp_path / "t.yaml"
    ok.write_text("warning_idle: 0.4\nmin_requests_per_thread_s: 100\n")
    t = load_thresholds(ok)
    assert t.warning_idle == 0.4 and t.min_requests_per_thread_s == 100 and t.critical_idle == 0.3
    typo = tmp_path / "typo.yaml"
    typo.write_text("warning_idel: 0.4\n")
    with pytest.raises(BadInput, match='unknown key "warning_idel" \\(did you mean "warning_idle"\\?\\)'):
        load_thresholds(typo)
    upside = tmp_path / "upside.yaml"
    upside.write_text("warning_idle: 0.2\n")
    with pytest.raises(BadInput, match="warning_idle must be >= critical_idle"):
        load_thresholds(upside)


def test_snapshot_queries_come_from_the_catalog() -> None:
    q = snapshot_queries(300, 15)
    assert (
        q["produce_requests_per_s"]
        == 'sum by (broker)(rate(kafka_network_requests_total{request="Produce"}[300000ms]))'
    )
    assert q["network_idle_ratio"].startswith(
        "avg_over_time((avg by (broker)(kafka_network_processor_avg_idle_ratio))"
    )
    assert q["network_idle_ratio"].endswith("[300000ms:15000ms])")
    assert "topic" in q["topic.partition_appends_per_s"]
    assert "kafka_server_produce_requests_total" in q["partition_appends_per_s"]
