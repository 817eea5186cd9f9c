"""Run records: atomic, never overwritten, reloadable, found again by --resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.paths import repo_root
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan
from tuner.store import ResultsStore, RunRecord, capture_environment, make_run_id
from tuner.store.figures import BrokerStats, BrokerWindow, ClientResult, DeliveryResult, LatencyMs
from tuner.store.record import SCHEMA_VERSION


def _plans() -> list[RunPlan]:
    return load_sweep(repo_root() / "loadtests" / "qunar-logs.yaml").runs


def _record(plan: RunPlan, created: float, lost: int = 0) -> RunRecord:
    start = created - 60
    client = ClientResult(
        engine="librdkafka",
        producers=plan.workload.producers,
        processes=plan.workload.processes,
        started_at=start,
        window_start=start + 10,
        window_end=start + 60,
        finished_at=created,
        records_acked=48000,
        bytes_acked=48000 * 1620,
        produce_requests=24000,
        records_per_request=2.0,
        delivery_latency_ms=LatencyMs(count=48000, p99=12.5),
    )
    broker = BrokerWindow(
        start=start + 10,
        end=start + 60,
        step_s=5,
        brokers=[BrokerStats(broker="1", produce_requests_per_s=300.0, network_idle_ratio=0.9)],
    )
    return RunRecord(
        run_id=make_run_id(plan.sweep, plan.name, created),
        name=plan.name,
        sweep=plan.sweep,
        index=plan.index,
        spec_hash=plan.spec_hash,
        plan=plan,
        environment=capture_environment(broker_count=3, kafka_version="4.1.1"),
        created_at=created,
        client=client,
        delivery=DeliveryResult(acked=48000, consumed=48000 - lost, lost=lost, verified=True),
        broker=broker,
        status="failed" if lost else "ok",
    )


def test_write_load_roundtrip(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    plan = _plans()[0]
    record = _record(plan, 1_700_000_000.123)
    path = store.write(record)
    assert path == tmp_path / "qunar-logs" / "filebeat-like--20231114T221320.123Z.json"
    assert store.load(path).model_dump(mode="json") == record.model_dump(mode="json")
    assert [p.name for p in tmp_path.joinpath("qunar-logs").iterdir()] == [path.name]  # no temp left
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION == 7
    assert data["spec_hash"] == plan.spec_hash
    assert data["environment"]["cpu_count"] >= 1
    assert "resolved_path" not in data["plan"]["workload"]["message"]  # no machine paths in records
    assert record.client.requests_per_s == pytest.approx(480.0)
    assert record.broker is not None and record.broker.produce_requests_per_s == 300.0


def test_never_overwritten(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    record = _record(_plans()[0], 1_700_000_000.0)
    path = store.write(record)
    before = path.read_text()
    with pytest.raises(EnvironmentProblem, match="already exists"):
        store.write(record)
    assert path.read_text() == before


def test_completed_matches_name_and_spec_hash(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    first, second, _third = _plans()
    store.write(_record(first, 1_700_000_000.0))
    store.write(_record(first, 1_700_000_100.0, lost=3))
    store.write(_record(second, 1_700_000_050.0))
    found = store.completed("qunar-logs", first.name, first.spec_hash)
    assert found is not None and found.created_at == 1_700_000_100.0
    assert store.completed("qunar-logs", first.name, "0" * 64) is None
    assert store.completed("qunar-logs", "batched-zstd", _third.spec_hash) is None
    names = [r.name for r in store.records("qunar-logs")]
    assert names == ["filebeat-like", "batched-snappy", "filebeat-like"]
    assert set(store.latest("qunar-logs")) == {"filebeat-like", "batched-snappy"}
    assert store.sweeps() == ["qunar-logs"]


def test_schema_version_mismatch_is_one_line(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    path = store.write(_record(_plans()[0], 1_700_000_000.0))
    data = json.loads(path.read_text())
    data["schema_version"] = 99
    bad = path.with_name("bad.json")
    bad.write_text(json.dumps(data))
    with pytest.raises(BadInput, match="schema_version 99"):
        store.load(bad)
    data["schema_version"] = "9" * 100_000  # once all of it, the versions kbt reads lost past the cut
    bad.write_text(json.dumps(data))
    with pytest.raises(BadInput, match=r'schema_version "9{9}.* more characters\), this kbt reads 1 to'):
        store.load(bad)
    bad.write_text("{not json")
    with pytest.raises(BadInput, match="not valid JSON"):
        store.load(bad)


def test_records_are_frozen() -> None:
    record = _record(_plans()[0], 1_700_000_000.0)
    with pytest.raises(ValueError):
        record.status = "failed"  # type: ignore[misc]


def test_unwritable_results_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(BadInput, match="file is not a directory"):  # named as such, not "File exists"
        ResultsStore(blocker).write(_record(_plans()[0], 1_700_000_000.0))


def test_an_invalid_field_is_named_by_the_records_own_keys(tmp_path: Path) -> None:
    # a profile's field was named through pydantic's union tag: plan.profile.FilebeatProfile.filebeat...
    truth = repo_root() / "loadtests/truth/records/truth-filebeat"
    data = json.loads(next(truth.glob("*.json")).read_text())
    data["plan"]["profile"]["filebeat"]["output"] = None  # was an AttributeError, not one line
    path = tmp_path / "s" / "r--x.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    with pytest.raises(BadInput) as exc:
        ResultsStore(tmp_path).load(path)
    assert exc.value.message.endswith(
        "invalid run record: plan.profile.filebeat.output: must be a mapping of keys"
    ), exc.value.message


def test_a_recommendation_written_among_the_records_is_passed_over(tmp_path: Path) -> None:
    """`recommend --out` at its --results: the next reader takes the records and leaves the
    recommendation, as a report finds it (it is not a broken run record)."""
    store = ResultsStore(tmp_path)
    record = _record(_plans()[0], 1_700_000_000.0)
    store.write(record)
    beside = tmp_path / "qunar-logs--20231114T221320.123Z" / "recommendation.json"
    beside.parent.mkdir()
    beside.write_text(json.dumps({"kind": "recommendation", "schema_version": 1}))
    assert [r.run_id for r in store.records()] == [record.run_id]
    with pytest.raises(BadInput, match="a recommendation document, not a run record"):
        store.load(beside)
    (tmp_path / "qunar-logs" / "x.json").write_text(json.dumps({"kind": "other", "schema_version": 1}))
    with pytest.raises(BadInput, match=r"x\.json: invalid run record"):  # not kbt's: said
        store.records()


@pytest.mark.parametrize(
    ("entry", "what"),
    [
        ("fifo", "is a FIFO, not a run record"),
        ("directory", "is a directory, not a run record"),
        ("loop", "cannot read: Too many levels of symbolic links"),
        ("dangling", "no such run record"),
        ("device", "is a device, not a run record"),
    ],
)
def test_an_entry_of_a_results_directory_named_like_a_record_is_one_line_never_a_wait(
    tmp_path: Path, entry: str, what: str
) -> None:
    """A results directory holding a FIFO (a reader would wait on it for ever), a directory, a
    symbolic link loop or a device where a record's name is: the entry named, in one line."""
    import os

    store = ResultsStore(tmp_path)
    store.write(_record(_plans()[0], 1_700_000_000.0))
    odd = tmp_path / "qunar-logs" / "odd--20231114T221320.000Z.json"
    if entry == "fifo":
        os.mkfifo(odd)
    elif entry == "directory":
        odd.mkdir()
    else:
        odd.symlink_to({"loop": odd.name, "dangling": "gone.json", "device": "/dev/zero"}[entry])
    with pytest.raises(BadInput) as info:
        store.records()
    assert info.value.message.endswith(f"odd--20231114T221320.000Z.json: {what}")
    assert "\n" not in info.value.message


ENTRIES = st.sampled_from(
    ["record", "record", "fifo", "directory", "loop", "dangling", "other.txt", "hidden"]
)


@settings(max_examples=40, deadline=None)
@given(st.lists(ENTRIES, max_size=8))
def test_a_results_directory_of_any_entries_is_read_whole_or_refused_naming_one(entries: list[str]) -> None:
    """Records among FIFOs, directories and links named like records, other files and hidden ones:
    every record read (the other names passed over), or one line naming the first entry that is
    named like a record and is not one; never a wait on a FIFO or a traceback."""
    import os
    import tempfile

    plan = _plans()[0]
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "qunar-logs").mkdir()
        odd = []
        for i, entry in enumerate(entries):
            path = root / "qunar-logs" / f"e{i}.json"
            if entry == "record":
                ResultsStore(root).write(_record(plan, 1_700_000_000.0 + i))
            elif entry == "fifo":
                os.mkfifo(path)
            elif entry == "directory":
                path.mkdir()
            elif entry in ("loop", "dangling"):
                path.symlink_to(path.name if entry == "loop" else "gone.json")
            else:
                (path.with_name(f".e{i}.json") if entry == "hidden" else path.with_suffix(".txt")).write_text(
                    "x"
                )
            if entry in ("fifo", "directory", "loop", "dangling"):
                odd.append(path.name)
        try:
            records = ResultsStore(root).records()
        except BadInput as exc:
            assert odd and f"qunar-logs/{min(odd)}: " in exc.message and "\n" not in exc.message
            return
    assert not odd and len(records) == entries.count("record")
