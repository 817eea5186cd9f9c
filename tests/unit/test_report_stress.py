"""`kbt report` on stress records: the highest step held per profile (as `kbt stress` says it), the
consumer figures per stage, and a before/after pair only between stages that both ran to their end."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_stress_spec import SPEC
from tuner.driver.latency_hist import Latency
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.driver.stress.plan import StressPlan
from tuner.driver.stress.tally import StageTally
from tuner.driver.stress.verify import StressDelivery
from tuner.render.report import build_report
from tuner.render.report_data import comparisons, load_report_input, stress_summaries
from tuner.runner.stress.records import RunContext, StageMeasure, stage_record
from tuner.spec.stress_load import load_stress
from tuner.store import ResultsStore
from tuner.store.environment import capture_environment
from tuner.store.figures import BrokerStats, BrokerWindow
from tuner.store.stress_section import Verdict

T0 = 1_800_000_000.0


def _ctx(tmp_path: Path, label: str, t0: float) -> RunContext:
    path = tmp_path / "s.yaml"
    path.write_text(SPEC)
    loaded = load_stress(path)
    plan = StressPlan(
        run_id=f"peak/{label}--x",
        stress="peak",
        profile_label=label,
        profile=loaded.spec.profiles[label],
        workload=loaded.spec.topics_with_configs(),
        topics=[f"logs-{label}"],
        bootstrap_servers="127.0.0.1:1",
        rate_per_producer=25,
        stages=loaded.stages,
        t0=t0,
        groups=loaded.spec.groups,
    )
    stamp = f"20270115T08{int(t0 - T0) // 60:02d}00.000Z"
    return RunContext(loaded.spec, plan, 100, capture_environment(1), 1, stamp)


def _write(store: ResultsStore, ctx: RunContext, verdicts: dict[int, Verdict | None]) -> None:
    """One record per stage: 'failed' through a gate (network idle), 'aborted' as an override."""
    for index, verdict in verdicts.items():
        stage = ctx.plan.stages[index]
        tally = StageTally(sent=100, acked=100, bytes_acked=30_000, latency=Latency.of_us({20_000: 100}))
        idle = 0.1 if verdict == "failed" else 0.6
        broker = BrokerWindow(
            start=0, end=1, step_s=1, brokers=[BrokerStats(broker="1", network_idle_ratio=idle)]
        )
        rt = GroupTally()
        rt.half(index, 0).e2e, rt.half(index, 0).records = Latency.of_us({15_000: 100}), 100
        rt.half(index, 1).e2e, rt.half(index, 1).records = Latency.of_us({45_000: 100}), 100
        delivery = StressDelivery(verified=True, acked=100, consumed=100, acked_by_stage={index: 100})
        override: Verdict | None = "aborted" if verdict == "aborted" else None
        record = stage_record(
            ctx, stage, tally, StageMeasure(broker=broker), {"rt": rt}, delivery, verdict_override=override
        )
        store.write(record)


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    store = ResultsStore(results)
    # current: step1 failed, step2 aborted part way (the ramp stopped)
    _write(store, _ctx(tmp_path, "current", T0), {0: None, 1: "failed", 2: "aborted"})
    # recommended (gates set to continue): step3 failed, the hold after it held again
    later = _ctx(tmp_path, "recommended", T0 + 600)
    _write(store, later, {0: None, 1: "held", 2: "held", 3: "failed", 4: "held", 5: "held"})
    return results


def test_highest_step_held_stops_at_the_first_failure(tmp_path: Path) -> None:
    report = load_report_input(_results(tmp_path))
    current, recommended = stress_summaries(report.runs)
    assert current.label == "current" and current.held is None
    assert current.first_failed is not None and current.first_failed.stage.name == "step1-x1"
    assert any("network idle" in p for p in current.problems)
    assert recommended.held is not None and recommended.held.stage.name == "step2-x2"
    assert recommended.first_failed is not None and recommended.first_failed.stage.name == "step3-x3"
    assert recommended.spike == "held"


def test_page_says_what_each_profile_held_with_consumer_figures(tmp_path: Path) -> None:
    html = build_report(load_report_input(_results(tmp_path))).html
    assert "current (filebeat-like): no step held; step1-x1 failed: network idle 0.10 &lt; 0.3" in html
    assert "recommended (batched): highest step held step2-x2 (x2 = 200 msgs/s); step3-x3 failed" in html
    assert "highest step held hold" not in html and "highest step held spike" not in html
    cells = '<td class="">15</td><td class="">45</td>'  # real-time e2e p99 without / with lagging
    assert cells in html


def test_before_after_only_between_stages_run_to_their_end(tmp_path: Path) -> None:
    [pair] = comparisons(load_report_input(_results(tmp_path)))
    assert pair.before.record.stress is not None and pair.after.record.stress is not None
    # step2 is the highest stage both have, but current's was aborted part way: step1 it is
    assert pair.before.record.stress.stage.name == pair.after.record.stress.stage.name == "step1-x1"
    assert pair.before.record.stress.profile_label == "current"
