"""librdkafka's own log lines (tuner.core.client_log): a real producer pointed at a closed loopback
port logs connection failures within a second or two; they land in the run's file, never on the
terminal, and come back as one summary line by facility, in the run's record too."""

from __future__ import annotations

import logging
import os
import socket
import time
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.strategies as st
import pytest

from tests.unit.synthetic_records import qunar_plans
from tuner.core.client_log import ENV, client_logger, kept_in, line_of, summary, tally
from tuner.core.kafka_clients import Connection, new_consumer, new_producer
from tuner.driver.result import ClientResult, DeliveryResult, DriverResult
from tuner.runner.lifecycle import Observer, RunLifecycle, RunPolicy
from tuner.store import capture_environment
from tuner.store.results import ResultsStore
from tuner.target.base import LabSide, Target

LINES_WITHIN_S = 8.0  # librdkafka retries a refused connection within a second; generous on a busy host


def closed_port() -> int:
    """A loopback port nothing listens on: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def refused_producer(until: Any, settings: dict[str, Any] | None = None) -> None:
    """A kbt-built producer at a closed port, polled until `until()` says its lines came."""
    conn = Connection(f"127.0.0.1:{closed_port()}")
    producer = new_producer(conn, {"client.id": "kbt-unit", **(settings or {})})
    deadline = time.monotonic() + LINES_WITHIN_S
    while not until() and time.monotonic() < deadline:
        producer.poll(0.1)  # a logger's records are served by poll
    producer.flush(0)


def test_a_refused_producers_lines_go_to_the_file_and_one_summary_not_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "sweep" / "run--stamp.librdkafka.log"  # its directory is made on the first line
    with kept_in(log):
        refused_producer(log.exists)
    assert ENV not in os.environ  # the file is named only while inside
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    lines = log.read_text().splitlines()
    assert lines and all(line.startswith("%3|") and "|FAIL|kbt-unit#producer-" in line for line in lines)
    assert "Connection refused" in lines[0]
    said = summary(log, "the run's file")
    n = len(lines)
    assert said == (
        f"librdkafka logged {n} line{'' if n == 1 else 's'}, {n} at error level "
        f"(FAIL {n}: broker connection failed); the lines are in the run's file"
    )


def test_a_refused_consumers_lines_go_to_the_file_as_a_producers_do(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """new_consumer and new_producer are built one way: librdkafka's lines through kbt's logger."""
    log = tmp_path / "run--stamp.librdkafka.log"
    with kept_in(log):
        consumer = new_consumer(Connection(f"127.0.0.1:{closed_port()}"), {"group.id": "kbt-unit"})
        deadline = time.monotonic() + LINES_WITHIN_S
        try:
            while not log.exists() and time.monotonic() < deadline:
                consumer.poll(0.1)  # a logger's records are served by poll
        finally:
            consumer.close()
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert "|FAIL|" in log.read_text() and "#consumer-" in log.read_text()


def test_with_no_file_named_a_line_goes_to_stderr_as_librdkafka_writes_it(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Outside any kept file (a process kbt did not start): shown, never dropped."""
    seen: list[str] = []

    def shown() -> bool:
        seen.append(capfd.readouterr().err)
        return "|FAIL|" in "".join(seen)

    refused_producer(shown)
    assert any(line.startswith("%3|") for line in "".join(seen).splitlines())


def test_a_logger_in_the_settings_wins(tmp_path: Path) -> None:
    got: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            got.append(record)

    own = logging.getLogger(f"kbt.unit.own.{id(got)}")
    own.propagate = False
    own.addHandler(Kept())
    log = tmp_path / "run.librdkafka.log"
    with kept_in(log):
        refused_producer(lambda: bool(got), {"logger": own})
    assert got and not log.exists()
    assert got[0].args is not None and got[0].args[0] == "FAIL"  # type: ignore[index]


def test_a_commands_lines_outside_a_run_are_summarised_once_at_its_end(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import click

    from tuner.cli.app import _run

    def body() -> None:
        refused_producer(lambda: bool(os.environ.get(ENV)) and Path(os.environ[ENV]).exists())

    _run(click.Command("unit", callback=body), [])
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("librdkafka logged ") and "(FAIL " in err
    log = Path(err.rstrip("\n").rsplit("; the lines are in ", 1)[1])
    try:
        assert log.is_file() and "|FAIL|kbt-unit#producer-" in log.read_text()
    finally:
        log.unlink()


class _RefusedEngine:
    """A run's load as a driver does it, cut to one real producer whose brokers refuse it."""

    def run(self, plan: Any, topics: list[str], run_id: str, target: Any, hold: Any = None) -> DriverResult:
        refused_producer(lambda: bool(os.environ.get(ENV)) and Path(os.environ[ENV]).exists())
        now = time.time()
        workload = plan.workload
        client = ClientResult(
            engine="librdkafka", producers=workload.producers, processes=workload.processes,
            started_at=now - 2, window_start=now - 1, window_end=now, finished_at=now,
        )  # fmt: skip
        return DriverResult(client=client, delivery=DeliveryResult(), topics=topics)


class _NoTopics(RunPolicy):
    """No broker to make topics on: the run's topics are neither made nor deleted."""

    measure_brokers = False

    def delete_topics(self, admin: Any, topics: list[str]) -> list[str]:
        return []


def test_a_runs_summary_is_in_its_record_and_its_lines_beside_it(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tuner.runner import lifecycle

    monkeypatch.setattr(lifecycle, "create_topics", lambda *a: None)  # no broker to make them on
    monkeypatch.chdir(tmp_path)
    target = Target(name="lab", kind="lab", bootstrap_servers="127.0.0.1:1", lab=LabSide(tmp_path))
    store = ResultsStore(Path("results"))
    run = RunLifecycle(target, _RefusedEngine(), None, store, capture_environment(1), Observer())  # type: ignore[arg-type]
    record, path = run.run(qunar_plans()[0], _NoTopics(), [])
    log = Path(path.removesuffix(".json") + ".librdkafka.log")
    assert log == store.client_log_path(record.run_id) and log.is_file()
    said = record.problems[-1]
    assert said.startswith("librdkafka logged ") and "FAIL " in said
    assert said.endswith(f"; the lines are in {log}")  # relative: the results directory as given
    assert capfd.readouterr().err == ""
    assert ENV not in os.environ


LEVELS = st.sampled_from([0, 5, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, 50, 99])


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    LEVELS,
    st.one_of(
        st.tuples(st.text(), st.text(), st.text()),  # confluent-kafka's (facility, client, text)
        st.tuples(st.text()),
        st.just(()),
        st.tuples(st.integers(), st.none(), st.floats()),
    ),
    st.text(),
)
def test_any_record_is_one_line_counted_once_and_an_error_never_left_out(
    levelno: int, args: tuple[Any, ...], msg: str
) -> None:
    record = logging.LogRecord("kbt.librdkafka", levelno, __file__, 1, msg.replace("%", ""), args, None)
    line = line_of(record)
    assert line.endswith("\n") and line.count("\n") == 1 and "\r" not in line
    counted = tally([line])
    assert counted.lines == 1 and sum(counted.by_facility.values()) == 1
    assert counted.errors == (levelno >= logging.ERROR)
    facility = str(args[0]) if len(args) == 3 else ""
    if "|" not in facility and facility.splitlines() in ([], [facility]):  # as librdkafka names them
        assert list(counted.by_facility) == [facility.strip() or "other"]


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.lists(st.text()))
def test_summarising_any_text_never_raises_and_counts_every_line(lines: list[str]) -> None:
    counted = tally(lines)
    assert counted.lines == sum(1 for line in lines if line.strip())
    said = counted.said("somewhere")
    assert (said is None) == (counted.lines == 0)
    assert said is None or (said.startswith("librdkafka logged ") and said.endswith("are in somewhere"))


def test_a_line_of_another_shape_is_counted_as_an_error() -> None:
    """A torn line (two workers' writes interleaved) cannot say its level: it is not hidden."""
    counted = tally(["%5|1.0|REQTMOUT|rdkafka#producer-1| [thrd:x]: timed out", "garbage"])
    assert counted.lines == 2 and counted.errors == 1
    assert counted.by_facility == {"REQTMOUT": 1, "other": 1}


def test_the_summary_names_the_busiest_facilities_and_counts_the_rest() -> None:
    lines = [f"%5|1.0|F{i}|rdkafka#producer-1| x" for i in range(7) for _ in range(10 - i)]
    said = tally(["%4|1.0|REQTMOUT|rdkafka#producer-1| x"] * 20 + lines).said("f.log")
    assert said == (
        "librdkafka logged 69 lines (REQTMOUT 20: request timed out, F0 10, F1 9, F2 8, F3 7, "
        "15 more in 3 other facilities); the lines are in f.log"
    )


def test_the_client_logger_is_set_up_once_and_keeps_off_the_root() -> None:
    logger = client_logger()
    assert client_logger() is logger and not logger.propagate
    assert [type(h).__name__ for h in logger.handlers].count("_Lines") == 1


def test_a_line_goes_through_the_redaction_layer() -> None:
    """A connection error may echo a URL with its credentials: the file never keeps them."""
    text = "Failed to connect to https://svc:hunter22@proxy.example:8443/ (sasl.password=hunter22)"
    record = logging.LogRecord(
        "kbt.librdkafka", logging.ERROR, __file__, 1, "%s [%s] %s", ("FAIL", "p#1", text), None
    )
    line = line_of(record)
    assert "hunter22" not in line and "[redacted]" in line
    assert tally([line]).by_facility == {"FAIL": 1}
