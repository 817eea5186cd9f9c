"""A capture shaped into client groups (tuner.model.capture): the groups, their rates, sizes, keys
and acks, the lab scale, and the files `kbt sweep` loads (tuner.render.capture)."""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.capture_records import JAVA, RDKAFKA, capture_record, client_row
from tuner.core.units import MAX_KAFKA_BYTES, MAX_TOPIC_NAME_CHARS
from tuner.core.writes import atomic_write_all
from tuner.measure.capture_log import MAX_ROW_TOPICS, OTHER_TOPICS, read_produce_traffic
from tuner.measure.distinct_count import EXACT_LIMIT, STANDARD_ERROR
from tuner.measure.request_log import read_request_logs
from tuner.model.capture import ShapeOptions, group_key, kind_of_software, shape, size_buckets
from tuner.render.capture import capture_files, capture_text, read_capture
from tuner.spec.loader import load_sweep
from tuner.spec.workload import MAX_EVENT_BYTES
from tuner.store.capture import CaptureRecord


def _mix() -> CaptureRecord:
    clients = [
        # 4 Java producers (client ids producer-1..4) on each of 3 brokers, keyless, acks all
        *[client_row(f"producer-{i}", JAVA, f"b{b}", 500, "orders") for i in range(1, 5) for b in range(3)],
        # 2 librdkafka producers sharing one client id, 2 connections per broker, acks 1
        *[
            client_row("shipper", RDKAFKA, f"b{b}", 3000, "logs", connections=2, acks={"1": 3000})
            for b in range(3)
        ],
    ]
    topics = [
        {"name": "orders", "partitions": 6, "replication_factor": 3, "records": 240_000},
        {"name": "logs", "partitions": 12, "replication_factor": 3, "records": 90_000},
    ]
    samples = [
        {"topic": "orders", "value_bytes": [400] * 100, "key_bytes": [], "keyless": 100},
        {
            "topic": "logs",
            "value_bytes": [800] * 50 + [1600] * 50,
            "key_bytes": [8] * 100,
            "distinct_keys": 40,
        },
    ]
    return capture_record(clients, topics, samples)


def test_groups_rates_sizes_keys_and_acks() -> None:
    plan = shape(_mix())
    groups = {g.name: g for g in plan.groups}
    assert set(groups) == {"producer-apache-kafka-java", "shipper-confluent-kafka-python"}
    java, shipper = groups["producer-apache-kafka-java"], groups["shipper-confluent-kafka-python"]
    assert (java.kind, java.producers, java.acks, java.key_cardinality) == ("java", 4, "all", None)
    assert java.records_per_s == pytest.approx(2400.0)
    assert java.requests_per_s == pytest.approx(60.0)
    assert java.workload["rate_per_producer"] == pytest.approx(600.0)
    assert (shipper.kind, shipper.producers, shipper.acks, shipper.key_cardinality) == (
        "librdkafka",
        2,
        "1",
        40,
    )
    assert shipper.records_per_s == pytest.approx(900.0)
    assert shipper.workload["message"]["kind"] == "size_distribution"
    assert shipper.record_bytes == pytest.approx(1208.0)  # 800/1600 values and their 8-byte keys
    assert plan.scale == 1.0
    assert plan.worst_offender == "shipper-confluent-kafka-python"


@pytest.mark.parametrize(
    ("partitions_read", "written", "keys"),
    [
        (None, 12, 40),  # a capture before partitions_read was kept: the keys as seen
        (12, 12, 40),  # every written partition read
        (9, 12, 53),  # a read cut after 9 of 12 partitions: the 3 unread stand for their share
        (6, 6, 40),  # half the partitions written in the window, all of them read
    ],
)
def test_key_cardinality_counts_the_partitions_a_sample_did_not_read(
    partitions_read: int | None, written: int, keys: int
) -> None:
    """A key hashes to one partition: a sample that read some of the written partitions saw their
    share of the keys, not fewer keys."""
    record = _mix().model_dump()
    logs = next(t for t in record["topics"] if t["name"] == "logs")
    logs["partition_records"] = [7_500] * written + [0] * (12 - written)
    record["samples"][1]["partitions_read"] = partitions_read
    groups = {g.name: g for g in shape(CaptureRecord.model_validate(record)).groups}
    assert groups["shipper-confluent-kafka-python"].key_cardinality == keys


def test_lab_scale_keeps_each_producer_and_states_the_factor() -> None:
    plan = shape(_mix(), ShapeOptions(lab_producers=3))
    assert plan.scale == pytest.approx(0.5)
    java = next(g for g in plan.groups if g.kind == "java")
    assert (java.producers, java.lab_producers) == (4, 2)
    assert java.workload["rate_per_producer"] == pytest.approx(600.0)  # per producer unchanged
    assert "scale 0.5" in java.workload["description"]


def test_linger_is_inferred_from_the_request_rate() -> None:
    """One keyless librdkafka producer at 1000 records/s to 1 partition: linger 0 sends about one
    request per record, linger 100 ms about 10 per second; the inference tells them apart."""
    topics = [{"name": "t", "partitions": 1, "replication_factor": 1, "records": 100_000}]
    samples = [{"topic": "t", "value_bytes": [200] * 100, "keyless": 100}]
    fast = shape(capture_record([client_row("a", RDKAFKA, "b0", 90_000, "t")], topics, samples)).groups[0]
    slow = shape(capture_record([client_row("a", RDKAFKA, "b0", 1_000, "t")], topics, samples)).groups[0]
    assert fast.linger_ms is not None and slow.linger_ms is not None
    assert fast.linger_ms < slow.linger_ms
    assert slow.linger_ms >= 50


def test_written_specs_load_as_sweeps(tmp_path: Path) -> None:
    plan = shape(_mix())
    atomic_write_all(capture_files(tmp_path, _mix(), plan))
    for group in plan.groups:
        loaded = load_sweep(tmp_path / group.name / "sweep.yaml")
        (run,) = loaded.spec.expand(tmp_path / group.name)
        assert run.profile.client == group.kind
        assert run.workload.producers == group.lab_producers


def test_capture_json_is_the_record_and_plan_and_reads_back(tmp_path: Path) -> None:
    # request times held as 8-byte floats, written as the JSON list they always were; a client id of
    # a hostile log (a control character, a quote, not ASCII) written and read back as it is
    odd = client_row('é\x1b"\n-1', JAVA, "b0", 600, "orders", total_time_ms=[0.5, 2, 1e6])
    record = capture_record([*_mix().clients, odd], _mix().topics, _mix().samples)
    plan = shape(record)
    times = record.clients[-1].total_time_ms
    assert isinstance(times, array) and times.itemsize == 8 and list(times) == [0.5, 2.0, 1e6]
    text = capture_text(record, plan)
    assert json.loads(text) == {
        "record": record.model_dump(mode="json"),
        "plan": plan.model_dump(mode="json"),
    }
    assert json.loads(text)["record"]["clients"][-1]["total_time_ms"] == [0.5, 2.0, 1e6]
    atomic_write_all(capture_files(tmp_path, record, plan))
    assert read_capture(tmp_path) == (record, plan)


def _log_line(
    at: float, client: str, port: int, acks: Any, host: str = "127.0.0.1", topic: str | None = None
) -> str:
    import json
    from datetime import datetime

    stamp = datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S,") + f"{int(at * 1000) % 1000:03d}"
    # produce v13+ (the Java client 4.x) names the topic by its id, older versions by its name
    named = {"topicId": "Mp3W20wRRhKG1b0IXmBLIA"} if port % 2 and topic is None else {"name": topic or "t"}
    body = {
        "requestHeader": {"requestApiKey": 0, "clientId": client},
        "request": {
            **({} if acks is None else {"acks": acks}),
            "topicData": [{**named, "partitionData": [{"index": 0, "recordsSizeInBytes": 500}]}],
        },
        "connection": f"127.0.0.1:9092-{host}:{port}-0-1",
        "totalTimeMs": 2.5,
        "clientInformation": {"softwareName": "apache-kafka-java", "softwareVersion": "4.1.1"},
    }
    return f"[{stamp}] DEBUG Completed request:{json.dumps(body)} (kafka.request.logger)\n"


def test_request_log_lines_become_client_rows(tmp_path: Path) -> None:
    line = _log_line
    t0 = 1_795_000_000.0
    lines = [line(t0 + i * 0.1, "app-1", 40000 + i % 3, -1) for i in range(30)]
    lines += [line(t0 + 50, "late", 41000, 1)]  # outside the window
    path = tmp_path / "broker.log"
    path.write_text("".join(lines))
    (row,) = read_produce_traffic([path], t0, t0 + 10, {"Mp3W20wRRhKG1b0IXmBLIA": "t"}).rows
    assert (row["client_id"], row["broker"], row["requests"], row["connections"]) == (
        "app-1",
        "127.0.0.1:9092",
        30,
        3,
    )
    assert row["acks"] == {"-1": 30} and row["topic_bytes"] == {"t": 15000}
    assert row["total_time_ms"] == array("d", [2.5] * 30)  # 8 bytes a time
    assert row["software"] == "apache-kafka-java 4.1.1"


def test_a_fleet_of_connections_is_counted_in_bounded_memory_and_said_estimated(tmp_path: Path) -> None:
    # One client id shared by a fleet (or reconnecting): 3000 connections on one broker, and a
    # second client with 5; the first count is an estimate and the note says so, the second exact.
    t0 = 1_795_000_000.0
    lines = [_log_line(t0, "fleet", 20000 + i % 3000, -1, host=f"10.0.{i // 3000}.1") for i in range(3000)]
    lines += [_log_line(t0, "app-1", 40000 + i, -1) for i in range(5)]
    path = tmp_path / "broker.log"
    path.write_text("".join(lines))
    traffic = read_produce_traffic([path], t0 - 1, t0 + 1)
    counts = {r["client_id"]: r["connections"] for r in traffic.rows}
    assert counts["app-1"] == 5
    assert abs(counts["fleet"] - 3000) < 3000 * 3 * STANDARD_ERROR and counts["fleet"] > EXACT_LIMIT
    (note,) = traffic.notes
    assert note.startswith(f"client connections are counted exactly up to {EXACT_LIMIT:,} per client and")
    assert f"1 estimated, fleet on 127.0.0.1:9092 (~{counts['fleet']:,})" in note
    assert "app-1" not in note


def test_a_rows_topics_are_bounded_the_rest_summed_and_said(tmp_path: Path) -> None:
    # A client writing to more topics than a row names (a hostile log's names, or a fan-out), and
    # one name longer than any Kafka topic's: their bytes are kept, under one "other topics" key.
    t0 = 1_795_000_000.0
    names = [f"topic-{i}" for i in range(MAX_ROW_TOPICS + 36)] + ["x" * (MAX_TOPIC_NAME_CHARS + 1)]
    lines = [_log_line(t0, "wide", 40000, -1, topic=name) for name in names]
    lines += [_log_line(t0, "narrow", 40001, 1, topic="topic-0") for _ in range(3)]
    path = tmp_path / "broker.log"
    path.write_text("".join(lines))
    traffic = read_produce_traffic([path], t0 - 1, t0 + 1)
    wide, narrow = traffic.rows
    assert list(wide["topic_bytes"]) == [*names[:MAX_ROW_TOPICS], OTHER_TOPICS]
    assert wide["topic_bytes"][OTHER_TOPICS] == 37 * 500
    assert sum(wide["topic_bytes"].values()) == wide["record_bytes"] == len(names) * 500
    assert narrow["topic_bytes"] == {"topic-0": 1500}
    (note,) = traffic.notes
    assert note == (
        f"bytes per topic are kept for {MAX_ROW_TOPICS} topics per client and broker, the rest summed"
        f' under "{OTHER_TOPICS}" (no topic of the plan): 1 such, wide on 127.0.0.1:9092'
    )


def test_a_lone_surrogate_of_a_log_line_is_no_refused_capture(tmp_path: Path) -> None:
    # JSON can escape half a UTF-16 pair ("\\ud800"), which no UTF-8 file can hold: a capture record
    # refuses such a text, so one hostile line made the whole window's capture unkeepable
    t0 = 1_795_000_000.0
    line = _log_line(t0, "app\ud800-1", 40000, -1, host="127.0.0.\udc80", topic="t\udfff")
    path = tmp_path / "broker.log"
    path.write_text(line.replace("apache-kafka-java", "java\\ud800"), encoding="utf-8")
    (row,) = read_produce_traffic([path], t0 - 1, t0 + 1).rows
    assert (row["client_id"], list(row["topic_bytes"]), row["software"]) == (
        "app\ufffd-1",
        ["t\ufffd"],
        "java\ufffd 4.1.1",
    )
    topics = [{"name": "t\ufffd", "partitions": 1, "replication_factor": 1, "records": 1}]
    record = capture_record([row], topics, [], start=t0 - 1, end=t0 + 59)
    assert capture_text(record, shape(record)).isascii()


@pytest.mark.parametrize("acks", [7, -2, "all", "1", True, 1.0, None, [1]])
def test_acks_other_than_minus_1_0_1_make_a_line_unreadable(tmp_path: Path, acks: Any) -> None:
    # acks is a key of a row's counts: a line whose acks Kafka would refuse (or none, in a logged
    # body) is unreadable, counted as such by capture and diagnose alike, and makes no key
    t0 = 1_795_000_000.0
    lines = [_log_line(t0, "app", 40000, a) for a in (-1, 0, 1)]
    lines += [_log_line(t0, "app", 40000, acks) for _ in range(4)]
    path = tmp_path / "broker.log"
    path.write_text("".join(lines))
    traffic = read_produce_traffic([path], t0 - 1, t0 + 1)
    (row,) = traffic.rows
    assert (row["requests"], row["acks"], traffic.unreadable) == (3, {"-1": 1, "0": 1, "1": 1}, 4)
    _, coverage = read_request_logs([path], t0 - 1, t0 + 1)
    assert (coverage[0]["produce_requests"], coverage[0]["unreadable_lines"]) == (3, 4)


@pytest.mark.parametrize(
    ("software", "client_id", "kind"),
    [
        (JAVA, "producer-1", "java"),
        (RDKAFKA, "x", "librdkafka"),
        ("sarama 1.43", "beats", "filebeat"),
        ("", "beats", "filebeat"),
        ("kgo 1.18", "otel", "otelcol"),
        ("something-else 1", "x", "librdkafka"),
    ],
)
def test_kind_of_software(software: str, client_id: str, kind: str) -> None:
    assert kind_of_software(software, client_id)[0] == kind


def test_group_key_strips_the_instance_number() -> None:
    assert [group_key(c) for c in ("producer-12", "kbt-java-3", "beats", "7", "app_2")] == [
        "producer", "kbt-java", "beats", "7", "app"
    ]  # fmt: skip


_IDS = st.sampled_from(["producer-1", "producer-2", "beats", "app", "svc-9", ""])
_SOFT = st.sampled_from([JAVA, RDKAFKA, "", "sarama 1.0", "weird-client 0.1"])


@st.composite
def _records(draw: st.DrawFn) -> CaptureRecord:
    ints = st.integers
    chosen = draw(st.lists(st.sampled_from(["a", "b", "c.d", "e_f"]), min_size=1, max_size=4, unique=True))
    topics = [
        {
            "name": n,
            "partitions": draw(ints(1, 50)),
            "replication_factor": draw(ints(1, 5)),
            "records": draw(ints(0, 10**9)),
        }
        for n in chosen
    ]
    names: list[str] = [*chosen, "unlisted"]

    def row(requests: int) -> dict[str, Any]:
        # what a capture can hold: no more connections or acks counted than requests, a request's
        # bytes within Kafka's
        acks = st.dictionaries(
            st.sampled_from(["-1", "0", "1", "7"]), ints(1, max(1, requests // 3)), max_size=min(3, requests)
        )
        return client_row(
            draw(_IDS),
            draw(_SOFT),
            f"b{draw(ints(0, 4))}",
            requests,
            draw(st.sampled_from(names)),
            record_bytes=draw(ints(0, min(10**10, requests * MAX_KAFKA_BYTES))),
            connections=draw(ints(0, min(5000, requests))),
            acks=draw(acks),
            total_time_ms=draw(st.lists(st.floats(0, 1e5), max_size=5)),
        )

    clients = [row(draw(ints(1, 10**7))) for _ in range(draw(ints(0, 8)))]
    samples = [
        {
            "topic": draw(st.sampled_from(names)),
            "value_bytes": draw(st.lists(ints(0, 10**6), max_size=30)),
            "key_bytes": draw(st.lists(ints(0, 100), max_size=30)),
            "keyless": draw(ints(0, 30)),
            "distinct_keys": draw(ints(0, 30)),
        }
        for _ in range(draw(ints(0, 4)))
    ]
    return capture_record(clients, topics, samples)


@settings(max_examples=15, deadline=None)
@given(_records(), st.integers(1, 512))
def test_any_capture_shapes_into_specs_that_load(
    tmp_path_factory: pytest.TempPathFactory, record: CaptureRecord, lab: int
) -> None:
    plan = shape(record, ShapeOptions(lab_producers=lab, infer_linger=False))
    assert 0 < plan.scale <= 1
    assert len({g.name for g in plan.groups}) == len(plan.groups)
    out = tmp_path_factory.mktemp("capture")
    atomic_write_all(capture_files(out, record, plan))
    for group in plan.groups:
        assert group.lab_producers <= max(group.producers, 1)
        (run,) = load_sweep(out / group.name / "sweep.yaml").spec.expand(out / group.name)
        assert run.workload.rate_per_producer == pytest.approx(group.workload["rate_per_producer"])


@pytest.mark.parametrize("sampled", [False, True])
def test_records_above_the_largest_generated_are_replayed_at_it(tmp_path: Path, sampled: bool) -> None:
    """Wire bytes over few records (no sample), or a sampled record of a broker whose limit was
    raised: the replay's records are the largest kbt generates, and its spec loads."""
    topics = [{"name": "t", "partitions": 1, "replication_factor": 1, "records": 10}]
    huge = MAX_EVENT_BYTES + 1
    samples = [{"topic": "t", "value_bytes": [100, huge], "keyless": 2}] if sampled else []
    client = client_row("a", JAVA, "b0", 10, "t", record_bytes=10 * huge + 10_000)
    record = capture_record([client], topics, samples)
    plan = shape(record, ShapeOptions(infer_linger=False))
    atomic_write_all(capture_files(tmp_path, record, plan))
    (group,) = plan.groups
    (run,) = load_sweep(tmp_path / group.name / "sweep.yaml").spec.expand(tmp_path / group.name)
    message = run.workload.message.model_dump()
    largest = max([b["bytes"] for b in message.get("buckets", [])] or [message.get("bytes", 0)])
    assert largest == MAX_EVENT_BYTES


def test_size_buckets_keep_the_mean() -> None:
    sizes = [100] * 70 + [5000] * 30
    buckets = size_buckets(sizes)
    mean = sum(b["bytes"] * b["weight"] for b in buckets) / sum(b["weight"] for b in buckets)
    assert mean == pytest.approx(sum(sizes) / len(sizes), rel=0.01)
    assert size_buckets([]) == []


@pytest.mark.parametrize("observed", [30.0, 70.0, 150.0])
def test_the_inferred_linger_reproduces_the_observed_rate(observed: float) -> None:
    """Between two of the usual lingers (5, 10, 20, 50 ms ...) the rate can differ by half: the
    inference settles on a whole millisecond whose predicted rate is within a tenth of what was seen
    (the last acceptance run's Java group: observed 290.9 requests/s, nearest usual linger 10 ms
    predicted 224.7, and its replay sent 214)."""
    topics = [{"name": "t", "partitions": 1, "replication_factor": 1, "records": 100_000}]
    samples = [{"topic": "t", "value_bytes": [200] * 100, "keyless": 100}]
    for software in (RDKAFKA, JAVA):
        client = client_row("a", software, "b0", int(observed * 100), "t")
        group = shape(capture_record([client], topics, samples)).groups[0]
        assert group.linger_ms is not None and group.linger_ms == int(group.linger_ms), group.linger_ms
        assert group.predicted_requests_per_s == pytest.approx(observed, rel=0.1), (software, group.evidence)


def test_the_capture_reader_parses_only_produce_lines(tmp_path: Path) -> None:
    """Fetch lines (most of a broker's request log) are recognised by their API key and skipped,
    even when their JSON would not parse; a logged request without an API key is unreadable."""
    import json

    stamp = "[2026-11-29 10:00:00,000] DEBUG Completed request:"
    produce = {"requestHeader": {"requestApiKey": 0, "clientId": "app"}, "request": {"acks": 1},
               "connection": "127.0.0.1:9092-127.0.0.1:40000-0-1"}  # fmt: skip
    lines = [
        f"{stamp}{json.dumps(produce)} (kafka.request.logger)",
        *[f'{stamp}{{"requestHeader":{{"requestApiKey":1,"clientId":"f"}},"request":{{"topics":[ (k)'] * 2,
        f'{stamp}{{"requestHeader":{{"clientId":"x"}}}} (kafka.request.logger)',
    ]
    path = tmp_path / "broker.log"
    path.write_text("\n".join(lines) + "\n")
    traffic = read_produce_traffic([path], 0, 2e9)
    assert [(r["client_id"], r["requests"]) for r in traffic.rows] == [("app", 1)]
    assert traffic.unreadable == 1


def test_a_client_named_like_the_capture_file_or_another_in_other_case_gets_its_own_folder(
    tmp_path: Path,
) -> None:
    # a client id "capture.json" made its group's folder the record's own path: the capture failed
    # at the end of its window ("cannot write capture.json"); App and app shared a folder where the
    # file system does not tell case apart
    topics = [{"name": "t", "partitions": 1, "replication_factor": 1, "records": 100_000}]
    samples = [{"topic": "t", "value_bytes": [200] * 5, "keyless": 5}]
    rows = [client_row(c, "", "b0", n, "t") for c, n in (("capture.json", 900), ("App", 800), ("app", 700))]
    record = capture_record(rows, topics, samples)
    plan = shape(record, ShapeOptions(duration_s=60))
    names = [g.name for g in plan.groups]
    assert names == ["capture.json-2", "App", "app-2"]
    written = atomic_write_all(capture_files(tmp_path, record, plan))
    assert (tmp_path / "capture.json").is_file() and len(written) == 1 + 3 * len(names)
