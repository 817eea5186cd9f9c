"""A stress profile of a kind locust does not drive: which profiles go through their engine, what a
stage runs, how a stage run is judged against the gates, what the spec refuses."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.unit.test_stress_spec import SPEC
from tuner.core.errors import BadInput
from tuner.driver.latency_hist import Latency
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.render.dry_run import stress_driver_lines, stress_drivers
from tuner.runner.lifecycle import Figures, Run, build_record, new_ids
from tuner.runner.stress.engine_stages import EngineStages, StageGates, StageParts, refuse_remote_workers
from tuner.runner.stress.gates import ProducerFigures
from tuner.spec.stress_load import LoadedStress, load_stress
from tuner.spec.stress_spec import Stage
from tuner.spec.stress_stage import engine_stage_plan, stage_producers, stage_run_plan
from tuner.spec.sweep import RunPlan
from tuner.store.environment import capture_environment
from tuner.store.figures import BrokerStats, BrokerWindow, ClientResult, DeliveryResult, LatencyMs
from tuner.store.record import RunRecord

T0 = 1_800_000_000.0
# The shared spec with a Java profile beside the librdkafka ones, and no consumer groups.
ENGINE_SPEC = SPEC.replace(
    "  recommended: {name: batched, linger_ms: 50, compression: lz4}",
    "  recommended: {name: batched, linger_ms: 50, compression: lz4}\n"
    "  java: {name: java-batched, client: java, linger_ms: 20, compression: lz4}",
).replace(
    "consumer_groups:\n  - {name: rt, mode: realtime}\n  - {name: replay, mode: lagging, lag_s: 20}",
    "consumer_groups: []",
)


def _loaded(tmp_path: Path, text: str = ENGINE_SPEC) -> LoadedStress:
    path = tmp_path / "stress.yaml"
    path.write_text(text)
    return load_stress(path)


def _client(p99: float, sent: int = 500, acked: int = 500, failed: int = 0) -> ClientResult:
    return ClientResult(
        engine="java",
        producers=4,
        processes=1,
        started_at=T0,
        window_start=T0 + 2,
        window_end=T0 + 22,
        finished_at=T0 + 23,
        records_sent=sent,
        records_acked=acked,
        records_failed=failed,
        delivery_latency_ms=LatencyMs(count=acked, p99=p99),
    )


def _broker(idle: float) -> BrokerWindow:
    stats = [BrokerStats(broker="1", network_idle_ratio=idle, request_queue_size=1.0)]
    return BrokerWindow(start=T0 + 2, end=T0 + 22, step_s=1, brokers=stats)


def _finish(loaded: LoadedStress, stage_name: str, figures: Figures) -> tuple[StageGates, dict[str, Any]]:
    stage = next(s for s in loaded.stages if s.name == stage_name)
    plan = stage_run_plan(loaded.spec, "java", loaded.spec.workload, stage, 25.0, stage_producers(stage), 1)
    policy = StageGates(loaded, "java", stage, None)
    run = Run(plan, new_ids("peak", plan.name, T0), ["kbt-logs-r1-x"], cast(Any, None), [])
    return policy, policy.finish(run, figures, {"status": "ok", "problems": []})


def test_only_librdkafka_goes_to_locust(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    drivers = stress_drivers(loaded, ["current", "java"])
    assert drivers == {"current": "locust", "java": "engine"}
    lines = stress_driver_lines(loaded, ["current", "java"])
    assert lines[1].startswith("profile java: client java, each stage a run of its own engine")
    assert all(len(line) <= 100 for line in lines)


def test_a_stage_runs_its_producers_at_the_baselines_rate(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    by_name = {s.name: s for s in loaded.stages}
    step = by_name["step3-x3"]
    plan = stage_run_plan(loaded.spec, "java", loaded.spec.workload, step, 25.0, stage_producers(step), 2)
    assert (plan.workload.producers, plan.workload.rate_per_producer) == (12, 25.0)
    assert plan.workload.duration_s == step.duration_s
    assert plan.workload.warmup_s == loaded.spec.shape.settle_s
    assert plan.profile.client == "java" and plan.slo.p99_ms == 1500
    # A ramp down (12 -> 4 producers) runs at its mean.
    ramp = next(s for s in loaded.stages if s.kind == "ramp_down")
    assert (ramp.users, ramp.users_end) == (12, 4)
    assert stage_producers(ramp) == 8


def test_a_stage_run_within_the_gates_holds(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    delivery = DeliveryResult(acked=500, consumed=500, verified=True)
    policy, fields = _finish(loaded, "step2-x2", Figures(_client(900.0), delivery, _broker(0.8)))
    step = fields["stress"]
    assert step.verdict == "held" and fields["status"] == "ok" and fields["problems"] == []
    assert {c.gate for c in policy.checks} == {"network_idle", "request_queue", "p99", "failed", "lost"}
    assert step.offered_msgs_per_s == 8 * 25.0
    assert (step.start, step.end, step.t0) == (T0 + 2, T0 + 22, T0)


@pytest.mark.parametrize(
    ("client", "delivery", "idle", "failing"),
    [
        (_client(2000.0), DeliveryResult(acked=500, consumed=500, verified=True), 0.8, "p99"),
        (_client(900.0), DeliveryResult(acked=500, consumed=500, verified=True), 0.1, "network_idle"),
        (_client(900.0, failed=3), DeliveryResult(acked=497, consumed=497, verified=True), 0.8, "failed"),
        (_client(900.0), DeliveryResult(acked=500, consumed=498, lost=2, verified=True), 0.8, "lost"),
        (_client(900.0), DeliveryResult(acked=500, verified=False), 0.8, "verified"),
        # records whose outcome the engine never learned: the p99 is above every ack
        (
            _client(900.0),
            DeliveryResult(acked=490, consumed=490, indeterminate=10, verified=True),
            0.8,
            "p99",
        ),
    ],
)
def test_a_stage_run_fails_on_the_gate_it_broke(
    tmp_path: Path, client: ClientResult, delivery: DeliveryResult, idle: float, failing: str
) -> None:
    loaded = _loaded(tmp_path)
    policy, fields = _finish(loaded, "step1-x1", Figures(client, delivery, _broker(idle)))
    assert fields["stress"].verdict == "failed" and fields["status"] == "failed"
    assert [c.gate for c in policy.checks if not c.passed] == [failing]
    assert len(fields["problems"]) == 1


def test_an_unjudged_stage_is_judged_on_delivery_alone(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    delivery = DeliveryResult(acked=500, consumed=500, verified=True)
    policy, fields = _finish(loaded, "prefill", Figures(_client(9000.0), delivery, _broker(0.01)))
    assert fields["stress"].verdict == "not judged" and fields["status"] == "ok"
    assert [c.gate for c in policy.checks] == ["lost"]


def test_producer_figures_of_a_run() -> None:
    delivery = DeliveryResult(acked=500, failed=2, indeterminate=0, verified=True)
    assert ProducerFigures.of_run(_client(12.0, failed=0), delivery) == ProducerFigures(500, 0, 2, 12.0)


def test_lagging_groups_need_locust(tmp_path: Path) -> None:
    text = SPEC.replace(
        "  recommended: {name: batched, linger_ms: 50, compression: lz4}",
        "  recommended: {name: fb, client: filebeat}",
    )
    with pytest.raises(
        BadInput, match=r"lagging consumer groups \(replay\) read beside librdkafka profiles only"
    ):
        _loaded(tmp_path, text)
    # real-time groups read beside it
    realtime = text.replace("  - {name: replay, mode: lagging, lag_s: 20}\n", "")
    assert [g.mode for g in _loaded(tmp_path, realtime).spec.groups] == ["realtime"]


def test_real_time_readers_are_judged_on_the_whole_stage(tmp_path: Path) -> None:
    text = ENGINE_SPEC.replace("consumer_groups: []", "consumer_groups: [{name: rt, mode: realtime}]")
    loaded = _loaded(tmp_path, text.replace("p99_ms: 1500}", "p99_ms: 1500, e2e_p99_ms: 800}"))
    delivery = DeliveryResult(acked=500, consumed=500, verified=True)
    for e2e_ms, verdict in ((300, "held"), (2000, "failed")):
        stage = next(s for s in loaded.stages if s.name == "step1-x1")
        plan = stage_run_plan(loaded.spec, "java", loaded.spec.workload, stage, 25.0, 4, 1)
        policy = StageGates(loaded, "java", stage, None)
        tally = GroupTally()
        tally.half(stage.index, 0).e2e = Latency.of_us({e2e_ms * 1000: 100})
        tally.half(stage.index, 0).records = 100
        policy.tallies = {"rt": tally}
        run = Run(plan, new_ids("peak", plan.name, T0), ["kbt-logs-r1-x"], cast(Any, None), [])
        fields = policy.finish(
            run, Figures(_client(500.0), delivery, _broker(0.8)), {"status": "ok", "problems": []}
        )
        step = fields["stress"]
        assert step.verdict == verdict, step.gates
        assert step.realtime_e2e_p99_ms(with_lagging=False) == pytest.approx(e2e_ms, rel=0.01)
        (reader,) = step.consumers
        assert (reader.whole.records, reader.first_half.records, reader.second_half.records) == (100, 0, 0)


def test_remote_workers_are_locusts(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    refuse_remote_workers(loaded, ["current", "recommended"], 2)  # librdkafka alone: fine
    refuse_remote_workers(loaded, ["java"], 0)
    with pytest.raises(BadInput, match="--remote-workers: profile java"):
        refuse_remote_workers(loaded, ["current", "java"], 1)


def test_the_plan_an_engine_stage_runs(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    ramp = next(s for s in loaded.stages if s.kind == "ramp_down")
    plan = engine_stage_plan(loaded.spec, "java", ramp, loaded.baseline_msgs_per_s)
    assert plan.workload.producers == 8 and plan.workload.rate_per_producer == 25.0
    assert plan.workload.topics[0].configs["remote.storage.enable"] == "true"  # the spec's topic configs


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a sweep's bound on producers: the third step's 3 x 200
        ("  producers: 4\n", "  producers: 200\n", "stage step3-x3 needs 600 producers; client java runs"),
        # a run lasts a second at least
        (
            "spike: {multiplier: 4, duration_s: 8}",
            "spike: {multiplier: 4, duration_s: 0.5}",
            "stage spike-x4 as a run of client java's engine: duration_s: must be greater than or equal to 1",
        ),
    ],
)
def test_a_stage_no_engine_could_run_is_one_line(tmp_path: Path, old: str, new: str, expected: str) -> None:
    text = ENGINE_SPEC.replace(old, new)
    assert text != ENGINE_SPEC
    with pytest.raises(BadInput) as exc:
        _loaded(tmp_path, text)
    assert expected in exc.value.message and "\n" not in exc.value.message


class _Stages(EngineStages):
    """The profile's orchestration with each stage's run replaced: the run's figures by stage name
    (the stage's producers the engine ran), judged by the real policy, recorded as the lifecycle does."""

    def __init__(self, loaded: LoadedStress, idle_by_stage: dict[str, float], said: list[str]) -> None:
        parts = StageParts(cast(Any, None), cast(Any, None), None, None)
        super().__init__(
            parts,
            None,
            loaded,
            "java",
            capture_environment(1),
            None,
            lambda label, text: said.append(text),
            lambda label, stage, checks: said.append(f"judged {stage.name}"),
        )
        self.idle_by_stage = idle_by_stage

    def _run(self, plan: RunPlan, policy: StageGates, stage: Stage) -> RunRecord:
        producers = plan.workload.producers
        client = _client(900.0, producers * 100, producers * 100).model_copy(update={"producers": producers})
        delivery = DeliveryResult(acked=client.records_acked, consumed=client.records_acked, verified=True)
        figures = Figures(client, delivery, _broker(self.idle_by_stage.get(stage.name, 0.9)))
        run = Run(plan, new_ids("peak", plan.name, T0), ["kbt-logs-r1-x"], cast(Any, None), [])
        fields = policy.finish(run, figures, {"status": "ok", "problems": []})
        return build_record(
            plan, run.ids.run_id, capture_environment(1), run.topics, client, delivery, None, **fields
        )


def test_a_profile_runs_every_stage_but_the_drain(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    said: list[str] = []
    outcome = _Stages(loaded, {}, said).run()
    kinds = [s.stage.kind for s in outcome.stages]
    assert kinds == ["prefill", "step", "step", "step", "hold", "spike", "ramp_down"]
    assert [r.stress.verdict for r in outcome.records if r.stress] == [
        "not judged",
        *["held"] * 5,
        "not judged",
    ]
    assert [s for s in said if s.startswith("judged")] == [
        f"judged {s.stage.name}" for s in outcome.stages[1:6]
    ]
    # every stage's producers at the baseline's share: x3 is 12 producers, the ramp down 12 -> 4 runs 8
    assert [r.client.producers for r in outcome.records] == [4, 4, 8, 12, 12, 16, 8]
    delivery = outcome.delivery
    assert delivery is not None and delivery.verified and delivery.lost == 0
    assert delivery.acked == sum(r.client.records_acked for r in outcome.records)
    # one timeline origin for the profile: its first stage's start
    assert {r.stress.t0 for r in outcome.records if r.stress} == {T0}
    assert outcome.highest_held is not None and outcome.highest_held.kind == "hold"


def test_abort_stops_the_ramp_at_the_first_failed_step(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, ENGINE_SPEC.replace("p99_ms: 1500}", "p99_ms: 1500, on_fail: abort}"))
    said: list[str] = []
    outcome = _Stages(loaded, {"step2-x2": 0.1}, said).run()
    assert [s.stage.name for s in outcome.stages] == ["prefill", "step1-x1", "step2-x2"]
    assert outcome.aborted_at is not None and outcome.aborted_at.name == "step2-x2"
    assert "step2-x2 failed: ramp aborted" in said
    assert outcome.highest_held is not None and outcome.highest_held.name == "step1-x1"


def test_the_readers_plan_covers_the_stage_run(tmp_path: Path) -> None:
    text = ENGINE_SPEC.replace("consumer_groups: []", "consumer_groups: [{name: rt, mode: realtime}]")
    loaded = _loaded(tmp_path, text)
    stage = next(s for s in loaded.stages if s.name == "step2-x2")
    plan = stage_run_plan(loaded.spec, "java", loaded.spec.workload, stage, 25.0, 8, 1)
    target = cast(
        Any, SimpleNamespace(bootstrap_servers="127.0.0.1:1", client_properties={"security.protocol": "SSL"})
    )
    run = Run(plan, new_ids("peak", plan.name, T0), ["kbt-logs-r1-x"], target, [])
    before = time.time()
    readers = StageGates(loaded, "java", stage, None)._readers(run)
    assert readers.topics == ["kbt-logs-r1-x"] and [g.name for g in readers.groups] == ["rt"]
    assert readers.t0 >= before and readers.client_properties == {"security.protocol": "SSL"}
    # one stage, from now, long past the run: every record it consumes counts for this stage
    (only,) = readers.stages
    assert only.index == stage.index and only.start_s == 0 and only.lagging == "off"
    assert readers.stage_index_at(readers.t0 + stage.duration_s * 3) == stage.index
