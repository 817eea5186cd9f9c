"""Stress gates and stage verdicts: which stage held, which failed and why, the highest step held."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_stress_spec import SPEC
from tuner.driver.latency_hist import Latency, latency_ms, merged_ms
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.driver.stress.plan import StressPlan
from tuner.driver.stress.tally import StageTally
from tuner.driver.stress.verify import StressDelivery
from tuner.runner.stress.gates import describe, failed_gates
from tuner.runner.stress.records import (
    ProfileOutcome,
    RunContext,
    StageMeasure,
    StageOutcome,
    stage_record,
)
from tuner.spec.stress_load import load_stress
from tuner.store.environment import capture_environment
from tuner.store.figures import BrokerStats, BrokerWindow

T0 = 1_800_000_000.0


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    path = tmp_path / "s.yaml"
    path.write_text(SPEC)
    loaded = load_stress(path)
    plan = StressPlan(
        run_id="peak/current--x",
        stress="peak",
        profile_label="current",
        profile=loaded.spec.profiles["current"],
        workload=loaded.spec.topics_with_configs(),
        topics=["logs-s0-1"],
        bootstrap_servers="127.0.0.1:1",
        rate_per_producer=25,
        stages=loaded.stages,
        t0=T0,
        groups=loaded.spec.groups,
    )
    return RunContext(
        spec=loaded.spec,
        plan=plan,
        baseline_msgs_per_s=100,
        environment=capture_environment(1),
        workers=2,
        run_stamp="20270115T080000.000Z",
    )


def _broker(idle: float, queue: float) -> StageMeasure:
    stats = [
        BrokerStats(broker=str(b), network_idle_ratio=idle + b / 100, request_queue_size=queue - b)
        for b in (1, 2)
    ]
    return StageMeasure(broker=BrokerWindow(start=0, end=1, step_s=1, brokers=stats))


def _tally(latencies_ms: list[float], sent: int | None = None, failed: int = 0) -> StageTally:
    t = StageTally(
        sent=sent if sent is not None else len(latencies_ms), acked=len(latencies_ms), failed=failed
    )
    for ms in latencies_ms:
        us = int(ms * 1000)
        t.latency.add_us(us)
    t.bytes_acked = 300 * len(latencies_ms)
    return t


def _groups(ctx: RunContext, stage: int, rt_p99_first: float, rt_p99_second: float) -> dict[str, GroupTally]:
    rt = GroupTally()
    rt.half(stage, 0).e2e = Latency.of_us({int(rt_p99_first * 1000): 100})
    rt.half(stage, 0).records = 100
    rt.half(stage, 1).e2e = Latency.of_us({int(rt_p99_second * 1000): 100})
    rt.half(stage, 1).records = 100
    replay = GroupTally()
    replay.half(stage, 1).records = 500
    replay.half(stage, 1).age_s_sum = 500 * 21.0
    return {"rt": rt, "replay": replay}


def _ok_delivery(stage: int, acked: int, lost: int = 0) -> StressDelivery:
    lost_by_stage = {stage: lost} if lost else {}
    return StressDelivery(
        verified=True,
        acked=acked,
        consumed=acked - lost,
        lost_by_stage=lost_by_stage,
        acked_by_stage={stage: acked},
    )


def test_a_stage_within_every_gate_held(ctx: RunContext) -> None:
    stage = ctx.plan.stages[2]  # step2-x2
    record = stage_record(ctx, stage, _tally([20.0] * 100), _broker(0.6, 3), _groups(ctx, 2, 15, 40),
                          _ok_delivery(2, 100))  # fmt: skip
    step = record.stress
    assert step is not None and step.verdict == "held" and record.status == "ok"
    assert {c.gate for c in step.gates} == {"network_idle", "request_queue", "p99", "failed", "lost"}
    assert not failed_gates(step.gates)
    idle = next(c for c in step.gates if c.gate == "network_idle")
    assert idle.value == pytest.approx(0.61)  # the worst broker
    # HdrHistogram percentiles, 3 significant digits
    assert step.realtime_e2e_p99_ms(with_lagging=False) == pytest.approx(15, rel=1e-3)
    assert step.realtime_e2e_p99_ms(with_lagging=True) == pytest.approx(40, rel=1e-3)
    replay = next(c for c in step.consumers if c.group == "replay")
    assert replay.second_half.mean_age_s == 21.0 and replay.second_half.lagging_readers
    assert replay.first_half.records == 0 and not replay.first_half.lagging_readers
    assert step.offered_msgs_per_s == 200
    assert record.name == "current-02-step2-x2"
    assert record.run_id == "peak/current-02-step2-x2--20270115T080000.000Z"
    assert record.plan.workload.producers == 8 and record.client.producers == 8
    assert record.client.window_start == T0 + stage.start_s
    assert record.delivery.verified and record.delivery.acked == 100


def test_a_stage_reports_latency_as_the_engines_do(ctx: RunContext) -> None:
    """A stress stage's delivery latency is the same histogram-to-figures step as a sweep engine's
    (one home): 3 and 43 samples are counts where p99.9 by way of a scaled percentile came out
    as 99.90000000000002 or 99.89999999999999, not 99.9."""
    for ms in ([1.0, 2.0, 900.0], [float(i) for i in range(1, 44)]):
        tally = _tally(ms)
        figures = stage_record(ctx, ctx.plan.stages[2], tally, _broker(0.6, 3), {}, None).client
        assert figures is not None
        assert figures.delivery_latency_ms == latency_ms(tally.latency.hist)
        assert figures.delivery_latency_ms == merged_ms([tally.latency.to_wire()])
        assert figures.delivery_latency_ms.p999 == tally.p_ms(99.9) == pytest.approx(ms[-1], rel=1e-3)
        assert figures.delivery_latency_ms.count == len(ms)


@pytest.mark.parametrize(
    ("idle", "queue", "latencies", "sent", "failed", "expected"),
    [
        (0.2, 3, [20.0] * 100, None, 0, "network idle 0.21 < 0.3"),
        (0.6, 40, [20.0] * 100, None, 0, "request queue 39.0 > 20"),
        (0.6, 3, [20.0] * 90 + [4000.0] * 10, None, 0, "p99 4002 ms > 1500 ms"),  # 3 digits
        (0.6, 3, [20.0] * 90, 100, 0, "p99: 10 of 100 records not acked"),
        (0.6, 3, [20.0] * 100, 101, 1, "1 records failed delivery"),
    ],
)
def test_each_gate_fails_the_stage(
    ctx: RunContext,
    idle: float,
    queue: float,
    latencies: list[float],
    sent: int | None,
    failed: int,
    expected: str,
) -> None:
    stage = ctx.plan.stages[1]
    tally = _tally(latencies, sent, failed)
    record = stage_record(ctx, stage, tally, _broker(idle, queue), {}, _ok_delivery(1, len(latencies)))
    assert record.stress is not None and record.stress.verdict == "failed"
    assert record.status == "failed"
    assert any(expected in p for p in record.problems), record.problems


def test_lost_records_fail_any_stage(ctx: RunContext) -> None:
    prefill = ctx.plan.stages[0]
    record = stage_record(ctx, prefill, _tally([5.0] * 50), StageMeasure(), {}, _ok_delivery(0, 50, lost=2))
    assert record.stress is not None and record.stress.verdict == "not judged"
    assert record.status == "failed" and record.delivery.lost == 2
    assert "2 acked records lost" in record.problems


def test_no_broker_data_does_not_fail_but_says_so(ctx: RunContext) -> None:
    record = stage_record(
        ctx, ctx.plan.stages[1], _tally([20.0] * 10), StageMeasure(), {}, _ok_delivery(1, 10)
    )
    assert record.stress is not None and record.stress.verdict == "held"
    idle = next(c for c in record.stress.gates if c.gate == "network_idle")
    assert idle.value is None and idle.detail == "no broker measurement"


def test_interrupted_and_aborted_stages(ctx: RunContext) -> None:
    stage = ctx.plan.stages[1]
    record = stage_record(
        ctx, stage, _tally([20.0] * 10), _broker(0.6, 3), {}, None, verdict_override="interrupted"
    )
    assert record.stress is not None and record.stress.verdict == "interrupted"
    assert not record.delivery.verified and "delivery was not verified" in record.problems
    bad = stage_record(
        ctx, stage, _tally([20.0] * 10), _broker(0.1, 3), {}, None, verdict_override="interrupted"
    )
    assert bad.stress is not None and bad.stress.verdict == "failed"  # a gate failed before Ctrl-C
    aborted = stage_record(
        ctx, stage, _tally([20.0] * 10), _broker(0.6, 3), {}, _ok_delivery(1, 10), "aborted"
    )
    assert aborted.stress is not None and aborted.stress.verdict == "aborted"


def test_highest_step_held_stops_at_the_first_failure(ctx: RunContext) -> None:
    outcome = ProfileOutcome(label="current")
    verdicts = {0: None, 1: "held", 2: "held", 3: "failed", 4: "held", 5: "held"}
    for index, verdict in verdicts.items():
        stage = ctx.plan.stages[index]
        broker = _broker(0.6 if verdict != "failed" else 0.1, 3)
        record = stage_record(ctx, stage, _tally([20.0] * 10), broker, {}, _ok_delivery(index, 10))
        outcome.stages.append(StageOutcome(stage, record))
    best = outcome.highest_held
    assert best is not None and best.name == "step2-x2"
    assert outcome.spike_held is True


def test_unverified_delivery_is_a_failed_gate(ctx: RunContext) -> None:
    record = stage_record(ctx, ctx.plan.stages[1], _tally([20.0] * 10), StageMeasure(), {}, None)
    verified = next(c for c in record.stress.gates if c.gate == "verified") if record.stress else None
    assert verified is not None and describe(verified) == "delivery was not verified"


def test_a_late_load_generator_is_noted_not_judged(ctx: RunContext) -> None:
    stage = ctx.plan.stages[1]
    late = _tally([20.0] * 100)
    # p99 400 ms behind schedule (limit: send_lag_p99_ms, 150 ms)
    late.send_lag = Latency.of_us({5_000: 95, 400_000: 5})
    record = stage_record(ctx, stage, late, _broker(0.6, 3), {}, _ok_delivery(1, 100))
    assert record.stress is not None and record.stress.verdict == "held"  # a note, not a gate
    [note] = record.problems
    assert note.startswith("load generator behind schedule: send lag p99 400 ms")
    assert {c.gate for c in record.stress.gates} == {"network_idle", "request_queue", "p99", "failed", "lost"}
    on_time = _tally([20.0] * 100)
    on_time.send_lag = Latency.of_us({5_000: 99, 140_000: 1})
    record = stage_record(ctx, stage, on_time, _broker(0.6, 3), {}, _ok_delivery(1, 100))
    assert record.problems == []


def test_an_aborted_stage_covers_the_part_that_ran(ctx: RunContext) -> None:
    stage = ctx.plan.stages[2]  # step2-x2: 8 producers x 25 msgs/s, 20 s
    start = T0 + stage.start_s
    tally = _tally([20.0] * 1200)  # 6 s of 200 msgs/s before the ramp stopped
    record = stage_record(ctx, stage, tally, _broker(0.6, 3), {}, _ok_delivery(2, 1200), "aborted", start + 6)
    assert record.stress is not None and record.stress.verdict == "aborted"
    assert record.stress.end == record.client.window_end == start + 6
    assert record.client.offered_records == 1200 and record.client.records_per_s == pytest.approx(200)
    whole = stage_record(ctx, stage, tally, _broker(0.6, 3), {}, _ok_delivery(2, 1200), until=start + 60)
    assert whole.client.window_end == T0 + stage.end_s  # `until` after the stage's end changes nothing
