"""A one-shot command says at once that no broker is there: every bootstrap address refusing the
connection (real refused ports on 127.0.0.1) or not resolving is one line naming the addresses,
in a second, not at the end of the admin call's timeout. A run's clients keep waiting."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tuner.core.errors import Unreachable
from tuner.core.kafka_clients import Connection, Reach, admin_client, check_reach
from tuner.target import topics

pytestmark = pytest.mark.wall_clock

FAST_S = 5.0  # far below the admin calls' own timeouts (10 s and 30 s), far above librdkafka's ms


@pytest.fixture
def refused() -> Iterator[str]:
    """HOST:PORT of a port bound but not listening: every connection to it is refused (no race
    with another process taking the port, as a closed port would have)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{sock.getsockname()[1]}"


def _unreachable(bootstrap: str) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(Unreachable) as caught:
        check_reach(Connection(bootstrap), 10.0)
    return caught.value.message, time.monotonic() - started


def test_a_refused_port_is_said_at_once(refused: str) -> None:
    message, took = _unreachable(refused)
    assert message == f"cannot reach {refused} (Connection refused)"
    assert took < FAST_S, took


def test_every_address_tried_is_named(refused: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        second = f"127.0.0.1:{other.getsockname()[1]}"
        message, took = _unreachable(f"{refused},{second}")
    assert message == f"cannot reach {refused}, {second} (Connection refused)"
    assert took < FAST_S, took


def test_an_address_that_does_not_resolve_says_so(refused: str) -> None:
    message, took = _unreachable(f"{refused},kbt-no-such-host.invalid:9092")
    assert message.startswith(f"cannot reach {refused}, kbt-no-such-host.invalid:9092 ("), message
    assert f"{refused}: Connection refused" in message
    assert "kbt-no-such-host.invalid:9092: Failed to resolve" in message
    assert took < FAST_S, took


def test_a_listener_closing_before_it_answers_is_named_as_tls_spoken_to_in_plaintext() -> None:
    """librdkafka's own line for a connection a TLS listener reset during ApiVersions."""
    reach = Reach(Connection("k1:9093"))
    reach.logger.info(
        "FAIL [rdkafka#producer-1] [thrd:k1:9093/bootstrap]: k1:9093/bootstrap: Disconnected:"
        " connection reset by peer (after 0ms in state APIVERSION_QUERY)"
    )
    assert reach.sentence() == (
        "cannot reach k1:9093 (Disconnected: connection reset by peer; closed before it answered, as a"
        " TLS listener spoken to in plaintext does (set security.protocol))"
    )
    secure = Reach(Connection("k1:9093", {"security.protocol": "SSL"}))
    secure._failed("ssl://k1:9093/bootstrap: Disconnected (after 1ms in state APIVERSION_QUERY)")
    assert secure.sentence() == "cannot reach k1:9093 (Disconnected)"  # TLS spoken: no such hint
    secure._failed(
        "ssl://k1:9093/bootstrap: SSL handshake failed: ssl/statem/statem_clnt.c:2124:tls_post_process_server"
        "_certificate error:0A000086:SSL routines::certificate verify failed"
        " (after 5ms in state SSL_HANDSHAKE)"
    )
    assert secure.sentence() == (  # OpenSSL's source file and error code left out
        "cannot reach k1:9093 (SSL handshake failed: SSL routines::certificate verify failed)"
    )
    assert (
        Reach(Connection("k1:9093")).sentence("no answer in 10 s")
        == "cannot reach k1:9093 (no answer in 10 s)"
    )


def test_a_runs_admin_call_still_waits_for_a_broker(refused: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's admin client has no Reach: a broker restarting mid-run (refusing for a while) is
    waited for to the call's timeout, not failed at the first refusal."""
    monkeypatch.setattr(topics, "ADMIN_TIMEOUT_S", 1.5)
    started = time.monotonic()
    with pytest.raises(Unreachable):
        topics.broker_ids(admin_client(Connection(refused)))
    assert time.monotonic() - started >= 1.4


def test_a_stopped_labs_metadata_is_empty_at_once(refused: str) -> None:
    """`kbt lab status` of a stopped lab, and the waits that ask again: no 5 s per look."""
    from tuner.lab.health import brokers_in_metadata

    started = time.monotonic()
    assert brokers_in_metadata(refused) == set()
    assert time.monotonic() - started < 2.5  # its own timeout is 5 s


def test_a_sweep_a_stress_and_a_chaos_run_on_a_cluster_that_is_not_there_stop_at_once(
    refused: str, tmp_path: Path
) -> None:
    """Before any run (a stopped lab: the sweep waited 30 s with librdkafka's lines on stderr, each
    chaos run 300 s for its brokers); nothing is written."""
    import json

    from tests.e2e.bad_inputs import GOOD_SPEC
    from tests.unit.test_stress_runner import SPEC
    from tuner.lab.config import LabConfig
    from tuner.lab.state import new_state
    from tuner.runner.chaos.run_matrix import ChaosRunner, chaos_plans
    from tuner.runner.chaos.scenarios import MATRIX
    from tuner.runner.stress.locust_processes import LocustOptions
    from tuner.runner.stress.run_stages import StressRunner
    from tuner.runner.sweep import SweepRunner
    from tuner.spec.loader import load_sweep
    from tuner.spec.stress_load import load_stress
    from tuner.store.results import ResultsStore
    from tuner.target.lab import lab_target

    state = json.loads(new_state(LabConfig(lab_dir=tmp_path), "abc", 1.8e9).model_dump_json())
    port = int(refused.rsplit(":", 1)[1])
    for broker in state["brokers"]:  # a stopped lab: every broker's port refuses
        broker.update(port=port, proxy_port=None, internal_port=None)
    (tmp_path / "state.json").write_text(json.dumps({**state, "phase": "up"}))
    target = lab_target(tmp_path)
    store = ResultsStore(tmp_path / "results")
    (tmp_path / "stress.yaml").write_text(SPEC)
    (tmp_path / "sweep.yaml").write_text(GOOD_SPEC)
    sweep = load_sweep(tmp_path / "sweep.yaml")
    runs = [
        lambda: SweepRunner(target, None, None, store).run(sweep),  # type: ignore[arg-type]
        lambda: StressRunner(target, store, LocustOptions()).run(
            load_stress(tmp_path / "stress.yaml"), ["current"]
        ),
        lambda: ChaosRunner(target, None, store).run(chaos_plans(sweep, MATRIX[:1])),  # type: ignore[arg-type]
    ]
    tried = ", ".join([refused] * len(state["brokers"]))
    for run in runs:
        started = time.monotonic()
        with pytest.raises(Unreachable) as caught:
            run()
        assert caught.value.message == f"cannot reach {tried} (Connection refused)"
        assert time.monotonic() - started < FAST_S
    assert not (tmp_path / "results").exists()


def test_a_plain_locust_run_of_a_spec_on_a_cluster_that_is_not_there_stops_at_once(
    refused: str, tmp_path: Path
) -> None:
    from tests.e2e.bad_inputs import GOOD_SPEC
    from tuner.driver.locust.spec_load import create_load_topics, load_from_spec

    (tmp_path / "sweep.yaml").write_text(GOOD_SPEC)
    load = load_from_spec(str(tmp_path / "sweep.yaml"), bootstrap=refused)
    started = time.monotonic()
    with pytest.raises(Unreachable, match=f"cannot reach {refused} \\(Connection refused\\)"):
        create_load_topics(load)
    assert time.monotonic() - started < FAST_S


def test_a_runs_metadata_wait_on_a_cluster_gone_is_one_line_at_its_deadline(
    refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait for a new topic's leaders asked list_topics unguarded: a broker gone mid-wait was
    librdkafka's KafkaException as a traceback. Now it is asked again until the wait's deadline,
    then one line (a real admin client, a real refused port)."""
    from tuner.spec.workload import TopicSpec

    admin = admin_client(Connection(refused))
    started = time.monotonic()
    with pytest.raises(Unreachable) as caught:
        topics.wait_led(admin, {"t": TopicSpec(name="t", partitions=1)}, 1.5)
    took = time.monotonic() - started
    assert caught.value.message.startswith(
        "topics t: no leader after 1.5 s: cannot read the cluster's metadata in"
    )
    assert "Broker transport failure" in caught.value.message or "Timed out" in caught.value.message
    assert 1.4 <= took < 1.5 + FAST_S, took


def test_a_runs_metadata_wait_rides_out_a_broker_restarting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker that drops the connection mid-call and is back within the wait: the wait goes on.
    The dropped connection is librdkafka's own exception raised by a stand-in admin client (a broker
    restart cannot be made without a cluster); the metadata it then answers is confluent-kafka's."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import ClusterMetadata, PartitionMetadata, TopicMetadata

    from tuner.core import kafka_clients
    from tuner.spec.workload import TopicSpec

    monkeypatch.setattr(kafka_clients, "METADATA_RETRY_S", 0.05)
    partition, topic, cluster = PartitionMetadata(), TopicMetadata(), ClusterMetadata()
    partition.id, partition.leader = 0, 1
    topic.topic, topic.partitions = "t", {0: partition}
    cluster.topics, cluster.brokers = {"t": topic}, {1: object()}

    class Restarting:
        asked = 0

        def poll(self, timeout: float = 0) -> int:
            return 0

        def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
            self.asked += 1
            if self.asked <= 3:
                raise KafkaException(KafkaError(KafkaError._TRANSPORT))
            return cluster

    admin = Restarting()
    topics.wait_led(admin, {"t": TopicSpec(name="t", partitions=1)}, 5.0)  # type: ignore[arg-type]
    assert admin.asked == 4
    assert topics.broker_ids(Restarting()) == [1]  # type: ignore[arg-type]


def test_an_admin_calls_failure_is_one_line_naming_the_call() -> None:
    """create_topics' and delete_topics' futures (and the collector's config change) through one
    helper: librdkafka's account of no connection is exit 5, the cluster's refusal exit 2 in its own
    words (delete_topics said the KafkaError's repr), no answer exit 5."""
    from concurrent.futures import Future

    from confluent_kafka import KafkaError, KafkaException

    from tuner.core.errors import BadInput, KbtError
    from tuner.core.kafka_clients import outcome

    def failed(error: KafkaError) -> Future[None]:
        future: Future[None] = Future()
        future.set_exception(KafkaException(error))
        return future

    cases: list[tuple[Future[None], type[KbtError], str]] = [
        (
            failed(KafkaError(KafkaError._TRANSPORT)),
            Unreachable,
            "cannot create topic t: Local: Broker transport failure",
        ),
        (
            failed(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS, "Topic 't' already exists.")),
            BadInput,
            "cannot create topic t: Topic 't' already exists.",
        ),
        (Future(), Unreachable, "cannot create topic t: no answer in 0.2 s"),
    ]
    for future, kind, message in cases:
        with pytest.raises(KbtError) as caught:
            outcome(future, 0.2, "create topic t")
        assert type(caught.value) is kind
        assert caught.value.message == message
    done: Future[str] = Future()
    done.set_result("ok")
    assert outcome(done, 0.2, "create topic t") == "ok"


def test_leftover_topics_on_a_cluster_gone_are_a_problem_and_kept(
    refused: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crashed run's topics, cleaned at the next start: the metadata asked unguarded was a
    traceback; now a problem, and the ledger keeps them for the run after."""
    from tuner.target import ledger as ledger_module
    from tuner.target.ledger import TopicLedger

    monkeypatch.setattr(ledger_module, "LIST_TIMEOUT_S", 1.0)
    path = tmp_path / "ledger.json"
    path.write_text('{"kbt-t-r0-x": {"pid": 0, "host": "elsewhere"}}')
    ledger = TopicLedger(path)
    problems = ledger.clean(admin_client(Connection(refused)), "kbt-", topics.delete_topics)
    assert len(problems) == 1 and problems[0].startswith("leftover topics not deleted: cannot read"), problems
    assert ledger.leftovers() == ["kbt-t-r0-x"]


def test_a_runs_start_after_a_preflights_answer_asks_no_second_time_and_still_waits(
    refused: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A target sweep's preflight had the cluster's answer: the run's start built a second admin
    client for a second check. Now the run's one admin client skips it, its calls wait for a broker
    (a restart mid-run, here the port that went away after the answer), and librdkafka's lines it
    logs meanwhile go to the run's file when served, none to the terminal. A real admin client and
    refused port; the preflight's answer a real future resolved."""
    from concurrent.futures import Future

    from tuner.core import kafka_clients
    from tuner.core.client_log import ENV
    from tuner.core.kafka_clients import answer, reached_admin, served

    monkeypatch.setattr(kafka_clients, "_ANSWERED", set())
    monkeypatch.setattr(topics, "ADMIN_TIMEOUT_S", 1.5)
    log = tmp_path / "run.librdkafka.log"
    monkeypatch.setenv(ENV, str(log))
    conn = Connection(refused, {"client.id": "kbt-test"})
    with pytest.raises(Unreachable):  # no answer yet: the start's check says so at once
        reached_admin(conn, 10.0)
    described: Future[str] = Future()
    described.set_result("the cluster's description")
    assert answer(None, Reach(conn), described, 1.0) == "the cluster's description"
    started = time.monotonic()
    admin = reached_admin(conn, 10.0)
    assert time.monotonic() - started < 0.5  # no second check
    with pytest.raises(Unreachable):  # the run's own call waits its time out
        topics.broker_ids(admin)
    assert time.monotonic() - started >= 1.4
    served(admin)
    lines = log.read_text()
    assert "|kbt-test#producer-" in lines and "Connection refused" in lines  # the client's own lines
    assert "kbt-test#" not in capfd.readouterr().err  # (other tests' clients may still be closing)
    other = Connection(refused)  # another connection (no client.id) is asked again
    with pytest.raises(Unreachable):
        reached_admin(other, 10.0)


@pytest.fixture
def unanswering() -> Iterator[str]:
    """HOST:PORT of a listener that takes connections and never answers (a cluster too slow to
    answer, or a host that swallows what it is sent): librdkafka's calls time out for real."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        for port in range(19630, 19640):
            try:
                sock.bind(("127.0.0.1", port))
                break
            except OSError:
                continue
        else:
            pytest.skip("no port free in 19630-19639")
        sock.listen(16)  # the kernel accepts; nothing is ever read or written
        yield f"127.0.0.1:{port}"


def _one_line(error: pytest.ExceptionInfo[Exception]) -> str:
    message = error.value.message  # type: ignore[attr-defined]
    assert "\n" not in message and "KafkaError{" not in message, message
    return str(message)


def test_target_healths_reads_of_a_cluster_that_does_not_answer_are_one_line_each(
    unanswering: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kbt target health`'s metadata and consumer-lag reads: a group's offsets unanswered raised the
    future's bare TimeoutError (an OSError to the CLI: "kbt: error: " and nothing, exit 4), a failure
    showed the KafkaError's repr. Now each is one line saying why, exit 5, at the read's bound. A
    real admin client on a real listener that never answers."""
    from tuner.core.errors import ExitStatus
    from tuner.target import health

    monkeypatch.setattr(health, "TIMEOUT_S", 1.0)
    admin = admin_client(Connection(unanswering))
    started = time.monotonic()
    with pytest.raises(Unreachable) as lag:
        health.consumer_lag(admin, ["g1"], 0)
    took = time.monotonic() - started
    assert _one_line(lag).startswith("cannot read group g1's offsets: ")
    assert lag.value.status == ExitStatus.UNREACHABLE
    assert took < 1.0 + 2 + FAST_S, took  # the request's timeout, then the future's
    with pytest.raises(Unreachable) as meta:
        health.under_replicated(admin)
    assert _one_line(meta).startswith("cannot read the cluster's metadata in 1 s ("), meta.value.message


def test_the_labs_scram_user_on_a_broker_that_does_not_answer_is_one_line(
    unanswering: str, tmp_path: Path
) -> None:
    """`kbt lab up` creating the SCRAM user: no answer in the call's time raised a bare TimeoutError
    (the lab's start then said "lab start failed: " and no reason), a refusal the KafkaError's repr.
    Now one line saying why (exit 4, the lab's start), bounded, the password never in it."""
    from tuner.core.errors import EnvironmentProblem, ExitStatus
    from tuner.lab.security import SecurityFiles, create_user

    files = SecurityFiles(tmp_path)
    files.sasl_password_file.write_text("kbt-test-scram-secret\n")
    started = time.monotonic()
    with pytest.raises(EnvironmentProblem) as caught:
        create_user(unanswering, files, timeout_s=1.0)
    assert time.monotonic() - started < 1.0 + FAST_S
    assert _one_line(caught).startswith("cannot create the lab's SCRAM user: "), caught.value.message
    assert "kbt-test-scram-secret" not in caught.value.message
    assert caught.value.status == ExitStatus.ENVIRONMENT
