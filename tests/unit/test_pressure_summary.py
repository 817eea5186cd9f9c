"""The pressure demo's closing lines: each figure before -> after, from the records' own fields."""

from __future__ import annotations

import functools
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.render.pressure_summary import closing_lines, main
from tuner.spec.sweep import RunPlan
from tuner.store import ResultsStore
from tuner.store.figures import BrokerStats
from tuner.store.record import RunRecord


@functools.cache
def _plans() -> dict[str, RunPlan]:
    return {p.profile.name: p for p in qunar_plans()}


def _record(name: str, idle: float, queue: float, at_cap: float, rps: float, created: float) -> RunRecord:
    plans = _plans()
    plan = plans["filebeat-like"] if name == "filebeat-like" else plans["batched-zstd"]
    stats = BrokerStats(
        broker="1",
        network_idle_ratio=idle,
        request_queue_size=queue,
        request_queue_at_cap_share=at_cap,
        produce_requests_per_s=rps,
        cpu_cores=0.1,
    )
    record = record_with_brokers([stats], created, plan)
    assert record.broker is not None
    broker = record.broker.model_copy(update={"request_queue_cap": 16})
    return record.model_copy(update={"name": name, "broker": broker})


@settings(max_examples=20, deadline=None)
@given(
    idle=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    queue=st.tuples(st.floats(0, 16), st.floats(0, 16)),
    rps=st.tuples(st.floats(1, 5000), st.floats(1, 5000)),
)
def test_each_line_is_before_then_after(
    idle: tuple[float, float], queue: tuple[float, float], rps: tuple[float, float]
) -> None:
    before = _record("filebeat-like", idle[0], queue[0], 1.0, rps[0], 1_800_000_000.0)
    after = _record("batched", idle[1], queue[1], 0.0, rps[1], 1_800_000_100.0)
    lines = closing_lines(before, after)
    assert lines[0].startswith("pressure lab, filebeat-like -> batched") and len(lines) == 7
    assert lines[1].split()[-3:] == [f"{idle[0]:.2f}", "->", f"{idle[1]:.2f}"]
    assert f"{queue[0]:.1f} mean, at cap 100% -> {queue[1]:.1f} mean, at cap 0%" in lines[2]
    assert lines[2].split("  ")[1].strip() == "request queue (cap 16)"
    assert lines[4].split()[-3:] == [f"{rps[0]:,.0f}", "->", f"{rps[1]:,.0f}"]
    assert "\n" not in "".join(lines)


def test_missing_runs_are_one_line(tmp_path: Path, capsys: object) -> None:
    store = ResultsStore(tmp_path)
    store.write(_record("batched", 0.9, 0.5, 0.0, 50, 1_800_000_000.0))
    assert main([str(tmp_path)]) == 2
    assert main([]) == 2
