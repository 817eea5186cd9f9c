"""Pods that tail a log file written at the workload's rate, shared by the engines that run a real
shipper per pod (real Filebeat, the OpenTelemetry Collector): the writer processes that fill the
files, the pods' loopback ports and their start, SIGTERM as Ctrl-C, and the run topic's append
time. Each engine keeps what is its shipper's own (config, counters, read-back pattern)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from tuner.core.errors import KbtError
from tuner.core.kafka_clients import Connection, admin_client, outcome
from tuner.core.redact import REDACTED, scrub
from tuner.core.text import sorted_lists
from tuner.driver.corpus import write_corpus
from tuner.driver.latency_buckets import LatencyBuckets
from tuner.driver.lifeline import die_with_parent
from tuner.spec.sweep import RunPlan
from tuner.target.engine_security import SecureClient
from tuner.target.topics import ADMIN_TIMEOUT_S

PORT_TAKEN = "address already in use"  # a pod's endpoint lost its port to another process
PORT_RETRIES = 3
OUTPUT_NAME = "output.log"  # a pod process's own stdout and stderr, in its directory
OUTPUT_TAIL_LINES = 3
OUTPUT_TAIL_CHARS = 600


C = TypeVar("C")


class RestartsOnTakenPort(Generic[C]):
    """A pod process serving on a loopback port kbt picked free: started again on a fresh port when
    the port was taken between picking it and the process binding it (any process on the host may
    take an ephemeral port in that gap). Real Filebeat's pods and the collector's: each has its own
    directory under the run's work directory, its (empty) log file, and the client's security."""

    def __init__(self, index: int, work: Path, secure: SecureClient | None = None) -> None:
        self.index = index
        self.secure = secure or SecureClient()  # none: a PLAINTEXT listener
        self.dir = work / f"pod-{index}"
        self.dir.mkdir()
        self.log_file = self.dir / "pod.log"
        self.log_file.touch()
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.args: tuple[Path, C, str, str] | None = None
        self.port_retries = 0

    def start(self, binary: Path, config: C, bootstrap: str, topic: str) -> None:
        """Start the pod's shipper (again, on a fresh port) on the files `command` writes, in its
        directory, with the environment a deployment sets (`deployment_env`, the pod's secrets alone)
        added to kbt's; its stdout and stderr kept in the pod's OUTPUT_NAME file (a shipper that
        refuses its config says why there, before its own logging is set up)."""
        self.args = (binary, config, bootstrap, topic)
        with (self.dir / OUTPUT_NAME).open("ab") as output:
            self.proc = subprocess.Popen(
                self.command(binary, config),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
                env={**os.environ, **deployment_env(bootstrap, topic), **self.secure.env},
                start_new_session=True,
                preexec_fn=die_with_parent,  # a killed kbt leaves no shipper behind
            )

    def command(self, binary: Path, config: C) -> list[str]:
        """Write the pod's config files; the command line that runs its shipper on them."""
        raise NotImplementedError

    def output_tail(self) -> str:
        """The last lines the pod's process wrote to its stdout and stderr (joined by " | "),
        secrets redacted: the pod's own credentials and whatever the redaction layer finds."""
        path = self.dir / OUTPUT_NAME
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        lines = [ln.strip() for ln in self.redacted(text).splitlines() if ln.strip()]
        return " | ".join(lines[-OUTPUT_TAIL_LINES:])[-OUTPUT_TAIL_CHARS:]

    def redacted(self, text: str) -> str:
        """`text` of the pod's process as kbt shows it: without the pod's own secret values or
        anything the redaction layer finds, a list in Go's map order sorted (the same line each run)."""
        for value in self.secure.env.values():
            if value:
                text = text.replace(value, REDACTED)
        return sorted_lists(scrub(text))

    def exited(self) -> bool:
        """The process has ended other than by kbt's SIGTERM."""
        return not (
            self.proc is None or self.proc.poll() is None or self.proc.returncode in (0, -signal.SIGTERM)
        )

    def failure(self) -> str | None:
        raise NotImplementedError

    def answers(self) -> bool:
        """The process serves on its port (its monitoring or telemetry endpoint)."""
        raise NotImplementedError

    def retry_on_new_port(self) -> bool:
        if self.args is None or self.port_retries >= PORT_RETRIES or PORT_TAKEN not in (self.failure() or ""):
            return False
        self.port_retries += 1
        self.port = free_port()
        self.start(*self.args)
        return True


def wait_started(pods: Sequence[RestartsOnTakenPort[C]], what: str, timeout_s: float) -> None:
    """Until every pod answers on its port; a pod whose port was taken starts again on another.
    `what` names the shipper in the one-line error ("real Filebeat", "the collector")."""
    deadline = time.monotonic() + timeout_s
    pending = list(pods)
    while pending:
        for pod in list(pending):
            if pod.retry_on_new_port():
                continue
            failure = pod.failure()
            if failure:
                raise KbtError(f"{what} did not start: {failure}")
            if pod.answers():
                pending.remove(pod)
        if pending and time.monotonic() > deadline:
            raise KbtError(f"{what} pod {pending[0].index} did not start within {timeout_s:g} s")
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def deployment_env(bootstrap_servers: str, topic: str) -> dict[str, str]:
    """The variables a pod's config names (the rendered file, the collector's base), as a
    deployment sets them."""
    return {"KAFKA_HOSTS": bootstrap_servers, "KAFKA_TOPIC": topic}


def log_append_time(conn: Connection, topic: str) -> None:
    """The record timestamp becomes the broker's append time (the topic is the run's own)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    admin = admin_client(conn, {"log_level": 3})  # no purge notice on exit
    entry = ConfigEntry(
        "message.timestamp.type", "LogAppendTime", incremental_operation=AlterConfigOpType.SET
    )
    resource = ConfigResource("topic", topic, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        outcome(future, ADMIN_TIMEOUT_S, f"set message.timestamp.type LogAppendTime on topic {topic}")


def _phase_s(pod: int, rate: float) -> float:
    """Where in its send interval a pod starts: pods start out of step, as independent services do."""
    return (pod * 0.618) % 1 / rate


def sized_payloads(plan: RunPlan, work: Path, overhead: int, clean: Callable[[str], str]) -> list[str]:
    """The run's corpus texts for the writers, `clean`ed of what the shipper's line may not hold,
    each sized so the record has its entry's size with the `overhead` the line or event adds."""
    corpus = work / "corpus.jsonl"
    write_corpus(plan.workload, corpus, seed=plan.index + 1)
    out: list[str] = []
    for line in corpus.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        text = clean(str(entry["message"]))
        size = int(entry["bytes"])
        if size > 0:
            want = max(16, size - overhead)
            text = (text * (want // max(1, len(text)) + 1))[:want]
        out.append(text)
    return out


def start_writers(
    pods: Sequence[RestartsOnTakenPort[Any]],  # their index and log file
    processes: int,
    rate: float,
    start_at: float,
    duration: float,
    payloads: list[str],
    work: Path,
) -> list[subprocess.Popen[bytes]]:
    writers: list[subprocess.Popen[bytes]] = []
    for index in range(processes):
        mine = pods[index::processes]
        if not mine:
            continue
        plan = {
            "rate_per_pod": rate,
            "start_at": start_at,
            "duration_s": duration,
            "payloads": payloads,
            "pods": [
                {"pod": p.index, "file": str(p.log_file), "phase_s": _phase_s(p.index, rate)} for p in mine
            ],
        }
        path = work / f"writer-{index}.json"
        path.write_text(json.dumps(plan), encoding="utf-8")
        writers.append(
            subprocess.Popen(
                [sys.executable, "-m", "tuner.driver.tailed.writer", str(path)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=die_with_parent,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
        )
    return writers


def wait_writers(
    writers: list[subprocess.Popen[bytes]], budget_s: float
) -> tuple[dict[int, int], LatencyBuckets]:
    """Each pod's count of lines written, once every writer has finished, and the writers' send lag."""
    written: dict[int, int] = {}
    send_lag = LatencyBuckets()
    deadline = time.monotonic() + budget_s
    for proc in writers:
        try:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise KbtError(f"a log writer did not finish within {budget_s:g} s") from None
        if proc.returncode != 0 or not out.strip():
            last = (err.decode(errors="replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            raise KbtError(f"a log writer failed: {last}")
        result = json.loads(out.decode().strip().splitlines()[-1])
        written.update({int(pod): int(n) for pod, n in result["written"].items()})
        send_lag.add_counts({int(us): int(n) for us, n in result["send_lag_us"].items()})
    return written, send_lag


def written_in_window(
    written: dict[int, int],
    rate: float,
    start_at: float,
    pods: Sequence[RestartsOnTakenPort[Any]],  # their index and log file
    window: tuple[float, float],
) -> int:
    """How many of the lines the writers wrote were meant to be written inside `window`."""
    count = 0
    for pod in pods:
        phase = _phase_s(pod.index, rate)
        for seq in range(written.get(pod.index, 0)):
            # The writer's own arithmetic (whole microseconds), as the read-back compares them.
            if window[0] * 1e6 <= int((start_at + phase + seq / rate) * 1e6) < window[1] * 1e6:
                count += 1
    return count
