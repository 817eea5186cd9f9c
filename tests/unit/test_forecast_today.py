"""A forecast reproduces today before it predicts a peak (issue 39 item 6): the model's figures for
today's traffic against what the brokers measured, calibrated or refused; poor fits warned; brokers
needed bounded by the replication factor and by partition placement."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.rendered import as_text
from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root
from tuner.model.cost import BrokerCostModel, LinearFit
from tuner.model.diagnosis import Diagnosis, diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.forecast import forecast
from tuner.model.forecast_baseline import TopicPlacement, diagnosis_baselines, record_baseline
from tuner.model.forecast_today import TOLERANCE, Baseline, BrokerToday, ForecastRefused, busiest_traffic
from tuner.model.queueing import QueueModel
from tuner.render.diagnosis_forecast import forecast_view
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.figures import BrokerStats
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot

FIXTURE = repo_root() / "tests" / "unit" / "data" / "forecast" / "saturated-diagnosis.json"


def _model(
    a: float = 4e-4, r2: float = 0.95, c: float = 0.0, ha: float = 1e-4, hr2: float = 0.95
) -> BrokerCostModel:
    return BrokerCostModel(
        network=LinearFit(requests_coef=a, bytes_coef=0.0, intercept=c, r2=r2, n=9, rmse=0.01),
        handler=LinearFit(requests_coef=ha, bytes_coef=0.0, r2=hr2, n=9, rmse=0.01),
    )


def _diagnosis(idles: list[float], requests: float = 1000.0, handler: float | None = 0.9) -> Diagnosis:
    brokers = [
        BrokerSnapshot(
            broker=str(i + 1),
            network_threads=3,
            produce_requests_per_s=requests,
            bytes_in_per_s=requests * 650.0,
            network_idle_ratio=idle,
            request_handler_idle_ratio=handler,
            request_queue_size=0.2,
        )
        for i, idle in enumerate(idles)
    ]
    snap = ClusterSnapshot(prometheus="http://p", end=1, window_s=300, step_s=15, brokers=brokers)
    return diagnose(snap, DiagnoseThresholds())


def test_measured_idle_03_below_the_model_is_calibrated_with_a_good_fit() -> None:
    # 1000 req/s x 4e-4: the model says network idle 0.6 today; the brokers measured 0.3.
    f = forecast(_model(), diagnosis_baselines(_diagnosis([0.3, 0.3, 0.3])), peak=2.0, require_measured=True)
    check = f.today[0]
    net = next(p for p in check.pools if p.pool == "network")
    assert net.model_idle - net.measured_idle == pytest.approx(0.3)
    assert net.action == "calibrated" and net.factor == pytest.approx(0.7 / 0.4, rel=1e-6)
    cur, rec = f.row("current"), f.row("recommended")
    assert cur is not None and rec is not None
    assert cur.today_network_idle == pytest.approx(0.3, abs=1e-9) and cur.today_network_idle <= 0.3
    assert cur.network_idle == pytest.approx(1 - 2 * 0.7, abs=1e-9) or cur.network_idle == 0.0
    assert cur.calibration.network_factor == pytest.approx(1.75)
    # the recommended settings nobody ran take the measured current settings' factor, and say so
    assert rec.calibration.network_factor == cur.calibration.network_factor
    assert rec.calibration.from_label == "current: live cluster"
    text = as_text(forecast_view(f))
    assert "calibrated, the model's network cost per request and per byte x1.75" in text
    assert "model 0.600, lowest measured 0.300 (broker 1)" in text
    assert "calibrated as current: live cluster" in text


def test_measured_idle_03_below_the_model_on_a_poor_fit_is_refused_in_one_line() -> None:
    with pytest.raises(ForecastRefused) as err:
        forecast(_model(r2=0.03), diagnosis_baselines(_diagnosis([0.3, 0.35, 0.4])), peak=3.0)
    message = err.value.message
    assert "\n" not in message and err.value.status == ExitStatus.REFUSED == 6
    assert "network idle 0.600" in message and "broker 1 measured 0.300" in message
    assert "R^2 0.03 < 0.5" in message and "--cost-model" in message


def test_a_pessimistic_model_within_the_tolerance_stands_and_past_it_is_calibrated() -> None:
    within = forecast(_model(a=4.5e-4), diagnosis_baselines(_diagnosis([0.6, 0.7, 0.7])), peak=1.0)
    net = within.today[0].pools[0]
    assert (net.action, net.factor) == (
        "reproduced",
        1.0,
    ) and net.model_idle - net.measured_idle == pytest.approx(-0.05)
    assert within.rows[0].today_network_idle == pytest.approx(0.55)
    past = forecast(_model(a=7e-4), diagnosis_baselines(_diagnosis([0.6, 0.7, 0.7])), peak=1.0)
    net = past.today[0].pools[0]
    assert net.action == "calibrated" and net.factor == pytest.approx(0.4 / 0.7, rel=1e-6)
    assert past.rows[0].today_network_idle == pytest.approx(0.6, abs=1e-9)


def test_a_small_optimism_is_removed_even_on_a_poor_fit_and_the_fit_is_warned_about() -> None:
    f = forecast(_model(a=3.9e-4, r2=0.2), diagnosis_baselines(_diagnosis([0.6, 0.65, 0.7])), peak=1.0)
    net = f.today[0].pools[0]
    assert net.action == "calibrated" and 0 < net.model_idle - net.measured_idle <= TOLERANCE
    assert f.rows[0].today_network_idle <= 0.6
    assert f.warnings == [
        "the cost model's network fit is poor: R^2 0.20 < 0.5 over 9 broker windows; its cost per request, "
        "which the peak extrapolates, is mostly noise"
    ]
    assert "warning: the cost model's network fit is poor: R^2 0.20" in as_text(forecast_view(f))


def test_nothing_measured_is_refused_and_nothing_to_scale_is_an_offset() -> None:
    bare = _diagnosis([0.5, 0.5, 0.5], handler=None).snapshot
    blind = bare.model_copy(
        update={"brokers": [b.model_copy(update={"network_idle_ratio": None}) for b in bare.brokers]}
    )
    bases = diagnosis_baselines(diagnose(blind, DiagnoseThresholds()))
    with pytest.raises(ForecastRefused, match="measured no network or handler idle"):
        forecast(_model(), bases, peak=2.0, require_measured=True)
    assert forecast(_model(), bases, peak=2.0).today == []  # a model-only caller may go on
    # the fitted fixed share alone (0.8 busy) is more than the brokers measured (0.5 busy): no factor
    # on the traffic's cost reaches 0.5, so the difference is taken off the fixed share, and said
    f = forecast(_model(a=1e-5, c=0.8), diagnosis_baselines(_diagnosis([0.5, 0.5, 0.5])), peak=2.0)
    net = f.today[0].pools[0]
    assert (net.action, net.factor) == ("calibrated", 1.0) and net.offset == pytest.approx(0.19 - 0.5)
    assert f.rows[0].today_network_idle == pytest.approx(0.5)
    assert "fixed network busy share -0.310" in as_text(forecast_view(f))
    # an idle cluster measured busier than the model: no traffic to scale, the fixed share grows
    quiet = forecast(_model(c=0.05), diagnosis_baselines(_diagnosis([0.8, 0.9, 0.9], requests=0.0)), peak=2.0)
    assert quiet.today[0].pools[0].offset == pytest.approx(0.15)
    assert quiet.rows[0].today_network_idle == pytest.approx(0.8) and quiet.rows[0].network_idle <= 0.8


def test_the_request_queue_is_compared_where_measured() -> None:
    d = _diagnosis([0.3, 0.4, 0.5])
    queued = d.snapshot.model_copy(
        update={
            "brokers": [
                d.snapshot.brokers[0].model_copy(update={"request_queue_size": 9.0}),
                *d.snapshot.brokers[1:],
            ]
        }
    )
    f = forecast(_model(), diagnosis_baselines(diagnose(queued, DiagnoseThresholds())), peak=1.0)
    check = f.today[0]
    assert [b.request_queue_measured for b in check.brokers] == [9.0, 0.2, 0.2]
    assert check.brokers[0].request_queue_model is None  # a linear model has no queue
    assert any("broker 1 held 9.0 produce requests waiting" in n for n in check.notes)


def test_the_issue_fixture_is_refused_where_it_printed_idle_0_98() -> None:
    """The committed saturated diagnosis (network idle 0.21 / 0.28 / 0.41) with the demo's lab cost model
    shape (network R^2 0.03): the forecast that said "net idle today 0.917" refuses."""
    d = Diagnosis.model_validate(json.loads(FIXTURE.read_text(encoding="utf-8")))
    assert [b.network_idle_ratio for b in d.snapshot.brokers] == [0.21, 0.28, 0.41]
    lab = _model(a=2.005e-5, c=0.03354, r2=0.029, ha=1.092e-3, hr2=0.73)
    with pytest.raises(ForecastRefused, match=r"broker 1 measured 0\.210 .*R\^2 0\.03"):
        forecast(lab, diagnosis_baselines(d), peak=3.0)


def test_the_issue_fixture_with_a_good_fit_is_calibrated_to_its_busiest_broker() -> None:
    """docs/benchmarks.md's second case: the same saturated diagnosis, a cost model of R^2 0.90."""
    d = Diagnosis.model_validate(json.loads(FIXTURE.read_text(encoding="utf-8")))
    good = BrokerCostModel.model_validate_json(FIXTURE.with_name("cost-model-good-fit.json").read_text())
    f = forecast(good, diagnosis_baselines(d), peak=3.0, require_measured=True)
    net, hnd = f.today[0].pools
    assert (net.broker, net.model_idle, net.action) == ("1", pytest.approx(0.735), "calibrated")
    assert net.factor == pytest.approx((1 - 0.21 - 0.02) / (2450 * 1e-4), rel=1e-6)  # x3.14
    assert hnd.factor == pytest.approx(0.54 / 0.49, rel=1e-6)
    cur, rec = f.rows
    assert cur.today_network_idle == pytest.approx(0.21) and cur.network_idle == 0.0
    assert (cur.brokers_needed, rec.brokers_needed, rec.limited_by) == (33, 3, "replication")
    assert f.warnings == []


# ---- replication factor and placement ---------------------------------------------------------


def test_brokers_needed_never_fall_below_the_replication_factor() -> None:
    light = _diagnosis([0.95, 0.95, 0.95], requests=10.0, handler=0.999)
    f = forecast(_model(a=4e-4, c=0.04), diagnosis_baselines(light), peak=3.0)
    row = f.row("recommended")
    assert row is not None and row.brokers_needed_by_load == 1
    assert (row.brokers_needed, row.limited_by) == (3, "replication")
    assert any("replication factor 3: assumed" in a and "--replication-factor" in a for a in f.assumptions)
    given_rf = forecast(_model(a=4e-4, c=0.04), diagnosis_baselines(light, replication_factor=2), peak=3.0)
    assert given_rf.rows[1].brokers_needed == 2
    assert any("replication factor 2: given" in a for a in given_rf.assumptions)
    one = _diagnosis([0.95], requests=10.0)  # a one-broker cluster cannot hold more than one replica
    assert diagnosis_baselines(one)[0].min_brokers == 1
    text = as_text(forecast_view(f))
    assert "3 (replication factor; the load alone 1)" in text


def test_a_live_clusters_metadata_gives_replication_factor_and_the_busiest_brokers_partitions() -> None:
    d = _diagnosis([0.5, 0.6, 0.7])
    meta = TopicPlacement(
        replication_factor=2, partitions=6, leaders={"1": 3, "2": 2, "3": 1}, source="prod's metadata"
    )
    cur, rec = diagnosis_baselines(d, placement=meta)
    assert (cur.min_brokers, cur.partitions, cur.busiest_leaders) == (2, 6, 3)
    assert rec.min_brokers == 2 and rec.partitions == 6
    assert cur.min_brokers_from == "replication factor 2: the largest in prod's metadata"
    assert "broker 1 (the busiest) leads 3 of them" in cur.placement_from
    # the flag wins over the metadata; past 9 brokers the busiest one keeps one of its 3 partitions
    assert diagnosis_baselines(d, replication_factor=3, placement=meta)[0].min_brokers == 3
    assert busiest_traffic(cur, 1.0, 6)[0] == pytest.approx(500.0)
    assert busiest_traffic(cur, 1.0, 12)[0] == pytest.approx(1000.0 / 3)
    assert busiest_traffic(cur, 1.0, 30)[0] == pytest.approx(1000.0 / 3)


def test_a_runs_workload_gives_its_replication_factor_and_partitions() -> None:
    plan = qunar_plans()[0]
    stats = [
        BrokerStats(broker=str(i), produce_requests_per_s=r, topic_produce_requests_per_s=r,
                    bytes_in_per_s=5e5, network_idle_ratio=0.9, request_handler_idle_ratio=0.9)
        for i, r in ((1, 300.0), (2, 330.0), (3, 280.0))
    ]  # fmt: skip
    base = record_baseline(record_with_brokers(stats, 1_700_000_000.0, plan), "current")
    topics = plan.workload.topics
    assert base.min_brokers == max(t.replication_factor for t in topics)
    assert base.partitions == sum(t.partitions for t in topics)
    assert [b.network_idle for b in base.today] == [0.9, 0.9, 0.9]
    assert base.partitions_per_request == 1.0  # librdkafka: one partition per request
    assert f"workload {plan.workload.name}" in base.placement_from


def _base(ppr: float = 1.0, partitions: int | None = None, leaders: int | None = None) -> Baseline:
    return Baseline(
        label="current", role="current", brokers=3, requests_per_s=3000.0, bytes_per_s=3e6,
        partitions_per_request=ppr, partitions=partitions, busiest_leaders=leaders,
    )  # fmt: skip


def test_multi_partition_requests_do_not_thin_out_per_broker_as_brokers_are_added() -> None:
    # a request per producer flush per broker: 3 partition batches each on 3 brokers today
    multi = _base(ppr=3.0)
    assert busiest_traffic(multi, 1.0, 3) == pytest.approx((1000.0, 1e6))
    assert busiest_traffic(multi, 1.0, 9)[0] == pytest.approx(1000.0)  # one partition each by now
    assert busiest_traffic(multi, 1.0, 18)[0] == pytest.approx(500.0)
    assert busiest_traffic(multi, 1.0, 1)[0] == pytest.approx(1000.0)  # fewer brokers: bigger requests
    assert busiest_traffic(multi, 1.0, 9)[1] == pytest.approx(1e6 / 3)  # the bytes do spread
    single = _base()
    assert busiest_traffic(single, 1.0, 9)[0] == pytest.approx(1000.0 / 3)
    assert busiest_traffic(single, 1.0, 1)[0] == pytest.approx(3000.0)


def test_the_busiest_broker_keeps_its_share_of_the_partitions() -> None:
    # 6 partitions, 2 on the busiest broker: on 12 brokers it still leads one, half its load today
    placed = _base(partitions=6, leaders=2)
    assert busiest_traffic(placed, 1.0, 12)[0] == pytest.approx(500.0)
    assert busiest_traffic(placed, 1.0, 6)[0] == pytest.approx(500.0)
    assert busiest_traffic(placed, 1.0, 3)[0] == pytest.approx(1000.0)
    # a load one partition cannot carry: no broker count helps
    f = forecast(
        _model(a=4e-4), [placed.model_copy(update={"partitions": 3, "busiest_leaders": 1})], peak=3.0
    )
    assert (f.rows[0].brokers_needed, f.rows[0].limited_by) == (None, "placement")
    assert "unreachable (placement" in as_text(forecast_view(f))


# ---- acceptance: a saturated cluster's forecast never shows more headroom than measured ------------


_IDLE = st.floats(0.0, 1.0)
_FIT = st.builds(
    LinearFit,
    requests_coef=st.floats(0.0, 2e-3),
    bytes_coef=st.floats(0.0, 2e-7),
    intercept=st.floats(0.0, 0.6),
    r2=st.floats(0.0, 1.0),
    n=st.just(9),
    rmse=st.just(0.01),
)

_QUEUE = st.builds(
    QueueModel,
    service_rate_per_s=st.floats(50.0, 5000.0),
    queue_cap=st.integers(1, 64),  # the lab's 16 and the knee's shape; 500 only makes it slower
    service_scv=st.floats(0.0, 1.0),
    network_threads=st.integers(1, 8),
    network_base_busy=st.floats(0.0, 0.5),
    network_s_per_request=st.floats(0.0, 1e-3),
    blocked_cap=st.floats(0.1, 1.0),
)


@settings(deadline=None, max_examples=100)
@given(
    brokers=st.lists(
        st.tuples(st.floats(0.0, 5000.0), st.floats(0.0, 5e6), _IDLE, st.one_of(st.none(), _IDLE)),
        min_size=1,
        max_size=5,
    ),
    saturated=st.floats(0.0, THRESHOLDS.network_idle_critical, exclude_max=True),
    network=_FIT,
    handler=_FIT,
    queue=st.one_of(st.none(), _QUEUE),
    peak=st.floats(1.0, 10.0),
)
def test_a_saturated_clusters_forecast_never_shows_more_headroom_than_measured(
    brokers: list[tuple[float, float, float, float | None]],
    saturated: float,
    network: LinearFit,
    handler: LinearFit,
    queue: QueueModel | None,
    peak: float,
) -> None:
    today = [
        BrokerToday(broker=str(i), requests_per_s=r, bytes_per_s=b, network_idle=net, handler_idle=hnd)
        for i, (r, b, net, hnd) in enumerate(brokers)
    ]
    today[0] = today[0].model_copy(update={"network_idle": saturated})  # the saturated broker
    reqs = [t.requests_per_s for t in today]
    mean = sum(reqs) / len(reqs)
    base = Baseline(
        label="current", role="current", brokers=len(today), requests_per_s=sum(reqs),
        bytes_per_s=sum(t.bytes_per_s for t in today), skew=max(reqs) / mean if mean > 0 else 1.0,
        today=today,
    )  # fmt: skip
    try:
        model = BrokerCostModel(network=network, handler=handler, queue=queue)
        f = forecast(model, [base], peak, require_measured=True)
    except ForecastRefused as refused:
        assert "\n" not in refused.message and refused.message.startswith("forecast refused: ")
        return
    row = f.rows[0]
    lowest_net = min(t.network_idle for t in today if t.network_idle is not None)
    assert row.today_network_idle <= lowest_net + 1e-9
    assert row.network_idle <= row.today_network_idle + 1e-9  # the peak is no lighter than today
    measured_hnd = [t.handler_idle for t in today if t.handler_idle is not None]
    if measured_hnd:
        assert row.today_handler_idle <= min(measured_hnd) + 1e-9
    # below the idle it must keep on today's brokers: more brokers, or none is enough
    assert row.brokers_needed is None or row.brokers_needed > base.brokers
    assert math.isfinite(row.calibration.network_factor)
