"""A baseline whose p99 is already past the SLO before any batching.

Measured on busy brokers (the case this tool is for) that p99 is mostly the brokers' queueing of
the baseline's many small requests: the model scales the service time to each setting's request
rate, so it reproduces the baseline's p99 for the baseline and finds batched settings inside the
SLO. Measured on idle brokers, fewer requests relieve nothing: when no setting fits, the refusal
says so instead of reading as a verdict on batching, and points at a live measurement."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.test_recommend_margin import FILEBEAT_LIKE, SLO
from tests.unit.test_recommend_margin import _record as margin_record
from tuner.core.errors import KbtError
from tuner.model.evidence import calibrate, own_share, traffic_of_record
from tuner.model.predict import DEFAULT_SERVICE_P99_MS, ClientCalibration, predict
from tuner.model.recommend import Request, recommend
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.store.record import RunRecord

PER_BROKER = 320.0  # the Filebeat-like baseline's produce requests/s on each broker
BATCHED = LibrdkafkaProfile(name="linger-800", linger_ms=800, partitioner="sticky", compression="zstd")


def _record(p99_ms: float, network_idle: float) -> RunRecord:
    return margin_record(FILEBEAT_LIKE, PER_BROKER, p99_ms, 1_700_000_000.0, network_idle)  # type: ignore[arg-type]


def _request(record: RunRecord) -> Request:
    return Request(
        workload=record.plan.workload, brokers=3, slo=SLO, clients=["librdkafka"], records=[record],
        baselines={"librdkafka": FILEBEAT_LIKE}, baseline=FILEBEAT_LIKE,
    )  # fmt: skip


def test_a_baseline_past_the_slo_on_idle_brokers_is_named_in_the_refusal() -> None:
    with pytest.raises(KbtError) as info:
        recommend(_request(_record(3000.0, network_idle=0.97)))
    message = info.value.message
    assert "no librdkafka setting meets p99 <= 1000 ms" in message, message
    assert "is past the SLO before any batching" in message and message.endswith("(measure one with --live)")
    assert "not busy enough for fewer requests to relieve it" in message


@pytest.mark.parametrize("network_idle", [0.3, 0.1, 0.0])
def test_busy_brokers_queueing_is_relieved_by_fewer_requests(network_idle: float) -> None:
    # The pressure loop's shape: the captured baseline replayed on a saturated lab measured a p99
    # of 2.75 s against a 1 s SLO; the model used to carry that into every setting and refuse.
    record = _record(2754.0, network_idle=network_idle)
    calibration = calibrate([record])
    today = predict(traffic_of_record(record), FILEBEAT_LIKE, calibration)
    assert today.p99_ms == pytest.approx(2754.0, rel=0.02)  # it reproduces today before it predicts

    rec = recommend(_request(record))
    (client,) = rec.clients
    predicted = client.predicted
    assert predicted.p99_ms <= 1000.0 * (1 - rec.slo_margin), predicted
    assert predicted.busiest_broker_requests_per_s < today.busiest_broker_requests_per_s / 3
    assert "past the SLO" not in " ".join(rec.notes)
    (load,) = [n for n in client.notes if n.startswith("service times measured on a busy broker")]
    assert f"{1 - network_idle:.0%} busy" in load and "ms at that load" in load, load


def test_more_requests_than_the_baseline_queue_longer() -> None:
    record = _record(800.0, network_idle=0.2)
    calib = calibrate([record]).of("librdkafka")
    assert calib.load_busy == pytest.approx(0.8)
    rate, today = calib.load_requests_per_s, calib.loaded_p99_ms
    assert calib.service_p99_ms == DEFAULT_SERVICE_P99_MS  # no calm run: the defaults stand unloaded
    assert calib.service_at(rate)[1] == pytest.approx(today)
    assert calib.service_at(rate / 10)[1] < today / 10
    assert calib.service_at(rate / 1000)[1] >= DEFAULT_SERVICE_P99_MS  # never below a round trip
    assert calib.service_at(rate * 2)[1] > today
    idle = calibrate([_record(800.0, network_idle=0.9)]).of("librdkafka")
    assert idle.load_busy == 0 and idle.service_at(1.0) == (idle.service_p50_ms, idle.service_p99_ms)


def test_only_the_runs_own_share_of_a_busy_broker_follows_the_setting() -> None:
    # Another client (or a group replayed beside it) sends half of the busiest broker's requests:
    # batching this one relieves only its half.
    record = _record(800.0, network_idle=0.2)
    alone = calibrate([record]).of("librdkafka")
    (broker, *_) = record.broker.brokers if record.broker else []
    shared_broker = broker.model_copy(update={"produce_requests_per_s": 2 * PER_BROKER})
    window = record.broker.model_copy(update={"brokers": [shared_broker]}) if record.broker else None
    shared = calibrate([record.model_copy(update={"broker": window})]).of("librdkafka")
    assert shared.load_share == pytest.approx(0.5) and alone.load_share == pytest.approx(1.0)
    fewer = alone.load_requests_per_s / 10
    assert alone.service_at(fewer)[1] < shared.service_at(fewer)[1] < shared.loaded_p99_ms


def test_calm_runs_give_the_unloaded_times_and_the_busy_baseline_its_own() -> None:
    # A batched run on a calm broker beside the saturated baseline: each setting's p99 is predicted
    # from its own load, the baseline's 25 s and the batched run's own p99 both reproduced (the calm
    # run used to set the service time of both: 31 ms predicted for a baseline measured at 66 s).
    baseline = _record(25_000.0, network_idle=0.003)
    batched = margin_record(BATCHED, 10.2, 850.0, 1_700_000_100.0, 0.97)
    calibration = calibrate([baseline, batched])
    calib = calibration.of("librdkafka")
    assert calib.runs == 2 and calib.loaded_p99_ms > 20_000 > 100 > calib.service_p99_ms
    for record, measured in ((baseline, 25_000.0), (batched, 850.0)):
        predicted = predict(traffic_of_record(record), record.plan.profile, calibration)
        assert predicted.p99_ms == pytest.approx(measured, rel=0.05), record.name


@settings(max_examples=200, deadline=None)
@given(
    busy=st.floats(0.5, 1.0),
    share=st.floats(0.0, 1.0),
    rate=st.floats(1.0, 1e6),
    unloaded=st.floats(0.5, 100.0),
    extra=st.floats(0.0, 1e6),
    a=st.floats(0.0, 1e7),
    b=st.floats(0.0, 1e7),
)
def test_service_time_grows_with_requests_between_unloaded_and_the_cap(
    busy: float, share: float, rate: float, unloaded: float, extra: float, a: float, b: float
) -> None:
    calib = ClientCalibration(
        service_p50_ms=unloaded, service_p99_ms=unloaded, loaded_p50_ms=unloaded + extra,
        loaded_p99_ms=unloaded + extra, load_busy=busy, load_share=share, load_requests_per_s=rate,
    )  # fmt: skip
    low, high = sorted((a, b))
    at_low, at_high = calib.service_at(low)[1], calib.service_at(high)[1]
    assert unloaded <= at_low <= at_high * (1 + 1e-9) + 1e-9
    assert calib.service_at(rate)[1] == pytest.approx(unloaded + extra, rel=1e-6)
    assert math.isfinite(at_high)


def test_the_clients_own_count_gives_its_share_where_it_keeps_one() -> None:
    # A client that counts its requests per broker (librdkafka, the Java producer) is measured by
    # its own count, once per request as the broker's counter: no topic counter needed, so a
    # multi-partition client beside other traffic gets its share too.
    record = _record(800.0, network_idle=0.2)
    assert record.broker is not None
    brokers = [
        b.model_copy(update={"produce_requests_per_s": 4 * PER_BROKER, "topic_produce_requests_per_s": None})
        for b in record.broker.brokers
    ]
    window = record.broker.model_copy(update={"brokers": brokers})
    own = int(PER_BROKER * record.client.window_s)
    client = record.client.model_copy(update={"produce_requests_by_broker": {b.broker: own for b in brokers}})
    counted = record.model_copy(update={"broker": window, "client": client})
    assert own_share(counted) == pytest.approx(0.25, rel=0.01)
    silent = record.client.model_copy(update={"produce_requests": 0})  # real Filebeat counts none
    uncounted = counted.model_copy(update={"client": silent})
    assert own_share(uncounted) == 1.0  # neither count tells it apart: all of it, as before
