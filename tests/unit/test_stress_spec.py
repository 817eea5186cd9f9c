"""Stress specs: the stage timeline, the baseline, and one clear line for every bad spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.core.errors import BadInput, ExitStatus
from tuner.spec.stress_load import baseline_from_diagnose, load_stress
from tuner.spec.stress_spec import first_lagging_start, stage_at, users_at

SPEC = """\
name: peak
workload:
  name: w
  topics:
    - name: logs
      partitions: 6
      replication_factor: 1
  producers: 4
  rate_per_producer: 25
  message: {kind: generated, bytes: 300}
  duration_s: 10
topic_configs: {remote.storage.enable: true, segment.ms: 5000, local.retention.ms: 5000}
profiles:
  current: {name: filebeat-like, linger_ms: 0, compression: gzip}
  recommended: {name: batched, linger_ms: 50, compression: lz4}
shape:
  prefill_s: 30
  steps: [1, 2, 3]
  step_s: 20
  hold_s: 10
  spike: {multiplier: 4, duration_s: 8}
  ramp_down_s: 10
  drain_s: 6
  settle_s: 2
consumer_groups:
  - {name: rt, mode: realtime}
  - {name: replay, mode: lagging, lag_s: 20}
gates: {network_idle_min: 0.3, request_queue_max: 20, p99_ms: 1500}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "stress.yaml"
    path.write_text(text)
    return path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(BadInput) as exc:
        load_stress(_write(tmp_path, text))
    assert exc.value.status == ExitStatus.BAD_INPUT
    assert "\n" not in exc.value.message
    return exc.value.message


def test_timeline_from_the_shape(tmp_path: Path) -> None:
    loaded = load_stress(_write(tmp_path, SPEC))
    assert loaded.baseline_msgs_per_s == 100  # 4 producers x 25 msgs/s
    assert loaded.baseline_source == "workload"
    stages = loaded.stages
    assert [s.kind for s in stages] == [
        "prefill",
        "step",
        "step",
        "step",
        "hold",
        "spike",
        "ramp_down",
        "drain",
    ]
    assert [s.name for s in stages][1:4] == ["step1-x1", "step2-x2", "step3-x3"]
    assert [s.users for s in stages] == [4, 4, 8, 12, 12, 16, 12, 0]
    assert stages[6].users_end == 4  # ramp down to 1 x baseline
    assert [s.start_s for s in stages] == [0, 30, 50, 70, 90, 100, 108, 118]
    assert stages[-1].end_s == 124
    assert [s.judged for s in stages] == [False, True, True, True, True, True, False, False]
    # lagging readers read in the second half of held stages, always while ramping down
    assert [s.lagging for s in stages] == ["off", "split", "split", "split", "split", "split", "on", "off"]
    assert first_lagging_start(loaded.spec) == 40
    assert loaded.spec.notes() == []
    assert loaded.spec.topics_with_configs().topics[0].configs["remote.storage.enable"] == "true"


def test_ramp_down_is_linear_and_stage_lookup(tmp_path: Path) -> None:
    stages = load_stress(_write(tmp_path, SPEC)).stages
    ramp = stages[6]
    assert users_at(ramp, 0) == 12 and users_at(ramp, 5) == 8 and users_at(ramp, 10) == 4
    assert users_at(stages[2], 3) == 8
    assert stage_at(stages, 29.9) == stages[0]
    assert stage_at(stages, 30) == stages[1]
    assert stage_at(stages, -1) is None and stage_at(stages, 124) is None


def test_no_lagging_groups_means_no_lagging_stages(tmp_path: Path) -> None:
    text = SPEC.replace("  - {name: replay, mode: lagging, lag_s: 20}\n", "")
    loaded = load_stress(_write(tmp_path, text))
    assert {s.lagging for s in loaded.stages} == {"off"}
    assert first_lagging_start(loaded.spec) is None


def test_baseline_given_in_the_spec(tmp_path: Path) -> None:
    loaded = load_stress(_write(tmp_path, SPEC + "baseline: {msgs_per_s: 400}\n"))
    assert loaded.baseline_msgs_per_s == 400 and loaded.baseline_source == "spec"


def _diagnosis(rates: list[float | None]) -> dict[str, object]:
    """The shape of `kbt diagnose --json` (tuner.model.diagnosis.Diagnosis) as far as stress reads it."""
    brokers = [
        {"broker": str(i + 1), "messages_in_per_s": r, "network_idle_ratio": 0.8} for i, r in enumerate(rates)
    ]
    return {
        "status": "healthy",
        "headline": "ok",
        "brokers": [],
        "snapshot": {"prometheus": "x", "brokers": brokers},
    }


def test_baseline_from_diagnose_output(tmp_path: Path) -> None:
    diag = tmp_path / "diag.json"
    diag.write_text(json.dumps(_diagnosis([400.5, 800, None])))
    loaded = load_stress(_write(tmp_path, SPEC + "baseline: {from_diagnose: diag.json}\n"))
    assert loaded.baseline_msgs_per_s == 1200.5  # summed over the brokers
    assert loaded.baseline_source.endswith("diag.json")
    # --baseline-from overrides the spec
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_diagnosis([50])))
    assert load_stress(tmp_path / "stress.yaml", baseline_from=other).baseline_msgs_per_s == 50


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"status": "healthy"}', "not 'kbt diagnose --json' output"),
        ("not json", "not valid JSON"),
        (
            '{"snapshot": {"brokers": [{"broker": "1", "messages_in_per_s": 0}]}}',
            "no baseline load to multiply",
        ),
        ('{"snapshot": {"brokers": [{"broker": "1"}]}}', "the brokers took no records"),
    ],
)
def test_bad_diagnose_output(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(content)
    with pytest.raises(BadInput, match=expected):
        baseline_from_diagnose(path)


def test_missing_diagnose_file(tmp_path: Path) -> None:
    msg = _error(tmp_path, SPEC + "baseline: {from_diagnose: nope.json}\n")
    assert "no such diagnose file" in msg and "kbt diagnose --json" in msg


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "  step_s: 20",
            "  stepp_s: 20",
            'stress.yaml:19: shape: unknown key "stepp_s" (did you mean "step_s"?)',
        ),
        ("gates: {", "gate: {", 'unknown key "gate" (did you mean "gates"?)'),
        ("steps: [1, 2, 3]", "steps: [1, 3, 2]", "steps must increase"),
        ("steps: [1, 2, 3]", "steps: [0, 2, 3]", "shape.steps[0]: must be greater than 0 (got 0)"),
        ("  settle_s: 2", "  settle_s: 10", "settle_s (10) must be under half of step_s (20)"),
        ("rate_per_producer: 25", "rate_per_producer: max", 'not "max"'),
        (
            "{name: batched, linger_ms: 50",
            "{name: batched, client: java, linger_ms: 50",
            "lagging consumer groups (replay) read beside librdkafka profiles only",
        ),
        (
            "p99_ms: 1500}",
            "p99_ms: 1500, on_fail: stop}",
            'unknown value "stop" (expected one of abort, continue',
        ),
        ("multiplier: 4,", "multiplier: 400,", "spike.multiplier"),
        ("mode: lagging, lag_s: 20", "mode: lagging", "a lagging consumer group needs lag_s"),
        (
            "{name: rt, mode: realtime}",
            "{name: replay, mode: realtime}",
            "consumer group names must be unique",
        ),
        ("local.retention.ms: 5000}", "max.message.bytes: 10}", "exceed the topic limit"),
    ],
)
def test_bad_specs_one_line(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in SPEC
    assert expected in _error(tmp_path, SPEC.replace(old, new))


def test_peak_above_the_producer_limit(tmp_path: Path) -> None:
    assert (
        load_stress(_write(tmp_path, SPEC.replace("producers: 4", "producers: 500"))).stages[5].users == 2000
    )
    msg = _error(tmp_path, SPEC.replace("producers: 4", "producers: 510"))
    assert "the peak x4 needs 2040 producers (at most 2000)" in msg


def test_missing_profile_file_names_the_key(tmp_path: Path) -> None:
    text = SPEC.replace(
        "  current: {name: filebeat-like, linger_ms: 0, compression: gzip}", "  current: nope.yaml"
    )
    msg = _error(tmp_path, text)
    assert msg.endswith('stress.yaml:14: profiles.current: no such file "nope.yaml"')


def test_profiles_and_workload_by_path(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2] / "loadtests"
    text = (
        f"name: p\nworkload: {repo}/workloads/qunar-logs.yaml\n"
        f"profiles: {{current: {repo}/profiles/filebeat-like.yaml,"
        f" recommended: {repo}/profiles/batched-snappy.yaml}}\n"
        "shape: {steps: [1, 2], step_s: 20}\n"
    )
    loaded = load_stress(_write(tmp_path, text))
    assert loaded.profile_labels() == ["current", "recommended"]
    assert loaded.spec.profiles["current"].name == "filebeat-like"
    assert loaded.baseline_msgs_per_s == 960


def test_notes_flag_untiered_and_short_prefill(tmp_path: Path) -> None:
    text = SPEC.replace(
        "topic_configs: {remote.storage.enable: true, segment.ms: 5000, local.retention.ms: 5000}\n", ""
    )
    text = text.replace("prefill_s: 30", "prefill_s: 0")
    notes = load_stress(_write(tmp_path, text)).spec.notes()
    assert any("is not tiered" in n for n in notes)
    assert any("raise shape.prefill_s" in n for n in notes)


def test_holiday_peak_example() -> None:
    loaded = load_stress(Path(__file__).resolve().parents[2] / "loadtests" / "holiday-peak.yaml")
    spec = loaded.spec
    assert loaded.profile_labels() == ["current", "recommended"]
    assert spec.profiles["current"].name == "filebeat-like"
    steps = [s for s in loaded.stages if s.kind == "step"]
    assert len(steps) >= 4 and steps[0].multiplier == 1
    assert {g.mode for g in spec.groups} == {"realtime", "lagging"}
    assert spec.notes() == []  # tiered, and the prefill leaves minute-old data for the replay
    assert loaded.stages[-1].end_s <= 400  # one profile stays under ~7 minutes
