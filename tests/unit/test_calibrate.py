"""A capture calibrated by its first replay (tuner/render/calibrate.py): a replay that sent more
requests than the model predicted at the inferred linger gets a longer one, fewer a shorter one; a
group the replay does not show is left as it was, and inputs that are not captures are one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.unit.capture_records import RDKAFKA, capture_record, client_row
from tests.unit.mutations import Mutation, one_field_changed
from tuner.core.errors import BadInput, EnvironmentProblem, KbtError
from tuner.core.writes import atomic_write_all
from tuner.model.capture import ShapeOptions, shape
from tuner.render.calibrate import calibrated, calibration, main
from tuner.render.capture import capture_files
from tuner.render.script import run_script
from tuner.store.capture import CaptureRecord

TOPICS = [{"name": "t", "partitions": 1, "replication_factor": 1, "records": 100_000}]
SAMPLES = [{"topic": "t", "value_bytes": [200] * 100, "keyless": 100}]
REPLAY_TOPIC = "kbt-t-r0-20261129T010203.456Z"


def _source(tmp_path: Path) -> tuple[Path, CaptureRecord]:
    """One librdkafka producer at 1,000 records/s sending 50 requests/s (a linger of some 20 ms)."""
    record = capture_record([client_row("svc", RDKAFKA, "b0", 5_000, "t")], TOPICS, SAMPLES)
    plan = shape(record, ShapeOptions(duration_s=60))
    out = tmp_path / "capture"
    atomic_write_all(capture_files(out, record, plan))
    return out, record


def _replay(tmp_path: Path, requests: int) -> Path:
    """A capture of the replay: the same group on kbt's topic name, `requests` over the 100 s."""
    topics = [{**TOPICS[0], "name": REPLAY_TOPIC}]
    samples = [{**SAMPLES[0], "topic": REPLAY_TOPIC}]
    record = capture_record([client_row("kbt-svc", RDKAFKA, "b0", requests, REPLAY_TOPIC)], topics, samples)
    out = tmp_path / f"replay-{requests}"
    atomic_write_all(capture_files(out, record, shape(record, ShapeOptions(infer_linger=False))))
    return out


def _linger(folder: Path) -> float:
    import json

    plan = json.loads((folder / "capture.json").read_text())["plan"]
    (group,) = plan["groups"]
    return float(group["linger_ms"])


def test_a_replay_that_sent_more_gets_a_longer_linger_and_fewer_a_shorter(tmp_path: Path) -> None:
    source, _ = _source(tmp_path)
    first = _linger(source)
    _, more, _ = calibrated(source, _replay(tmp_path, 7_000))  # 70 requests/s against ~50 predicted
    _, fewer, _ = calibrated(source, _replay(tmp_path, 3_500))
    assert more.groups[0].linger_ms is not None and fewer.groups[0].linger_ms is not None
    assert more.groups[0].linger_ms > first > fewer.groups[0].linger_ms
    assert any("calibrated: a replay sent" in e for e in more.groups[0].evidence)
    assert more.options is not None and set(more.options.calibration) == {more.groups[0].name}


def test_a_replay_without_the_group_calibrates_nothing(tmp_path: Path) -> None:
    _, record = _source(tmp_path)
    other_topics = [{**TOPICS[0], "name": "kbt-other-r0-x"}]
    other = capture_record(
        [client_row("kbt-svc", RDKAFKA, "b0", 6_000, "kbt-other-r0-x")],
        other_topics,
        [{**SAMPLES[0], "topic": "kbt-other-r0-x"}],
    )
    factors, lines = calibration(shape(record, ShapeOptions(duration_s=60)), shape(other))
    assert factors == {} and "not found once in the replay" in lines[0]


def test_the_command_writes_a_capture_and_refuses_what_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = _source(tmp_path)
    out = tmp_path / "calibrated"
    assert main([str(source), str(_replay(tmp_path, 7_000)), str(out)]) == 0
    assert (out / "capture.json").is_file() and list(out.glob("*/sweep.yaml"))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "capture.json").write_text("[1, 2]")
    assert main([str(source), str(tmp_path / "junk"), str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a capture kbt wrote" in err[0]
    assert main([str(source)]) == 2
    with pytest.raises(BadInput, match="no such capture"):
        calibrated(tmp_path / "nowhere", source)


def test_the_replay_is_read_at_the_sources_scale(tmp_path: Path) -> None:
    """Two producers replayed as one (scale 0.5): a replay sending half the source's requests sent
    the source's rate, so the linger stays about where it was."""
    rows = [client_row(f"svc-{i}", RDKAFKA, "b0", 2_500, "t") for i in (1, 2)]
    record = capture_record(rows, TOPICS, SAMPLES)
    plan = shape(record, ShapeOptions(duration_s=60, lab_producers=1))
    assert plan.scale == 0.5
    source = tmp_path / "capture"
    atomic_write_all(capture_files(source, record, plan))
    first = _linger(source)
    _, again, _ = calibrated(source, _replay(tmp_path, 2_500))
    assert again.groups[0].linger_ms is not None
    assert abs(again.groups[0].linger_ms - first) <= 0.2 * first


def test_a_source_topic_with_kbts_prefix_is_found_without_it_doubled(tmp_path: Path) -> None:
    """A source that was itself kbt's runs (topic kbt-t-r0-1): its replay writes kbt-t-r0-1-r0-2."""
    source_topic, replay_topic = "kbt-t-r0-1", "kbt-t-r0-1-r0-2"
    record = capture_record(
        [client_row("svc", RDKAFKA, "b0", 5_000, source_topic)],
        [{**TOPICS[0], "name": source_topic}],
        [{**SAMPLES[0], "topic": source_topic}],
    )
    replay = capture_record(
        [client_row("kbt-svc", RDKAFKA, "b0", 7_000, replay_topic)],
        [{**TOPICS[0], "name": replay_topic}],
        [{**SAMPLES[0], "topic": replay_topic}],
    )
    factors, lines = calibration(shape(record, ShapeOptions(duration_s=60)), shape(replay))
    assert list(factors) == ["svc-confluent-kafka-python"] and factors["svc-confluent-kafka-python"] < 1.0, (
        lines
    )


@pytest.mark.parametrize("error", [BadInput("bad file"), EnvironmentProblem("cannot write out/")])
def test_a_script_shows_any_kbt_error_as_one_line_with_its_status(
    error: KbtError, capsys: pytest.CaptureFixture[str]
) -> None:
    def work() -> int:
        raise error

    assert run_script(True, "x", work) == error.status != 0
    assert capsys.readouterr().err.splitlines() == [f"kbt: error: {error.message}"]


def _written_capture() -> dict[str, object]:
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        source, _ = _source(Path(scratch))
        return json.loads((source / "capture.json").read_text())  # type: ignore[no-any-return]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutation=one_field_changed(_written_capture()))
def test_a_capture_changed_in_one_field_is_read_or_refused_in_one_line(
    tmp_path: Path, mutation: Mutation
) -> None:
    """capture.json read back (the calibration re-shapes it): any one field of another type, out
    of range or gone, or the file damaged, is shaped or refused in one line, never a traceback."""
    source, _ = _source(tmp_path)
    (source / "capture.json").write_text(mutation.text)
    try:
        _, plan, _ = calibrated(source, _replay(tmp_path, 5_000))
    except BadInput as exc:
        assert "\n" not in exc.message and len(exc.message) < 600
        return
    for group in plan.groups:  # what was shaped is a workload a lab can run
        assert 0 < group.requests_per_s < 1e9 and group.producers >= 1


@pytest.mark.parametrize("end", [0.0, -5.0])
def test_a_capture_of_no_window_is_refused_not_shaped_at_a_billion_requests_a_second(
    tmp_path: Path, end: float
) -> None:
    # its rates were counts over max(window, 1e-9): 5e12 produce requests/s, shaped without a word
    import json

    source, _ = _source(tmp_path)
    document = json.loads((source / "capture.json").read_text())
    document["record"].update(start=0.0, end=end)
    (source / "capture.json").write_text(json.dumps(document))
    with pytest.raises(BadInput, match=r"capture.json: invalid capture: end: .* is not after start"):
        calibrated(source, _replay(tmp_path, 5_000))


def test_a_busy_clients_tallies_pass_ten_million_partition_batches_and_none_is_negative() -> None:
    # a tally's bound was a partition count's (10 million): a capture of a client sending 10,000
    # requests/s of 10 partitions over 10 minutes could not be written; a count is never below 0
    from pydantic import ValidationError

    busy = client_row("svc", RDKAFKA, "b0", 6_000_000, "t", partitions=60_000_000)
    assert capture_record([busy], TOPICS, SAMPLES).clients[0].partitions == 60_000_000
    for field in ("requests", "record_bytes", "partitions"):
        with pytest.raises(ValidationError):
            capture_record([{**busy, field: -1}], TOPICS, SAMPLES)


@pytest.mark.parametrize("where", [("scale",), ("groups", 0, "requests_per_s")])
def test_a_plan_of_no_scale_or_no_requests_is_refused_not_divided_by(tmp_path: Path, where: tuple) -> None:
    # both were ZeroDivisionError tracebacks of the calibration (what a lab ran over the source's scale)
    import json

    source, _ = _source(tmp_path)
    document = json.loads((source / "capture.json").read_text())
    node = document["plan"]
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = 0
    (source / "capture.json").write_text(json.dumps(document))
    with pytest.raises(BadInput, match=f"invalid capture plan: {where[0]}.*must be greater than 0"):
        calibrated(source, _replay(tmp_path, 5_000))
