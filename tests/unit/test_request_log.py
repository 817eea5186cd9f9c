"""Each client's produce requests counted from Kafka's request log (tuner.measure.request_log) and
joined to the sensors' clients (tuner.model.clients); files written here in the broker's format."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.unit.rendered import as_text
from tuner.core.errors import BadInput
from tuner.measure import request_log
from tuner.measure.capture_log import read_produce_traffic
from tuner.measure.request_log import read_request_logs
from tuner.model.clients import attribute_clients
from tuner.model.diagnosis import diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.render.diagnosis import client_table
from tuner.store.snapshot import BrokerSnapshot, ClientRequests, ClientSnapshot, ClusterSnapshot

T0 = 1_795_000_000.0  # a window's start, epoch seconds


def _line(at: float, client: str, api: int = 0, sizes: tuple[int, ...] = (1000,), **extra: Any) -> str:
    stamp = datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S,") + f"{int(at * 1000) % 1000:03d}"
    request: dict[str, Any] = {
        "isForwarded": False,
        "requestHeader": {"requestApiKey": api, "correlationId": 1, "clientId": client},
        "request": {"acks": -1, "topicData": [{"name": "t", "partitionData": [
            {"index": i, "recordsSizeInBytes": s} for i, s in enumerate(sizes)
        ]}]},
        "totalTimeMs": 1.5,
        "principal": "User:ANONYMOUS",
        "clientInformation": {"softwareName": "apache-kafka-java", "softwareVersion": "4.1.1"},
        **extra,
    }  # fmt: skip
    return f"[{stamp}] DEBUG Completed request:{json.dumps(request)} (kafka.request.logger)\n"


def _log(tmp_path: Path, lines: list[str], name: str = "broker-1.log") -> Path:
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def test_counts_produce_requests_per_client_over_the_window(tmp_path: Path) -> None:
    lines = [_line(T0 - 2, "busy", api=1)]  # a fetch logged just before: the log was on at the start
    lines += [_line(T0 + i * 0.1, "busy", sizes=(100, 200)) for i in range(100)]  # 10/s, 2 partitions
    lines += [_line(T0 + i, "batched", sizes=(16000,)) for i in range(10)]  # 1/s
    lines += ["[2026-11-26 22:46:08,982] INFO some other line (kafka.server.KafkaServer)\n"]
    lines += [_line(T0 + 10.5, "busy", api=1)]  # after the window: the log was still on at its end
    clients, coverage = read_request_logs([_log(tmp_path, lines)], T0, T0 + 10)
    rows = {c["client_id"]: c for c in clients}
    assert [c["client_id"] for c in clients] == ["busy", "batched"]
    assert rows["busy"]["produce_requests_per_s"] == pytest.approx(10.0)
    assert rows["busy"]["produce_bytes_per_s"] == pytest.approx(3000.0)
    assert rows["busy"]["partitions_per_request"] == pytest.approx(2.0)
    assert rows["batched"]["produce_requests_per_s"] == pytest.approx(1.0)
    assert rows["busy"]["software"] == "apache-kafka-java 4.1.1" and rows["busy"]["principal"] == "ANONYMOUS"
    assert coverage == [
        {
            "file": str(tmp_path / "broker-1.log"),
            "span_s": 10.0,
            "produce_requests": 110,
            "unreadable_lines": 0,
        }
    ]


def test_only_the_integer_0_is_produce_to_both_readers(tmp_path: Path) -> None:
    """JSON's false and 0.0 equal 0 in Python: neither the counts nor a capture's rows take them for
    Produce (one test of the identity both read, request_log.produce_client)."""
    lines = [_line(T0 + 1, "produce"), _line(T0 + 2, "false", api=False), _line(T0 + 3, "float", api=0.0)]
    path = _log(tmp_path, lines)
    clients, _ = read_request_logs([path], T0, T0 + 10)
    assert [c["client_id"] for c in clients] == ["produce"]
    assert [r["client_id"] for r in read_produce_traffic([path], T0, T0 + 10).rows] == ["produce"]


def test_a_client_that_announces_no_software_has_none(tmp_path: Path) -> None:
    """Filebeat 7.17's Sarama sends ApiVersions without its name: Kafka logs "unknown"."""
    line = _line(T0 + 1, "beats").replace('"apache-kafka-java"', '"unknown"').replace('"4.1.1"', '"unknown"')
    lines = [_line(T0 - 1, "f", api=1), line, _line(T0 + 11, "f", api=1)]
    clients, _ = read_request_logs([_log(tmp_path, lines)], T0, T0 + 10)
    assert [(c["client_id"], c["software"]) for c in clients] == [("beats", "")]


def test_a_log_turned_on_inside_the_window_is_a_rate_over_its_own_span(tmp_path: Path) -> None:
    """Nothing logged shortly before the window: the rate is over the logged span, not the window."""
    lines = [_line(T0 - 600, "old")]  # long before: a log that was off in between
    lines += [_line(T0 + 5 + i * 0.5, "c") for i in range(11)]  # T0+5 .. T0+10, 2/s
    clients, coverage = read_request_logs([_log(tmp_path, lines)], T0, T0 + 10)
    assert coverage[0]["span_s"] == pytest.approx(5.0)
    assert clients[0]["produce_requests_per_s"] == pytest.approx(11 / 5)


def test_the_files_of_several_brokers_add_up(tmp_path: Path) -> None:
    one = _log(tmp_path, [_line(T0 + i, "c") for i in range(11)], "broker-1.log")
    two = _log(tmp_path, [_line(T0 + i / 2, "c") for i in range(21)], "broker-2.log")
    clients, _ = read_request_logs([one, two], T0, T0 + 10)
    assert clients[0]["produce_requests_per_s"] == pytest.approx(11 / 10 + 21 / 10)


def test_nothing_in_the_window_counts_nothing(tmp_path: Path) -> None:
    clients, coverage = read_request_logs([_log(tmp_path, [_line(T0 - 100, "c")])], T0, T0 + 10)
    assert clients == [] and coverage[0]["span_s"] == 0.0 and coverage[0]["produce_requests"] == 0


def test_a_missing_file_is_one_line_of_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"none\.log: no such request log"):
        read_request_logs([tmp_path / "none.log"], T0, T0 + 10)


def test_a_request_nested_too_deeply_is_an_unreadable_line_not_an_error(tmp_path: Path) -> None:
    deep = _line(T0 + 1, "c").replace("Completed request:", "Completed request:" + "[" * 100_000, 1)
    lines = [_line(T0 - 1, "f", api=1), deep, _line(T0 + 2, "c"), _line(T0 + 11, "f", api=1)]
    clients, coverage = read_request_logs([_log(tmp_path, lines)], T0, T0 + 10)
    assert coverage[0]["unreadable_lines"] == 1 and coverage[0]["produce_requests"] == 1
    assert [c["client_id"] for c in clients] == ["c"]


def test_over_long_lines_and_too_many_clients_stay_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(request_log, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(request_log, "MAX_CLIENTS", 3)
    lines = [_line(T0 + 1, "long", sizes=tuple(range(1, 2000)))]  # one line of ~60 KB
    lines += [_line(T0 + 1 + i / 10, f"c{i}") for i in range(10)]
    clients, coverage = read_request_logs([_log(tmp_path, lines)], T0, T0 + 10)
    assert coverage[0]["unreadable_lines"] == 1
    ids = {c["client_id"] for c in clients}
    assert ids == {"c0", "c1", "c2", request_log.OTHER_CLIENTS}
    other = next(c for c in clients if c["client_id"] == request_log.OTHER_CLIENTS)
    assert other["produce_requests_per_s"] * coverage[0]["span_s"] == pytest.approx(7)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.text(max_size=300), st.binary(max_size=300).map(lambda b: b.decode("latin-1"))).map(
            lambda t: t.replace("\x00", "")  # a NUL makes it binary: refused (the test below)
        ),
        max_size=30,
    )
)
def test_any_text_around_a_request_line_leaves_its_count_alone(junk: list[str]) -> None:
    """A file of any text with one produce request line among it: no exception, that one request
    counted, nothing else."""
    import tempfile

    valid = _line(T0 - 1, "f", api=1) + _line(T0 + 5, "the-client") + _line(T0 + 11, "f", api=1)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.log"
        text = "\n".join([*junk[: len(junk) // 2], valid.rstrip("\n"), *junk[len(junk) // 2 :]])
        # a file that opens with zip's signature (plain ASCII) or bzip2's header is refused as packed
        assume(not re.match(r"PK\x03\x04|BZh[1-9]1AY&SY", text))
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        clients, coverage = read_request_logs([path], T0, T0 + 10)
    assert coverage[0]["produce_requests"] == 1
    assert [(c["client_id"], c["produce_requests_per_s"]) for c in clients] == [("the-client", 0.1)]


LOGGED = st.tuples(
    st.integers(-300, 400).map(lambda n: n / 10),  # seconds from T0: before, inside, after the window
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from([0, 0, 1, 3]),  # mostly produce
    st.sampled_from(["ok", "ok", "cut", "deep", "junk"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(LOGGED, max_size=40), st.lists(LOGGED, max_size=10))
def test_diagnose_and_capture_read_one_log_alike(
    first: list[tuple[float, str, int, str]], second: list[tuple[float, str, int, str]]
) -> None:
    """The rates of diagnose and the tallies of capture come from one reader of a request log: the
    same produce requests inside the window per client, and the same unreadable lines."""
    import tempfile

    def text(logged: list[tuple[float, str, int, str]]) -> str:
        lines = []
        for at, client, api, shape in logged:
            line = _line(T0 + at, client, api=api)
            if shape == "cut":  # a request whose JSON ends early
                line = line[: line.index('"totalTimeMs"')] + "\n"
            elif shape == "deep":
                line = line.replace('"isForwarded": false', '"x": ' + "[" * 5000 + "]" * 5000)
            elif shape == "junk":
                line = f"[{line[1:24]}] INFO another logger's line\n"
            lines.append(line)
        return "".join(lines)

    with tempfile.TemporaryDirectory() as d:
        paths = [_log(Path(d), [text(first)], "broker-1.log"), _log(Path(d), [text(second)], "broker-2.log")]
        _, coverage = read_request_logs(paths, T0, T0 + 10)
        traffic = read_produce_traffic(paths, T0, T0 + 10)
    assert sum(c["produce_requests"] for c in coverage) == sum(r["requests"] for r in traffic.rows)
    assert sum(c["unreadable_lines"] for c in coverage) == traffic.unreadable
    counted: dict[str, int] = {}
    for r in traffic.rows:
        counted[r["client_id"]] = counted.get(r["client_id"], 0) + r["requests"]
    inside = [c for at, c, api, shape in first + second if 0 <= at <= 10 and api == 0 and shape == "ok"]
    assert counted == {c: inside.count(c) for c in set(inside)}


def test_a_text_that_opens_as_a_zip_is_refused_in_one_line(tmp_path: Path) -> None:
    """Zip's signature is plain ASCII: a log that opens with it is taken for a packed file (what the
    property above leaves out)."""
    path = tmp_path / "x.log"
    path.write_bytes(b"PK\x03\x04\n" + _line(T0 + 5, "the-client").encode())
    with pytest.raises(BadInput, match="zip-compressed data, not a request log: unpack it first"):
        read_request_logs([path], T0, T0 + 10)


def _snapshot(clients: list[ClientSnapshot], counted: list[ClientRequests]) -> ClusterSnapshot:
    broker = BrokerSnapshot(
        broker="1", produce_requests_per_s=110.0, bytes_in_per_s=46_000, network_idle_ratio=0.9
    )
    return ClusterSnapshot(
        prometheus="http://p",
        end=T0,
        window_s=60,
        step_s=5,
        brokers=[broker],
        clients=clients,
        client_requests=counted,
    )


def test_counts_replace_the_sensors_estimate_and_add_the_unsensed_clients() -> None:
    sensed = [
        ClientSnapshot(broker="1", client_id="filebeat", request_threads=0.05, produce_bytes_per_s=30_000),
        ClientSnapshot(broker="1", client_id="batched", request_threads=0.02, produce_bytes_per_s=16_000),
    ]
    counted = [
        ClientRequests(client_id="filebeat", principal="logs", software="kgo v1.22.2",
                       produce_requests_per_s=100, produce_bytes_per_s=30_000, partitions_per_request=2.5),
        ClientRequests(client_id="new", principal="ANONYMOUS", produce_requests_per_s=9,
                       produce_bytes_per_s=900),
    ]  # fmt: skip
    found = {e.client_id: e for e in attribute_clients(_snapshot(sensed, counted), 16384)}
    fb = found["filebeat"]
    assert fb.counted and fb.rate_bound is None and fb.produce_requests_per_s == 100
    assert fb.bytes_per_request == pytest.approx(300) and fb.partitions_per_request == 2.5
    assert fb.request_threads == 0.05 and fb.software == "kgo v1.22.2"
    assert fb.threads_freed is not None and fb.requests_cut == pytest.approx(16384 / 300)
    assert not found["batched"].counted  # the logs did not see it: the sensors' estimate stays
    new = found["new"]
    assert (
        new.counted and new.request_threads is None and new.time_share is None and new.threads_freed is None
    )
    assert next(e.client_id for e in attribute_clients(_snapshot(sensed, counted), 16384)) == "filebeat"
    d = diagnose(_snapshot(sensed, counted), DiagnoseThresholds())
    table = client_table(d)
    assert table is not None
    text = as_text(table)
    assert "request logs: req/s counted" in text and "kgo v1.22.2" in text and "100.0" in text


def test_a_client_id_is_shown_as_written_not_as_markup_or_control_codes() -> None:
    counted = [
        ClientRequests(
            client_id="[bold red]x\x1b[2J", software="[link=http://e]s", produce_requests_per_s=5,
            produce_bytes_per_s=500,
        )
    ]  # fmt: skip
    d = diagnose(_snapshot([], counted), DiagnoseThresholds())
    table = client_table(d)
    assert table is not None
    text = as_text(table)
    assert "[bold red]x\\x1b[2J" in text and "[link=http://e]s" in text


def test_a_partition_size_no_kafka_size_can_be_counts_no_bytes(tmp_path: Path) -> None:
    # recordsSizeInBytes is a Java int: 2**31 is a damaged line, and would make a capture record
    # whose bytes no request can carry (refused when read back)
    lines = [_line(T0 + 1, "app", sizes=(2**31 - 1, 2**31, 10**30, 500))]
    (row,) = read_produce_traffic([_log(tmp_path, lines)], T0, T0 + 10).rows
    assert (row["partitions"], row["record_bytes"]) == (4, 2**31 - 1 + 500)


def test_a_client_id_is_kept_to_its_bound(tmp_path: Path) -> None:
    """A hostile log's client ids of near a line's megabyte: each row keeps MAX_CLIENT_TEXT characters
    of it (10,000 rows of a megabyte each were 10 GB held through the read)."""
    long_id = "x" * 500_000
    path = _log(tmp_path, [_line(T0 + 1, long_id + "-1"), _line(T0 + 2, long_id + "-2")])
    (row,) = read_produce_traffic([path], T0, T0 + 10).rows
    assert (row["client_id"], row["requests"]) == ("x" * request_log.MAX_CLIENT_TEXT, 2)
