"""A workload topic that pins its partitions' leaders (TopicSpec.leaders): the field's checks, the
replica assignment a run creates it with (tuner.target.topics), and `kbt capture` writing the
source's leaders onto the lab's brokers (tuner.model.capture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.capture_records import RDKAFKA, capture_record, client_row
from tuner.core.errors import BadInput
from tuner.core.writes import atomic_write_all
from tuner.model.capture import broker_map, shape
from tuner.render.capture import capture_files
from tuner.spec.loader import load_sweep, load_workload
from tuner.spec.sweep import spec_hash
from tuner.spec.workload import MAX_BROKER_ID, TopicSpec
from tuner.store.capture import CaptureRecord
from tuner.target.topics import check_fits_cluster, replica_assignment

_WORKLOAD = """\
name: w
topics: [{{name: t, partitions: {partitions}{extra}}}]
rate_per_producer: 10
message: {{kind: generated, bytes: 100}}
duration_s: 10
"""


def _load(tmp_path: Path, partitions: int, extra: str = "") -> Any:
    path = tmp_path / "w.yaml"
    path.write_text(_WORKLOAD.format(partitions=partitions, extra=extra))
    return load_workload(path)


@settings(max_examples=40)
@given(data=st.data(), partitions=st.integers(1, 40), replicas=st.integers(1, 4))
def test_leaders_one_per_partition_load(
    tmp_path_factory: Any, data: Any, partitions: int, replicas: int
) -> None:
    leaders = data.draw(st.lists(st.integers(0, MAX_BROKER_ID), min_size=partitions, max_size=partitions))
    extra = f", replication_factor: {replicas}, leaders: {leaders}"
    workload = _load(tmp_path_factory.mktemp("w"), partitions, extra)
    assert workload.topics[0].leaders == leaders
    assert workload.topics[0].model_dump(mode="json")["leaders"] == leaders


@settings(max_examples=40)
@given(partitions=st.integers(1, 40), count=st.integers(0, 45))
def test_a_leader_count_other_than_the_partitions_is_one_line(
    tmp_path_factory: Any, partitions: int, count: int
) -> None:
    if count == partitions:
        count += 1
    extra = f", leaders: {[1] * count}"
    with pytest.raises(BadInput) as caught:
        _load(tmp_path_factory.mktemp("w"), partitions, extra)
    message = caught.value.message
    assert "\n" not in message
    assert f"leaders: {count} broker id(s) for {partitions} partition(s)" in message


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("[-1]", "greater than or equal to 0"),
        (f"[{MAX_BROKER_ID + 1}]", f"less than or equal to {MAX_BROKER_ID}"),
    ],
)
def test_a_broker_id_out_of_range_is_one_line(tmp_path: Path, value: str, shown: str) -> None:
    with pytest.raises(BadInput) as caught:
        _load(tmp_path, 1, f", leaders: {value}")
    assert "\n" not in caught.value.message
    assert "leaders" in caught.value.message and shown in caught.value.message


def test_a_topic_without_leaders_hashes_as_before() -> None:
    # Records made before the field carry their spec hash: a spec without leaders dumps as it did.
    topic = TopicSpec(name="t", partitions=3)
    assert "leaders" not in topic.model_dump(mode="json")
    assert spec_hash(topic) == spec_hash(
        {"configs": {}, "name": "t", "partitions": 3, "replication_factor": 1}
    )


@settings(max_examples=100)
@given(
    brokers=st.lists(st.integers(0, 1000), min_size=1, max_size=8, unique=True),
    data=st.data(),
)
def test_replicas_start_at_the_pinned_leader(brokers: list[int], data: Any) -> None:
    partitions = data.draw(st.integers(1, 30))
    replicas = data.draw(st.integers(1, len(brokers)))
    leaders = data.draw(st.lists(st.sampled_from(brokers), min_size=partitions, max_size=partitions))
    spec = TopicSpec(name="t", partitions=partitions, replication_factor=replicas, leaders=leaders)
    assignment = replica_assignment(spec, brokers)
    assert assignment is not None and len(assignment) == partitions
    ordered = sorted(brokers)
    for leader, row in zip(leaders, assignment, strict=True):
        assert row[0] == leader
        assert len(set(row)) == replicas and set(row) <= set(brokers)
        # the followers are the next brokers in id order, wrapping
        start = ordered.index(leader)
        assert row == [ordered[(start + k) % len(ordered)] for k in range(replicas)]


def test_unpinned_topics_get_no_assignment() -> None:
    assert replica_assignment(TopicSpec(name="t", partitions=3), [1, 2, 3]) is None


def test_a_leader_the_cluster_lacks_is_refused_in_one_line() -> None:
    spec = TopicSpec(name="t", partitions=4, replication_factor=2, leaders=[1, 4, 2, 5])
    with pytest.raises(BadInput) as caught:
        check_fits_cluster([spec], 3, [1, 2, 3])
    assert (
        caught.value.message
        == "workload.topics[0].leaders names brokers 4, 5; the cluster has brokers 1, 2, 3"
    )
    check_fits_cluster([spec], 3)  # without the ids only the replication factor is checked


# ---- kbt capture writes the source's leaders onto the lab's brokers -----------------------------


def _capture(broker_ids: list[int], leaders: list[int]) -> CaptureRecord:
    client = client_row("svc-1", RDKAFKA, "1", 1000, "orders")
    topic = {"name": "orders", "partitions": len(leaders), "replication_factor": 3, "leaders": leaders,
             "records": 10_000}  # fmt: skip
    return capture_record([client], [topic], [], brokers=len(broker_ids), broker_ids=broker_ids)


def test_capture_pins_the_source_leaders(tmp_path: Path) -> None:
    record = _capture([11, 12, 13], [12, 13, 11, 11, 12, 13])
    plan = shape(record)
    (group,) = plan.groups
    assert group.workload["topics"][0]["leaders"] == [2, 3, 1, 1, 2, 3]
    assert plan.broker_map == {"11": 1, "12": 2, "13": 3}
    assert not any("modulo" in note for note in plan.notes)
    atomic_write_all(capture_files(tmp_path, record, plan))
    (run,) = load_sweep(tmp_path / group.name / "sweep.yaml").spec.expand(tmp_path / group.name)
    assert run.workload.topics[0].leaders == [2, 3, 1, 1, 2, 3]


def test_fewer_lab_brokers_map_by_modulo_and_say_so() -> None:
    from tuner.model.capture import ShapeOptions

    record = _capture([1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
    plan = shape(record, ShapeOptions(lab_brokers=3))
    assert plan.groups[0].workload["topics"][0]["leaders"] == [1, 2, 3, 1, 2]
    assert plan.groups[0].workload["topics"][0]["replication_factor"] == 3
    (note,) = [n for n in plan.notes if "modulo" in n]
    assert "5 brokers" in note and "lab's 3" in note


def test_a_leaderless_partition_leaves_the_placement_to_kafka() -> None:
    plan = shape(_capture([1, 2, 3], [1, -1, 3]))
    assert "leaders" not in plan.groups[0].workload["topics"][0]


def test_older_captures_map_the_brokers_that_lead() -> None:
    record = _capture([], [7, 9, 7])
    assert broker_map(record, 3) == {7: 1, 9: 2}


def test_topic_ids_are_spelled_as_kafka_logs_them() -> None:
    # The Python client prints a Uuid in standard base64; Kafka's request log in URL-safe base64
    # without padding: an id with + or / matched no request and its group was left out.
    import base64

    from confluent_kafka import Uuid

    from tuner.measure.capture_read import kafka_topic_id

    logged = "WRBoPkUUSc-Gsd-2Pi_VAQ"  # a topic id as a broker's log printed it
    raw = base64.urlsafe_b64decode(logged + "==")
    uuid = Uuid(int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True))
    assert str(uuid) != logged
    assert kafka_topic_id(str(uuid)) == logged
