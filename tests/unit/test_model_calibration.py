"""Service-latency calibration: an overloaded run says how overload queues requests, not how a
batched setting will fare, so it calibrates only when no calm run of the client kind exists."""

from __future__ import annotations

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.model.evidence import calibrate, saturated
from tuner.model.predict import DEFAULT_SERVICE_P99_MS
from tuner.store import RunRecord
from tuner.store.figures import BrokerStats


def _run(plan_index: int, handler_idle: float, p99_ms: float, created: float) -> RunRecord:
    plan = qunar_plans()[plan_index]  # 0: filebeat-like (linger 0), 2: batched-zstd (linger 500 ms)
    brokers = [
        BrokerStats(broker=str(b), produce_requests_per_s=100.0, messages_in_per_s=320.0,
                    request_handler_idle_ratio=handler_idle)
        for b in (1, 2, 3)
    ]  # fmt: skip
    return record_with_brokers(brokers, created, plan=plan, p99_ms=p99_ms)


def test_an_overloaded_run_does_not_set_the_unloaded_service_time_while_a_calm_one_exists() -> None:
    overloaded = _run(0, handler_idle=0.006, p99_ms=50_987.0, created=1000.0)  # the broker drowned
    calm = _run(2, handler_idle=0.835, p99_ms=697.0, created=2000.0)
    assert saturated(overloaded) and not saturated(calm)
    both = calibrate([overloaded, calm]).of("librdkafka")
    alone = calibrate([calm]).of("librdkafka")
    assert both.service_p99_ms == alone.service_p99_ms and alone.loaded_p99_ms == 0
    # with only the calm run, the service time is its p99 less the simulated linger wait: ~200 ms
    assert 100 < alone.service_p99_ms < 400
    # the overloaded run's p99 is the service time at its own load, apart (ClientCalibration.service_at)
    assert both.runs == 2 and both.loaded_p99_ms > 40_000 and both.load_busy > 0.99


def test_an_overloaded_run_calibrates_at_its_load_when_it_is_all_there_is() -> None:
    overloaded = _run(0, handler_idle=0.006, p99_ms=50_987.0, created=1000.0)
    only = calibrate([overloaded]).of("librdkafka")
    assert only.runs == 1 and only.loaded_p99_ms > 40_000 > DEFAULT_SERVICE_P99_MS
    assert only.service_p99_ms == DEFAULT_SERVICE_P99_MS  # unloaded: a round trip, not the queue
    assert only.service_at(only.load_requests_per_s)[1] == only.loaded_p99_ms


def test_a_run_whose_brokers_queued_requests_does_not_calibrate_beside_a_calm_one() -> None:
    """make demo on a loaded host: the linger-0 baseline's handlers were 0.64-0.80 idle, but each
    broker held ~11 requests in its queue and the p99 was 4.8 s; blended into the service latency
    it pushed every batched setting past a 1 s SLO."""
    baseline = _run(0, handler_idle=0.7, p99_ms=4776.0, created=1000.0)
    queued = baseline.model_copy(
        update={
            "broker": baseline.broker.model_copy(
                update={
                    "brokers": [
                        b.model_copy(update={"request_queue_size": 11.25}) for b in baseline.broker.brokers
                    ]
                }
            )
        }
    )
    calm = _run(2, handler_idle=0.99, p99_ms=507.0, created=2000.0)
    assert not saturated(baseline) and saturated(queued) and not saturated(calm)
    assert calibrate([queued, calm]).of("librdkafka") == calibrate([calm]).of("librdkafka")
    assert calibrate([baseline, calm]).of("librdkafka").service_p99_ms > 1000  # blended, before


def test_a_client_that_could_not_keep_up_counts_as_saturated() -> None:
    calm = _run(2, handler_idle=0.9, p99_ms=600.0, created=1000.0)
    short = calm.model_copy(
        update={"client": calm.client.model_copy(update={"offered_records": 48_000, "records_sent": 40_000})}
    )
    kept_up = calm.model_copy(
        update={"client": calm.client.model_copy(update={"offered_records": 48_000, "records_sent": 47_900})}
    )
    assert saturated(short) and not saturated(kept_up)
