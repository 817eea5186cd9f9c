"""The bad-input catalog: every entry is run as `kbt ...` (or a script of kbt's that scripts/ run, as
`python -m MODULE ...`) by tests/e2e/test_bad_inputs.py, which asserts the exit code and the exact
one-line message, and docs/errors.md is generated from it.

    python -m tests.e2e.bad_inputs --write    # rewrite docs/errors.md after changing a case

Each case runs in a fresh empty directory holding only its `files`; `{spec}` in a file body is
replaced with the good sweep spec below, so a case states only what it breaks. A case with `serve`
talks to a real local endpoint the test opens on 127.0.0.1 for it (`{prom}` in its command and line):
"down" is a bound port that accepts no connection, "garbage" an HTTP server answering every request
with an HTML page instead of Prometheus JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gzip
import http.server
import json
import os
import re
import socket
import sys
import textwrap
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tuner.core.errors import ExitStatus
from tuner.core.text import escape_controls
from tuner.spec.clients import KINDS
from tuner.spec.librdkafka_client import config_names_document
from tuner.store.record_upgrade import SCHEMA_VERSION

GOOD_SPEC = """\
name: e2e
workload:
  name: e2e
  topics: [{name: e2e, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
  warmup_s: 1
profiles:
  - {name: batched, linger_ms: 50, compression: lz4}
"""

GOOD_FILEBEAT = """\
output.kafka:
  hosts: "${KAFKA_HOSTS}"
  topic: "${KAFKA_TOPIC}"
  bulk_max_size: 1024
  bulk_flush_frequency: 0s
  compression: gzip
  required_acks: 1
queue.mem:
  events: 3200
  flush.min_events: 1600
  flush.timeout: 10s
"""

# the good spec whose profile is a team's librdkafka file, producer.properties
LIBRDKAFKA_FILE_SPEC = GOOD_SPEC.replace(
    "  - {name: batched, linger_ms: 50, compression: lz4}", "  - librdkafka:producer.properties"
)

GOOD_STRESS = """\
name: e2e-stress
workload:
  name: e2e
  topics: [{name: e2e, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
profiles:
  current: {name: filebeat-like, linger_ms: 0}
  recommended: {name: batched, linger_ms: 50, compression: lz4}
shape: {prefill_s: 10, steps: [1, 2], step_s: 10, drain_s: 5, settle_s: 2}
consumer_groups: [{name: rt, mode: realtime}]
gates: {p99_ms: 1000, request_queue_max: 20}
"""

# A stress spec whose profiles run through their kinds' engines (no locust, so no consumer group).
GOOD_ENGINE_STRESS = (
    GOOD_STRESS.replace(
        "  current: {name: filebeat-like, linger_ms: 0}", "  current: {name: fb, client: filebeat}"
    )
    .replace(
        "{name: batched, linger_ms: 50, compression: lz4}", "{name: batched, client: java, linger_ms: 50}"
    )
    .replace("consumer_groups: [{name: rt, mode: realtime}]", "consumer_groups: []")
)

LIBRDKAFKA = config_names_document()["librdkafka"]  # the committed table's (held to the installed one)

DRY = ("--dry-run",)
NO_LAB = ("--lab-dir", "no-lab")


@dataclass(frozen=True)
class Case:
    """One bad input: what is wrong, the command, and the one line kbt must print."""

    id: str
    area: str
    what: str
    argv: tuple[str, ...]
    status: ExitStatus
    line: str
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    serve: Literal["down", "garbage", "trickle", "hostile"] | None = None
    # the module run: kbt itself, or a script of kbt's that scripts/ run (`python -m MODULE`)
    module: str = "tuner"

    @property
    def program(self) -> str:
        return "kbt" if self.module == "tuner" else f"python -m {self.module}"

    def command(self, prom: str) -> tuple[str, ...]:
        host = prom.removeprefix("http://")
        return tuple(a.replace("{prom}", prom).replace("{promhost}", host) for a in self.argv)

    def expected(self, prom: str) -> str:
        return self.line.replace("{prom}", prom).replace("{promhost}", prom.removeprefix("http://"))

    def materialise(self, directory: Path) -> None:
        for name, body in self.files.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if body == FIFO:
                os.mkfifo(path)
            elif body == SYMLINK_LOOP:
                path.symlink_to(path.name)
            elif body.startswith("\x00") or body.startswith(LATIN1):
                text = body.removeprefix(LATIN1).replace("{spec}", GOOD_SPEC)
                path.write_bytes(text.encode("latin-1"))
            else:
                path.write_text(body.replace("{spec}", GOOD_SPEC).replace("{stress}", GOOD_STRESS))


SYMLINK_LOOP = "\x00loop"  # a file body that makes the case's file a symbolic link to itself
FIFO = "\x00fifo"  # a file body that makes the case's file a FIFO (a reader would block on it)
LATIN1 = "\x01latin-1\x01"  # a file body written as Latin-1 bytes, not UTF-8

GARBAGE = b"<html><body>It works!</body></html>"
DOC_PROM = "http://127.0.0.1:PORT"  # how docs/errors.md shows the endpoint a case talks to


class _GarbageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(GARBAGE)))
        self.end_headers()
        self.wfile.write(GARBAGE)

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


class _TrickleHandler(http.server.BaseHTTPRequestHandler):
    """Headers at once, then one byte every 2 s: each read succeeds, the answer never ends."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(60):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(2)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


class _HostileHandler(http.server.BaseHTTPRequestHandler):
    """A fake Prometheus for transport faults a real one never makes (allowed: the fault cannot be
    made real). The first path segment picks the fault; `echo` sends the request's Authorization,
    Cookie and X-Api-Key headers back in an error answer (a server that reflects credentials)."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        fault = self.path.strip("/").split("/")[0].split("?")[0]
        if fault == "badgzip":
            self._send(200, b"this is not gzip data", {"Content-Encoding": "gzip"})
        elif fault == "truncated":
            self._send(200, b'{"status": "success", "data": {', {"Content-Length": "5000"}, close=True)
        elif fault == "badchunk":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"zz\r\n{}\r\n0\r\n\r\n")
            self.close_connection = True
        elif fault == "away":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.2:9090/api/v1/query")  # another host: another origin
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif fault in ("huge", "negative", "negative-p99"):
            # a broker whose Prometheus counts 1e308 scrapes (a figure past its bound), or answers a
            # negative produce time: every quantile's, or the total p99's alone (compare reads it)
            query = urllib.parse.parse_qs(self.path.partition("?")[2]).get("query", [""])[0]
            value = {
                "huge": "1e308" if "up{" in query else "0.5",
                "negative": "-5" if "quantile=" in query else "0.5",
                "negative-p99": "-5" if 'Produce",phase="total",quantile="0.99"' in query else "0.5",
            }[fault]
            value = "20" if fault != "huge" and "up{" in query else value  # scraped enough to measure
            result = [{"metric": {"broker": "1"}, "value": [1.0, value]}]
            body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})
            self._send(200, body.encode(), {})
        elif fault == "latin1":
            self._send(200, '{"status": "success", "data": {"result": "caf\xe9"}}'.encode("latin-1"), {})
        else:  # echo: the credentials and the query string (a token in it) sent back
            echoed = " ".join(str(self.headers.get(h)) for h in ("Authorization", "Cookie", "X-Api-Key"))
            tokens = [v for k, v in urllib.parse.parse_qsl(self.path.partition("?")[2]) if k == "token"]
            echoed += "".join(f" token={t}" for t in tokens)
            body = (
                '{"status": "error", "errorType": "bad_data", "error": "you sent ' + echoed + '"}'
            ).encode()
            self._send(400, body, {})

    def _send(self, code: int, body: bytes, headers: dict[str, str], close: bool = False) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for key, value in headers.items():
            self.send_header(key, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if close:
            self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@contextlib.contextmanager
def endpoint(kind: Literal["down", "garbage", "trickle", "hostile"] | None) -> Iterator[str]:
    """The Prometheus URL a case talks to, open for the duration of the `with` block."""
    if kind is None:
        yield DOC_PROM
    elif kind == "down":  # bound but not listening: every connection is refused, no port race
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    else:
        handler = {"garbage": _GarbageHandler, "trickle": _TrickleHandler, "hostile": _HostileHandler}[kind]
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def spec_case(id: str, what: str, old: str, new: str, line: str) -> Case:
    """A sweep spec that differs from the good one in one place, checked with --dry-run."""
    assert old in GOOD_SPEC, old
    return Case(
        id,
        "sweep spec",
        what,
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        line,
        files={"spec.yaml": GOOD_SPEC.replace(old, new)},
    )


def filebeat_case(id: str, what: str, old: str, new: str, line: str) -> Case:
    assert old in GOOD_FILEBEAT, old
    return Case(
        id,
        "Filebeat profile",
        what,
        ("check", "filebeat", "filebeat.yml"),
        ExitStatus.BAD_INPUT,
        line,
        files={"filebeat.yml": GOOD_FILEBEAT.replace(old, new)},
    )


E = "kbt: error: "
WITH_FILEBEAT = GOOD_SPEC.replace("profiles:\n", "profiles:\n  - {name: fb, client: filebeat}\n")

CASES: list[Case] = [
    # ---- sweep specs -------------------------------------------------------------------------
    spec_case(
        "spec-unknown-key",
        "unknown key (typo)",
        "linger_ms",
        "lingr_ms",
        E + 'spec.yaml:11: profiles[0]: unknown key "lingr_ms" (did you mean "linger_ms"?)',
    ),
    spec_case(
        "spec-negative-rate",
        "negative offered rate",
        "rate_per_producer: 10",
        "rate_per_producer: -1",
        E + "spec.yaml:6: workload.rate_per_producer: must be a positive number of msgs/s per producer"
        ' or "max" (got -1)',
    ),
    spec_case(
        "spec-rate-not-number",
        "rate neither a number nor max",
        "rate_per_producer: 10",
        "rate_per_producer: fast",
        E + 'spec.yaml:6: workload.rate_per_producer: must be a number of msgs/s per producer or "max"'
        " (got 'fast')",
    ),
    spec_case(
        "spec-warmup-ge-duration",
        "warm-up not shorter than the run",
        "warmup_s: 1",
        "warmup_s: 5",
        E + "spec.yaml:2: workload: warmup_s (5) must be shorter than duration_s (5)",
    ),
    spec_case(
        "spec-zero-duration",
        "zero duration",
        "duration_s: 5",
        "duration_s: 0",
        E + "spec.yaml:8: workload.duration_s: must be greater than or equal to 1 (got 0)",
    ),
    spec_case(
        "spec-too-many-partitions",
        "more partitions than a lab allows",
        "partitions: 3",
        "partitions: 100000",
        E + "spec.yaml:4: workload.topics[0].partitions: must be less than or equal to 1000 (got 100000)",
    ),
    spec_case(
        "spec-invalid-topic",
        "invalid topic name",
        "{name: e2e,",
        "{name: 'bad topic!',",
        E + "spec.yaml:4: workload.topics[0].name: must match pattern '^[A-Za-z0-9._-]{1,200}$'"
        " (got 'bad topic!')",
    ),
    spec_case(
        "spec-min-isr-above-rf",
        "min.insync.replicas above the replication factor",
        "partitions: 3}",
        "partitions: 3, configs: {min.insync.replicas: 3}}",
        E + 'spec.yaml:4: workload.topics[0]: configs."min.insync.replicas" 3 exceeds replication_factor'
        " 1: every acks=all write would fail",
    ),
    spec_case(
        "spec-leaders-per-partition",
        "a topic's pinned leaders not one per partition",
        "partitions: 3}",
        "partitions: 3, leaders: [1, 2]}",
        E + "spec.yaml:4: workload.topics[0]: leaders: 2 broker id(s) for 3 partition(s);"
        " give one per partition",
    ),
    spec_case(
        "spec-key-shares-keyless",
        "a topic's key shares with keyless records",
        "partitions: 3}",
        "partitions: 3, key_shares: [1, 1, 2]}",
        E + "spec.yaml:2: workload: topics[0].key_shares needs keys: random (the engine picks the keys that"
        " land on each partition; keys are none)",
    ),
    spec_case(
        "spec-processes-above-producers",
        "more OS processes than producers",
        "producers: 2",
        "producers: 2\n  processes: 5",
        E + "spec.yaml:2: workload: processes (5) cannot exceed producers (2)",
    ),
    spec_case(
        "spec-missing-log-file",
        "message source names a missing log file",
        "{kind: generated, bytes: 100}",
        "{kind: log_file, path: nope.log}",
        E + 'spec.yaml:7: workload.message: path: no such log file "nope.log"'
        " (set if_missing: generate to fall back)",
    ),
    spec_case(
        "spec-batch-above-max-message",
        "batch bytes above the broker's message.max.bytes",
        "linger_ms: 50",
        "batch_bytes: 9000000",
        E + "spec.yaml: profiles[0].batch_bytes: 9000000 (profile batched) exceeds the broker's"
        " message.max.bytes 1048588 (raise the topic config max.message.bytes)",
    ),
    spec_case(
        "spec-unknown-compression",
        "unknown compression codec",
        "compression: lz4",
        "compression: brotli",
        E + 'spec.yaml:11: profiles[0].compression: unknown value "brotli"'
        " (expected one of none, gzip, snappy, lz4, zstd)",
    ),
    spec_case(
        "spec-level-out-of-range",
        "compression level out of the codec's range",
        "compression: lz4",
        "compression: gzip, compression_level: 42",
        E + "spec.yaml:11: profiles[0]: compression_level 42 is outside -1..9 for gzip",
    ),
    spec_case(
        "spec-bad-acks",
        "acks not one of 0, 1, all",
        "compression: lz4",
        "compression: lz4, acks: 2",
        E + 'spec.yaml:11: profiles[0].acks: unknown value "2" (expected one of 0, 1, all)',
    ),
    spec_case(
        "spec-idempotence-acks-1",
        "idempotence with acks 1",
        "compression: lz4",
        "compression: lz4, acks: 1, idempotence: true",
        E + "spec.yaml:11: profiles[0]: idempotence needs acks all (got acks 1)",
    ),
    spec_case(
        "spec-linger-above-timeout",
        "linger longer than the delivery timeout",
        "linger_ms: 50",
        "linger_ms: 400000",
        E + "spec.yaml:11: profiles[0]: linger_ms 400000 must be below the delivery timeout"
        " (message.timeout.ms 300000): every record would expire while lingering",
    ),
    spec_case(
        "spec-duplicate-profile",
        "two profiles with one name",
        "compression: lz4}\n",
        "compression: lz4}\n  - {name: batched, linger_ms: 5}\n",
        E + "spec.yaml: profile names must be unique (got ['batched', 'batched'])",
    ),
    spec_case(
        "spec-literal-secret",
        "a password written literally in a profile override",
        "compression: lz4",
        "compression: lz4, overrides: {sasl.password: hunter2-hunter2}",
        E + 'spec.yaml:11: profiles[0].overrides: "sasl.password" holds a secret: give it as a ${VAR}'
        " reference to an environment variable, not literally",
    ),
    spec_case(
        "spec-unset-reference",
        "a ${VAR} reference to an unset environment variable",
        "compression: lz4",
        "compression: lz4, overrides: {sasl.password: '${KBT_UNSET_SECRET}'}",
        E + 'spec.yaml: profile batched: "sasl.password" refers to ${KBT_UNSET_SECRET}, which is not set'
        " in the environment",
    ),
    Case(
        "lab-unknown-security",
        "CLI",
        "--security not plaintext or sasl_ssl",
        ("lab", "up", "--security", "tls", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + 'invalid lab setting security: unknown value "tls" (expected one of plaintext, sasl_ssl)',
    ),
    Case(
        "lab-listen-address-unspecified",
        "CLI",
        "--listen-address 0.0.0.0 (cannot be advertised)",
        ("lab", "up", "--listen-address", "0.0.0.0", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting listen_address: 0.0.0.0 cannot be advertised: name one address of"
        " this machine",
    ),
    Case(
        "spec-not-yaml",
        "sweep spec",
        "not valid YAML",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "spec.yaml:13: not valid YAML: expected ',' or ']', but got '<stream end>'",
        files={"spec.yaml": "{spec}  - [unclosed\n"},
    ),
    Case(
        "spec-empty",
        "sweep spec",
        "empty file",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "spec.yaml: expected a mapping of keys at the top level",
        files={"spec.yaml": ""},
    ),
    Case(
        "spec-binary",
        "sweep spec",
        "binary garbage",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "spec.yaml: binary data, not text (a NUL byte at offset 0)",
        files={"spec.yaml": "\x00\xff\xfe\x00garbage"},
    ),
    Case(
        "spec-properties-without-client",
        "sweep spec",
        "a team's properties file named as a profile without its client",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "spec.yaml:11: profiles[0]: producer.properties says no client: name it"
        " librdkafka:producer.properties or java:producer.properties",
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "  - {name: batched, linger_ms: 50, compression: lz4}", "  - producer.properties"
            ),
            "producer.properties": "linger.ms=20\n",
        },
    ),
    Case(
        "spec-collector-batch-processor",
        "sweep spec",
        "a team's collector config whose logs pipeline batches in the batch processor",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "collector.yaml: processors.batch: kbt runs the exporter's own batching, not the batch processor:"
        " move it to the kafka exporter's sending_queue.batch (min_size: send_batch_size, flush_timeout:"
        " timeout) to run this file",
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "  - {name: batched, linger_ms: 50, compression: lz4}", "  - otelcol:collector.yaml"
            ),
            "collector.yaml": "receivers: {filelog: {include: [/var/log/a.log]}}\n"
            "processors: {batch: {send_batch_size: 2000, timeout: 1s}}\n"
            "exporters: {kafka: {brokers: [k1:9092]}}\n"
            "service: {pipelines: {logs: {receivers: [filelog], processors: [batch], exporters: [kafka]}}}\n",
        },
    ),
    Case(
        "spec-missing",
        "sweep spec",
        "spec file does not exist",
        ("sweep", "nope.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "nope.yaml: no such spec file",
    ),
    Case(
        "sweep-no-lab",
        "sweep spec",
        "a good spec but no lab is running",
        ("sweep", "spec.yaml", *NO_LAB),
        ExitStatus.ENVIRONMENT,
        E + "no running lab in no-lab (run 'kbt lab up')",
        files={"spec.yaml": "{spec}"},
    ),
    # ---- CLI flags ---------------------------------------------------------------------------
    Case(
        "cli-unknown-command",
        "CLI",
        "unknown subcommand",
        ("sweeep",),
        ExitStatus.BAD_INPUT,
        E + "No such command 'sweeep'. Did you mean 'sweep'? (see 'kbt --help')",
    ),
    Case(
        "cli-missing-argument",
        "CLI",
        "missing required argument",
        ("sweep",),
        ExitStatus.BAD_INPUT,
        E + "Missing argument 'spec'. (see 'kbt sweep --help')",
    ),
    Case(
        "lab-zero-brokers",
        "CLI",
        "--brokers out of range",
        ("lab", "up", "--brokers", "0", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--brokers': must be greater than or equal to 1 (got 0)"
        " (see 'kbt lab up --help')",
    ),
    Case(
        "lab-privileged-port",
        "CLI",
        "--base-port below 1024",
        ("lab", "up", "--base-port", "80", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting base_port: must be greater than or equal to 1024 (got 80)",
    ),
    Case(
        "lab-bad-heap",
        "CLI",
        "--heap not a JVM size",
        ("lab", "up", "--heap", "2x", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting heap: must be a JVM heap size such as 512m or 2g (got '2x')",
    ),
    Case(
        "lab-fast-scrape",
        "CLI",
        "--scrape-interval below 0.5 s",
        ("lab", "up", "--scrape-interval", "0.1", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting scrape_interval_s: must be greater than or equal to 0.5 (got 0.1)",
    ),
    Case(
        "lab-bad-port-env",
        "CLI",
        "KBT_LAB_BASE_PORT not a number",
        ("lab", "up", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "KBT_LAB_BASE_PORT must be a port number, not 'abc'",
        env={"KBT_LAB_BASE_PORT": "abc"},
    ),
    Case(
        "lab-unknown-component",
        "CLI",
        "kbt lab logs of a component that does not exist",
        ("lab", "logs", "broker-9", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "unknown lab component 'broker-9' (did you mean \"broker-3\"?); one of: controller,"
        " broker-1, broker-2, broker-3, prometheus",
    ),
    # ---- Filebeat profiles -------------------------------------------------------------------
    filebeat_case(
        "filebeat-typo",
        "misspelt option",
        "bulk_max_size",
        "bulk_max_sise",
        E + "filebeat.yml:4: output.kafka.bulk_max_sise: unknown option (did you mean"
        ' "output.kafka.bulk_max_size"?)',
    ),
    filebeat_case(
        "filebeat-zstd",
        "zstd (Filebeat's Kafka output does not offer it)",
        "compression: gzip",
        "compression: zstd",
        E + 'filebeat.yml:6: output.kafka.compression: unknown value "zstd"'
        " (expected one of none, gzip, lz4, snappy)",
    ),
    filebeat_case(
        "filebeat-acks",
        "required_acks not -1, 0 or 1",
        "required_acks: 1",
        "required_acks: 2",
        E + 'filebeat.yml:7: output.kafka.required_acks: unknown value "2" (expected one of -1, 0, 1)',
    ),
    filebeat_case(
        "filebeat-boolean-key",
        "an unquoted key YAML 1.1 reads as a boolean (Filebeat's reader refuses it)",
        "  required_acks: 1\n",
        "  required_acks: 1\n  on: 1\n",
        E + "filebeat.yml:8: a key Filebeat reads as true (an unquoted y, yes or on), not text, which it"
        " refuses: quote it",
    ),
    filebeat_case(
        "filebeat-unset-variable",
        "a number from an environment variable that is not set and has no default",
        "bulk_max_size: 1024",
        "bulk_max_size: ${KBT_E2E_UNSET_BULK}",
        E + "filebeat.yml:4: output.kafka.bulk_max_size: ${KBT_E2E_UNSET_BULK} is not set (kbt checks the"
        " value Filebeat reads from the environment: set KBT_E2E_UNSET_BULK, or give a default as"
        " ${KBT_E2E_UNSET_BULK:value})",
    ),
    filebeat_case(
        "filebeat-broker-variable-with-several",
        "one element of a broker list holding several brokers",
        'hosts: "${KAFKA_HOSTS}"',
        'hosts: ["${KBT_E2E_B1}", "${KBT_E2E_B2:k2:9092,k3:9092}"]',
        E + "filebeat.yml:2: output.kafka.hosts: ${KBT_E2E_B2} holds several brokers here, and as one element"
        ' of the list it makes Filebeat exit: give each element one broker, or write hosts: "${KBT_E2E_B2}"'
        " alone",
    ),
    filebeat_case(
        "filebeat-literal-password",
        "password written literally instead of ${VAR}",
        "required_acks: 1",
        "required_acks: 1\n  password: hunter2",
        E + "filebeat.yml:8: output.kafka.password: literal credentials are not allowed: use an environment"
        " reference like ${KAFKA_PASSWORD}",
    ),
    Case(
        "filebeat-strict-no-effect",
        "Filebeat profile",
        "bulk_max_size above queue.mem.flush.min_events under --strict",
        ("check", "filebeat", "--strict", "filebeat.yml"),
        ExitStatus.BAD_INPUT,
        "kbt: warning: filebeat.yml:4: output.kafka.bulk_max_size 4096 has no effect beyond 1600: the"
        " memory queue hands the output at most 1600 events per batch (raise queue.mem.flush.min_events and"
        " queue.mem.events with it)",
        files={"filebeat.yml": GOOD_FILEBEAT.replace("bulk_max_size: 1024", "bulk_max_size: 4096")},
    ),
    Case(
        "filebeat-missing",
        "Filebeat profile",
        "file does not exist",
        ("check", "filebeat", "nope.yml"),
        ExitStatus.BAD_INPUT,
        E + "nope.yml: no such Filebeat configuration",
    ),
    Case(
        "capture-warmup-past-half",
        "CLI",
        "a replay's --warmup past half its --duration (it was cut without a word)",
        (
            "capture",
            "--bootstrap-server",
            "127.0.0.1:9",
            "--out",
            "cap",
            "--window",
            "1m",
            "--duration",
            "60s",
            "--warmup",
            "2h",
        ),
        ExitStatus.BAD_INPUT,
        E + "--warmup 2h: at most half of the replay's --duration (60 s)",
    ),
    Case(
        "filebeat-topic-max-message-bytes-range",
        "CLI",
        "--topic-max-message-bytes past Kafka's largest size (a Java int)",
        ("check", "filebeat", "f.yml", "--topic-max-message-bytes", "99999999999"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--topic-max-message-bytes': must be less than or equal to 2147483647"
        " (got 99999999999) (see 'kbt check filebeat --help')",
        files={"f.yml": "output.kafka: {hosts: ['h:9092'], topic: t}\n"},
    ),
    # ---- kbt diagnose: Prometheus ------------------------------------------------------------
    Case(
        "diagnose-prometheus-down",
        "Prometheus",
        "Prometheus down (nothing accepts connections on the port)",
        ("diagnose", "--prometheus", "{prom}"),
        ExitStatus.UNREACHABLE,
        E + "Prometheus at {prom} is unreachable (ConnectionError)",
        serve="down",
    ),
    Case(
        "diagnose-prometheus-garbage",
        "Prometheus",
        "an HTTP server answering an HTML page instead of Prometheus JSON",
        ("diagnose", "--prometheus", "{prom}"),
        ExitStatus.UNREACHABLE,
        E + "{prom}/api/v1/query did not answer with Prometheus JSON (HTTP 200:"
        " '<html><body>It works!</body></html>')",
        serve="garbage",
    ),
    Case(
        "diagnose-prometheus-password",
        "Prometheus",
        "a password written literally in the --prometheus URL (used, never shown)",
        ("diagnose", "--prometheus", "{prom}".replace("//", "//kbt:hunter2-hunter2@")),
        ExitStatus.UNREACHABLE,
        E + "Prometheus at {prom} is unreachable (ConnectionError)".replace("//", "//kbt:[redacted]@"),
        serve="down",
    ),
    Case(
        "diagnose-host-port-no-scheme",
        "CLI",
        "host:port given where a URL is expected",
        ("diagnose", "--prometheus", "127.0.0.1:9090"),
        ExitStatus.BAD_INPUT,
        E + "--prometheus '127.0.0.1:9090': give a URL such as http://127.0.0.1:9090",
    ),
    Case(
        "diagnose-port-not-number",
        "CLI",
        "malformed host:port (port not a number)",
        ("diagnose", "--prometheus", "http://127.0.0.1:90x0"),
        ExitStatus.BAD_INPUT,
        E + "--prometheus 'http://127.0.0.1:90x0': give a URL such as http://127.0.0.1:9090 (the port"
        " is not a number)",
    ),
    Case(
        "diagnose-port-out-of-range",
        "CLI",
        "malformed host:port (port above 65535)",
        ("diagnose", "--prometheus", "http://127.0.0.1:99999"),
        ExitStatus.BAD_INPUT,
        E + "--prometheus 'http://127.0.0.1:99999': give a URL such as http://127.0.0.1:9090 (the port"
        " is out of range 0-65535)",
    ),
    Case(
        "diagnose-bad-window",
        "CLI",
        "--window not a duration",
        ("diagnose", "--prometheus", "http://127.0.0.1:9090", "--window", "5x"),
        ExitStatus.BAD_INPUT,
        E + "--window '5x': must be a duration like 5m, 300s or 1h",
    ),
    Case(
        "diagnose-step-above-window",
        "CLI",
        "--step longer than --window",
        ("diagnose", "--prometheus", "http://127.0.0.1:9090", "--step", "10m", "--window", "5m"),
        ExitStatus.BAD_INPUT,
        E + "--step 10m is longer than --window 5m",
    ),
    Case(
        "diagnose-bad-end",
        "CLI",
        "--end neither unix seconds nor ISO 8601",
        ("diagnose", "--prometheus", "http://127.0.0.1:9090", "--end", "yesterday"),
        ExitStatus.BAD_INPUT,
        E + "--end 'yesterday': give now, now-1h, unix seconds or an ISO 8601 time"
        " such as 2026-01-01T20:00:00Z",
    ),
    Case(
        "diagnose-request-log-missing",
        "CLI",
        "--request-log names no file",
        ("diagnose", "--prometheus", "http://127.0.0.1:9090", "--request-log", "broker-1.log"),
        ExitStatus.BAD_INPUT,
        E + "broker-1.log: no such request log",
    ),
    # ---- kbt probe ---------------------------------------------------------------------------
    Case(
        "probe-missing-file",
        "kbt probe",
        "log file does not exist",
        ("probe", "compression", "nope.log"),
        ExitStatus.BAD_INPUT,
        E + "nope.log: no such file",
    ),
    Case(
        "probe-unknown-codec",
        "kbt probe",
        "unknown codec",
        ("probe", "compression", "sample.log", "--codecs", "brotli"),
        ExitStatus.BAD_INPUT,
        E + '--codecs: unknown codec "brotli" (choose from gzip, snappy, lz4, zstd)',
        files={"sample.log": "a line\nanother line\n"},
    ),
    Case(
        "probe-level-out-of-range",
        "kbt probe",
        "codec level out of range",
        ("probe", "compression", "sample.log", "--levels", "zstd=99"),
        ExitStatus.BAD_INPUT,
        E + "--levels: level 99 is outside 1..22 for zstd",
        files={"sample.log": "a line\nanother line\n"},
    ),
    Case(
        "probe-zero-batch",
        "kbt probe",
        "a batch of 0 messages",
        ("probe", "compression", "sample.log", "--batch-sizes", "0,8"),
        ExitStatus.BAD_INPUT,
        E + "--batch-sizes: 0 messages per batch; a batch holds at least 1 message",
        files={"sample.log": "a line\nanother line\n"},
    ),
    # ---- kbt recommend / forecast / report ---------------------------------------------------
    Case(
        "recommend-no-records",
        "kbt recommend",
        "results directory without run records",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        E + "no run records under results: run `kbt sweep SPEC` first, or search on the lab with --live SPEC",
    ),
    Case(
        "recommend-negative-slo",
        "kbt recommend",
        "negative p99 bound",
        ("recommend", "--results", ".", "--slo-p99", "-5"),
        ExitStatus.BAD_INPUT,
        E + "--slo-p99 must be greater than 0 (got -5.0)",
    ),
    Case(
        "recommend-slo-past-a-week",
        "kbt recommend",
        "a p99 bound of 10^15 ms (the SLO refused it after the records were read: a traceback)",
        ("recommend", "--results", ".", "--slo-p99", "1e15"),
        ExitStatus.BAD_INPUT,
        E + "--slo-p99 must be less than or equal to 604800000 (got 1000000000000000.0)",
    ),
    Case(
        "recommend-codec-client-lacks",
        "kbt recommend",
        "a codec the client does not offer (Filebeat has no zstd)",
        ("recommend", "--results", ".", "--codecs", "filebeat=zstd"),
        ExitStatus.BAD_INPUT,
        E + '--codecs "filebeat=zstd": filebeat offers none, gzip, snappy, lz4 (got zstd)',
    ),
    Case(
        "forecast-bad-peak",
        "kbt forecast",
        "--peak not a multiple",
        ("forecast", "--peak", "abc"),
        ExitStatus.BAD_INPUT,
        E + "--peak 'abc': give a positive multiple of today's traffic such as 3x or 1.5 (at most 6 digits"
        " each side of the point)",
    ),
    Case(
        "forecast-peak-many-digits",
        "kbt forecast",
        "--peak 1.0000000001 (refused as not a positive multiple, which it is)",
        ("forecast", "--peak", "1.0000000001"),
        ExitStatus.BAD_INPUT,
        E + "--peak '1.0000000001': give a positive multiple of today's traffic such as 3x or 1.5 (at most 6"
        " digits each side of the point)",
    ),
    Case(
        "report-missing-results",
        "kbt report",
        "results directory does not exist",
        ("report", "--results", "nope"),
        ExitStatus.BAD_INPUT,
        E + "nope: no such results directory",
    ),
    Case(
        "report-no-records",
        "kbt report",
        "results directory without run records",
        ("report", "--results", "."),
        ExitStatus.BAD_INPUT,
        E + ".: no run records (run 'kbt sweep' or 'kbt stress' first)",
    ),
    Case(
        "report-only-unreadable-records",
        "kbt report",
        "results directory whose records are all unreadable: the first reason is named",
        ("report", "--results", "res"),
        ExitStatus.BAD_INPUT,
        E + "res: no readable run records: res/s/a--20260101T000000.000Z.json: run record schema_version 99,"
        f" this kbt reads 1 to {SCHEMA_VERSION} (and 1 more)",
        files={
            "res/s/a--20260101T000000.000Z.json": '{"schema_version": 99}',
            "res/s/b--20260101T000000.000Z.json": "[",
        },
    ),
    # ---- kbt stress --------------------------------------------------------------------------
    Case(
        "stress-unknown-key",
        "stress spec",
        "unknown key in the shape (typo)",
        ("stress", "stress.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + 'stress.yaml:12: shape: unknown key "step_sec" (did you mean "step_s"?)',
        files={"stress.yaml": GOOD_STRESS.replace("step_s: 10", "step_sec: 10")},
    ),
    Case(
        "stress-lagging-beside-an-engine",
        "stress spec",
        "a lagging consumer group beside a profile locust does not drive (a Filebeat profile)",
        ("stress", "stress.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "stress.yaml: profiles.current: lagging consumer groups (replay) read beside librdkafka profiles"
        " only: client filebeat runs each stage on fresh topics through its own engine (keep the realtime"
        " groups, drop the lagging ones)",
        files={"stress.yaml": GOOD_ENGINE_STRESS.replace("[]", "[{name: replay, mode: lagging, lag_s: 9}]")},
    ),
    Case(
        "stress-engine-stage-too-many",
        "stress spec",
        "more producers at a step than an engine's run takes",
        ("stress", "stress.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "stress.yaml: profiles.current: stage step2-x2 needs 600 producers; client filebeat runs each"
        " stage through its engine, at most 512 (use fewer producers with a higher baseline each)",
        files={"stress.yaml": GOOD_ENGINE_STRESS.replace("  producers: 2", "  producers: 300")},
    ),
    Case(
        "stress-unknown-top-key",
        "stress spec",
        "unknown top-level key",
        ("stress", "stress.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + 'stress.yaml:14: unknown key "gate" (did you mean "gates"?)',
        files={"stress.yaml": GOOD_STRESS.replace("gates:", "gate:")},
    ),
    Case(
        "stress-steps-decrease",
        "stress spec",
        "load steps not increasing",
        ("stress", "stress.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "stress.yaml:12: shape: steps must increase (got ['2', '1'])",
        files={"stress.yaml": GOOD_STRESS.replace("[1, 2]", "[2, 1]")},
    ),
    Case(
        "stress-unknown-profile",
        "CLI",
        "--profiles names a label the stress spec lacks",
        ("stress", "stress.yaml", "--profiles", "nope", *DRY),
        ExitStatus.BAD_INPUT,
        E + '--profiles: no profile "nope" in the spec (it has current, recommended)',
        files={"stress.yaml": "{stress}"},
    ),
    # A float flag with bounds: "nan" and "inf" met the bound first ("must be less than or equal to
    # 86400 (got nan)"), said here as the value it is, before any bound.
    Case(
        "stress-worker-master-wait-nan",
        "CLI",
        "--master-wait nan (it said: must be less than or equal to 86400 (got nan))",
        ("stress-worker", "--master", "127.0.0.1:5557", "--master-wait", "nan"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--master-wait': 'nan' is not a finite number"
        " (see 'kbt stress-worker --help')",
    ),
    Case(
        "stress-join-timeout-inf",
        "CLI",
        "--join-timeout inf (it said: must be less than or equal to 3600 (got inf))",
        ("stress", "stress.yaml", "--join-timeout", "inf"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--join-timeout': 'inf' is not a finite number (see 'kbt stress --help')",
        files={"stress.yaml": "{stress}"},
    ),
    Case(
        "forecast-min-idle-minus-inf",
        "CLI",
        "--min-idle -inf (it said: must be greater than or equal to 0.01 (got -inf))",
        ("forecast", "--min-idle", "-inf"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--min-idle': '-inf' is not a finite number (see 'kbt forecast --help')",
    ),
    Case(
        "target-health-min-disk-free-overflow",
        "CLI",
        "--min-disk-free 1e999, a number too large for a float (it said: must be less than or equal to 1)",
        ("target", "health", "t.yaml", "--min-disk-free", "1e999"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--min-disk-free': '1e999' is not a finite number"
        " (see 'kbt target health --help')",
    ),
    Case(
        "stress-workers-fraction",
        "CLI",
        "--workers 2.5 (it said: '2.5' is not a number)",
        ("stress", "stress.yaml", "--workers", "2.5", "--dry-run"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--workers': '2.5' is not a whole number (see 'kbt stress --help')",
        files={"stress.yaml": "{stress}"},
    ),
    Case(
        "stress-master-host-elsewhere",
        "CLI",
        "--master-host an address this machine does not have (locust's bind failed in its log; the run"
        " went on without a master)",
        ("stress", "stress.yaml", "--remote-workers", "1", "--master-host", "192.0.2.1", "--dry-run"),
        ExitStatus.BAD_INPUT,
        E + "--master-host '192.0.2.1': not an address of this machine the locust master can listen on"
        " (Cannot assign requested address); 0.0.0.0 listens on every one",
        files={"stress.yaml": "{stress}"},
    ),
    Case(
        "stress-master-host-long-label",
        "CLI",
        "--master-host with a 64-character label (Python's IDNA codec error was the reason)",
        ("stress", "stress.yaml", "--workers", "2", "--master-host", "a" * 64 + ".example", "--dry-run"),
        ExitStatus.BAD_INPUT,
        E + "--master-host 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...': not a host name",
        files={"stress.yaml": "{stress}"},
    ),
    Case(
        "stress-master-port-is-web-port",
        "CLI",
        "--master-port and --web-port one port (the second bind failed only when the master started)",
        (
            "stress",
            "stress.yaml",
            "--workers",
            "1",
            "--web-ui",
            "--master-port",
            "19650",
            "--web-port",
            "19650",
            "--dry-run",
        ),
        ExitStatus.BAD_INPUT,
        E + "--master-port and --web-port are both 19650: give each its own port",
        files={"stress.yaml": "{stress}"},
    ),
    Case(
        "stress-worker-bad-master",
        "CLI",
        "--master without a port",
        ("stress-worker", "--master", "kbt-host.example"),
        ExitStatus.BAD_INPUT,
        E + "--master 'kbt-host.example': give HOST:PORT (the kbt stress run's --master-host and"
        " --master-port)",
    ),
    Case(
        "stress-worker-no-master",
        "stress",
        "a stress worker whose master never comes (it waited locust's 300 s, then printed locust's lines)",
        ("stress-worker", "--master", "{promhost}", "--master-wait", "1"),
        ExitStatus.UNREACHABLE,
        E + "no kbt stress master at {promhost} after 1 s (Connection refused); is 'kbt stress"
        " --remote-workers N' running with --master-host reachable from here? (--master-wait waits longer)",
        serve="down",
    ),
    # ---- kbt chaos ---------------------------------------------------------------------------
    Case(
        "chaos-no-spec",
        "kbt chaos",
        "no spec and no --list",
        ("chaos",),
        ExitStatus.BAD_INPUT,
        E + "give a sweep spec (e.g. loadtests/chaos.yaml), or --list",
    ),
    Case(
        "chaos-unknown-fault",
        "kbt chaos",
        "unknown fault name (typo)",
        ("chaos", "spec.yaml", "--faults", "leader-kil", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "unknown fault 'leader-kil' (did you mean \"leader-kill\"?) (see 'kbt chaos --list')",
        files={"spec.yaml": "{spec}"},
    ),
    Case(
        "chaos-filebeat-profile",
        "kbt chaos",
        "a Filebeat profile (chaos drives librdkafka profiles)",
        ("chaos", "spec.yaml", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "profile fb: kbt chaos drives librdkafka profiles (this one is client filebeat)",
        files={"spec.yaml": WITH_FILEBEAT},
    ),
    Case(
        "chaos-no-lab",
        "kbt chaos",
        "a good spec but no lab is running",
        ("chaos", "spec.yaml", "--faults", "leader-kill", *NO_LAB),
        ExitStatus.ENVIRONMENT,
        E + "no running lab in no-lab (run 'kbt lab up')",
        files={"spec.yaml": "{spec}"},
    ),
    Case(
        "flags-target-and-bootstrap",
        "Kafka-tool flags",
        "--target FILE and --bootstrap-server together",
        ("sweep", "spec.yaml", "--target", "t.yaml", "--bootstrap-server", "127.0.0.1:9092", *DRY),
        ExitStatus.BAD_INPUT,
        E + "--target names the cluster already: give --target or --bootstrap-server, not both",
        files={"spec.yaml": "{spec}"},
    ),
    Case(
        "flags-config-alone",
        "Kafka-tool flags",
        "--command-config without --bootstrap-server",
        ("stress", "spec.yaml", "--command-config", "c.properties", *DRY),
        ExitStatus.BAD_INPUT,
        E + "--command-config needs --bootstrap-server (the cluster it logs in to)",
    ),
    Case(
        "flags-unknown-property",
        "Kafka-tool flags",
        "a batching setting in the --command-config file",
        ("target", "check", "--bootstrap-server", "127.0.0.1:9092", "--command-config", "c.properties"),
        ExitStatus.BAD_INPUT,
        E + '--command-config c.properties: unknown client property "linger.ms"',
        files={"c.properties": "security.protocol=PLAINTEXT\nlinger.ms=5\n"},
    ),
    Case(
        "flags-truststore-not-a-store",
        "Kafka-tool flags",
        "a JKS truststore that is not one (read as PEM for kbt's own clients)",
        ("target", "check", "--bootstrap-server", "127.0.0.1:9", "--command-config", "c.properties"),
        ExitStatus.BAD_INPUT,
        E + "127.0.0.1:9: t.jks: not a JKS store this ssl.truststore.password opens (wrong password, not JKS,"
        " or no certificate in it)",
        files={
            "c.properties": "security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=t.jks\n",
            "t.jks": "not a store\n",
        },
    ),
    Case(
        "flags-bad-server",
        "Kafka-tool flags",
        "--bootstrap-server without a port",
        ("diagnose", "--bootstrap-server", "kafka-0", "--prometheus", "http://127.0.0.1:9"),
        ExitStatus.BAD_INPUT,
        E + "--bootstrap-server: 'kafka-0' is not host:port (a DNS name of at most 253 characters, an IPv4"
        " address or a [bracketed] IPv6 address, and a port 1-65535)",
    ),
]

DEEP = "a: " + "[" * 500 + "]" * 500 + "\n"
BOMB = "".join(
    f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9 if p else ['"x"'] * 9) + "]\n"
    for p, c in zip(["", "a", "b", "c", "d", "e", "f"], "abcdefg", strict=True)
)
HUGE_VARY = (
    GOOD_SPEC
    + "vary:\n"
    + "".join(
        f"  workload.{k}: [{', '.join(str(v) for v in range(1, 41))}]\n"
        for k in ("producers", "rate_per_producer", "duration_s")
    )
)
SECRET = "hunter2-s3cret"  # planted: no case may print it

HARDENING_CASES: list[Case] = [
    # ---- structure ---------------------------------------------------------------------------
    Case(
        "structure-deep-yaml",
        "structure",
        "YAML nested 500 deep",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": DEEP},
    ),
    Case(
        "structure-alias-bomb",
        "structure",
        "YAML alias bomb (9^7 values once expanded)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": BOMB},
    ),
    spec_case(
        "structure-yaml-many-values",
        "18,000 topics in a 400 KB flow list (the YAML parser reads dense YAML at ~15 KB/s)",
        "topics: [{name: e2e, partitions: 3}]",
        "topics: [" + ",".join(f"{{name: t{i}, partitions: 1}}" for i in range(18_000)) + "]",
        "",
    ),
    spec_case(
        "structure-yaml-too-large",
        "a spec with 1.2 MB of comments",
        "profiles:\n",
        "#" + " comment" * 150_000 + "\nprofiles:\n",
        "",
    ),
    spec_case(
        "files-profile-directory",
        "a directory named as a profile file",
        "  - {name: batched, linger_ms: 50, compression: lz4}",
        "  - .",
        "",
    ),
    Case(
        "flags-prometheus-ipv6-unclosed",
        "flags",
        "--prometheus with an IPv6 host not closed, beside --bootstrap-server",
        ("sweep", "spec.yaml", "--bootstrap-server", "127.0.0.1:1", "--prometheus", "http://[::1:9090", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": "{spec}"},
    ),
    spec_case(
        "messages-yaml-list-key",
        "a key written as a YAML list (named as YAML writes it, not as Python does)",
        "linger_ms: 50,",
        "linger_ms: 50, [a, b]: 1,",
        "",
    ),
    Case(
        "structure-name-format-code",
        "structure",
        "name_format with a number's format code on a text field",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": "{spec}name_format: '{profile:d}'\n"},
    ),
    Case(
        "flags-command-config-protocol",
        "flags",
        "--command-config with a security.protocol Kafka does not have",
        ("target", "check", "--bootstrap-server", "127.0.0.1:1", "--command-config", "c.properties"),
        ExitStatus.BAD_INPUT,
        "",
        files={"c.properties": "security.protocol=TLS\n"},
    ),
    Case(
        "files-target-tilde-user",
        "files",
        "a target's token file under the home of a user who does not exist",
        ("target", "check", "t.yaml"),
        ExitStatus.BAD_INPUT,
        "",
        files={
            "t.yaml": "name: st\nbootstrap_servers: [127.0.0.1:1]\n"
            "prometheus: {url: 'http://127.0.0.1:1', bearer_token_file: '~nobodyxx/token'}\n"
        },
    ),
    Case(
        "files-log-symlink-loop",
        "files",
        "a workload's log file that is a symbolic link to itself",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "{kind: generated, bytes: 100}", "{kind: log_file, path: loop.log}"
            ),
            "loop.log": SYMLINK_LOOP,
        },
    ),
    Case(
        "stress-worker-master-blank",
        "stress",
        "a stress worker's --master host with a blank in it",
        ("stress-worker", "--master", "stress master:5557"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    Case(
        "numbers-window-past-a-year",
        "numbers",
        "a --window that is a duration, longer than a year",
        ("diagnose", "--prometheus", "http://127.0.0.1:1", "--window", "9999h"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    spec_case(
        "numbers-yaml-many-digits",
        "a count of 5,000 digits",
        "producers: 2",
        "producers: " + "9" * 5000,
        "",
    ),
    Case(
        "structure-vary-product",
        "structure",
        "vary cross product of 64,000 runs",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": HUGE_VARY},
    ),
    Case(
        "structure-name-format-attr",
        "structure",
        "attribute access in name_format",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": GOOD_SPEC + 'name_format: "{profile.__class__}"\n'},
    ),
    Case(
        "structure-name-format-width",
        "structure",
        "a huge width in name_format",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": GOOD_SPEC + 'name_format: "{profile:>999999999}"\n'},
    ),
    Case(
        "structure-record-array",
        "structure",
        "a run record that is a JSON array",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        "",
        files={"results/s/r.json": "[1, 2, 3]"},
    ),
    Case(
        "structure-lab-state-string",
        "structure",
        "a lab state file that is a JSON string",
        ("sweep", "spec.yaml", "--lab-dir", "lab"),
        ExitStatus.ENVIRONMENT,
        "",
        files={"spec.yaml": "{spec}", "lab/state.json": '"running"'},
    ),
    # ---- numbers -----------------------------------------------------------------------------
    Case(
        "numbers-flag-nan",
        "numbers",
        "--slo-p99 nan",
        ("recommend", ".", "--slo-p99", "nan"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    Case(
        "numbers-end-huge",
        "numbers",
        "--end 1e308",
        ("diagnose", "--prometheus", "http://127.0.0.1:9090", "--end", "1e308"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    Case(
        "numbers-non-ascii-digits",
        "numbers",
        "Arabic-Indic digits in --batch-sizes",
        ("probe", "compression", "sample.log", "--batch-sizes", "\u0661\u0662,8"),
        ExitStatus.BAD_INPUT,
        "",
        files={"sample.log": "a line\nanother line\n"},
    ),
    spec_case("numbers-spec-nan", "duration .nan in a spec", "duration_s: 5", "duration_s: .nan", ""),
    spec_case(
        "numbers-spec-inf-string",
        "rate given as the string inf",
        "rate_per_producer: 10",
        'rate_per_producer: "inf"',
        "",
    ),
    filebeat_case(
        "numbers-duration-huge",
        "a flush frequency of 99999999999h",
        "bulk_flush_frequency: 0s",
        "bulk_flush_frequency: 99999999999h",
        "",
    ),
    filebeat_case(
        "numbers-size-1e26", "bulk_max_size 1e26", "bulk_max_size: 1024", "bulk_max_size: 1e26", ""
    ),
    # ---- files -------------------------------------------------------------------------------
    Case(
        "files-spec-directory",
        "files",
        "a directory given as the spec",
        ("sweep", "specs", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"specs/keep.txt": "x"},
    ),
    Case(
        "files-spec-fifo",
        "files",
        "a FIFO given as the spec (would block)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": FIFO},
    ),
    Case(
        "files-probe-dev-zero",
        "files",
        "/dev/zero as a probe input (endless)",
        ("probe", "compression", "/dev/zero"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    Case(
        "files-spec-latin1",
        "files",
        "a spec saved as Latin-1",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": LATIN1 + GOOD_SPEC.replace("name: e2e\n", "name: e2e\n# caf\xe9\n", 1)},
    ),
    Case(
        "files-record-truncated",
        "files",
        "a truncated run record",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        "",
        files={"results/s/r.json": '{"schema_version": 1, "run_id": "s/r", '},
    ),
    # ---- network -----------------------------------------------------------------------------
    Case(
        "network-trickle",
        "network",
        "a server that trickles a byte every 2 s",
        ("diagnose", "--prometheus", "{prom}"),
        ExitStatus.UNREACHABLE,
        "",
        serve="trickle",
    ),
    Case(
        "network-query-string",
        "network",
        "a URL with a query string (kept, not broken by the API path)",
        ("diagnose", "--prometheus", "{prom}/prom?tenant=a"),
        ExitStatus.UNREACHABLE,
        "",
        serve="garbage",
    ),
    Case(
        "network-report-schemeless",
        "network",
        "kbt report --prometheus without a scheme",
        ("report", "results", "--prometheus", "127.0.0.1:9090"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    *(
        Case(
            f"network-broker-refused-{command}",
            "network",
            f"kbt target {command} with no broker at the bootstrap address (every connection refused):"
            " said at once, not after 10 s",
            ("target", command, "--bootstrap-server", "{promhost}"),
            ExitStatus.UNREACHABLE,
            "",
            serve="down",
        )
        for command in ("check", "health")
    ),
    Case(
        "network-broker-refused-capture",
        "network",
        "kbt capture with no broker at the bootstrap address (before its window, not after 15 s)",
        (
            "capture",
            "--bootstrap-server",
            "{promhost}",
            "--request-log",
            "b.log",
            "--window",
            "10",
            "--out",
            "out",
        ),
        ExitStatus.UNREACHABLE,
        "",
        files={"b.log": ""},
        serve="down",
    ),
    # ---- secrets -----------------------------------------------------------------------------
    Case(
        "secrets-url-userinfo-slash",
        "secrets",
        "a URL password with / and @ in it",
        ("diagnose", "--prometheus", "http://kbt:" + SECRET + "/x@y@127.0.0.1:1x"),
        ExitStatus.BAD_INPUT,
        "",
    ),
    Case(
        "secrets-url-query-token",
        "secrets",
        "a token in the URL's query string",
        ("diagnose", "--prometheus", "{prom}/?token=" + SECRET),
        ExitStatus.UNREACHABLE,
        "",
        serve="garbage",
    ),
    filebeat_case(
        "secrets-filebeat-hosts",
        "credentials in Filebeat hosts",
        '"${KAFKA_HOSTS}"',
        f'["kbt:{SECRET}@broker:9092x"]',
        "",
    ),
    spec_case(
        "secrets-key-pem",
        "ssl.key.pem written literally",
        "linger_ms: 50",
        'linger_ms: 50, overrides: {ssl.key.pem: "-----BEGIN PRIVATE KEY-----' + SECRET + '"}',
        "",
    ),
    spec_case(
        "secrets-oauthbearer-config",
        "sasl.oauthbearer.config written literally",
        "linger_ms: 50",
        f'linger_ms: 50, overrides: {{sasl.oauthbearer.config: "principal=a secret={SECRET}"}}',
        "",
    ),
    spec_case(
        "secrets-key-whitespace",
        "a secret key with stray whitespace",
        "linger_ms: 50",
        f'linger_ms: 50, overrides: {{" sasl.password ": "{SECRET}"}}',
        "",
    ),
    spec_case(
        "secrets-reference-default",
        "a ${VAR:default} that carries the secret",
        "linger_ms: 50",
        f'linger_ms: 50, overrides: {{sasl.password: "${{KAFKA_PW:{SECRET}}}"}}',
        "",
    ),
    # ---- writes ------------------------------------------------------------------------------
    Case(
        "writes-json-device",
        "writes",
        "--json /dev/full (a device is never replaced)",
        ("probe", "compression", "sample.log", "--json", "/dev/full"),
        ExitStatus.BAD_INPUT,
        "",
        files={"sample.log": "a line\nanother line\n"},
    ),
    Case(
        "writes-parent-not-directory",
        "writes",
        "--json under a parent that is a file",
        ("probe", "compression", "sample.log", "--json", "sample.log/out.json"),
        ExitStatus.BAD_INPUT,
        "",
        files={"sample.log": "a line\nanother line\n"},
    ),
    Case(
        "writes-markdown-fifo",
        "writes",
        "--markdown to a FIFO",
        ("probe", "compression", "sample.log", "--markdown", "out.md"),
        ExitStatus.BAD_INPUT,
        "",
        files={"sample.log": "a line\nanother line\n", "out.md": FIFO},
    ),
    Case(
        "writes-plot-format",
        "writes",
        "--plot with an unknown extension",
        ("probe", "compression", "sample.log", "--plot", "out.xyz"),
        ExitStatus.BAD_INPUT,
        "",
        files={"sample.log": "a line\nanother line\n"},
    ),
    # ---- messages ----------------------------------------------------------------------------
    spec_case(
        "messages-long-value",
        "a 200 KB topic name (cut in the message)",
        "{name: e2e,",
        "{name: " + "t" * 200_000 + ",",
        "",
    ),
    spec_case(
        "messages-control-chars",
        "a terminal escape in a key (shown escaped)",
        "linger_ms: 50",
        'linger_ms: 50, "\\e[2Jx": 1',
        "",
    ),
    Case(
        "messages-python-wording",
        "messages",
        "--levels with a word for a level",
        ("probe", "compression", "sample.log", "--levels", "zstd=high"),
        ExitStatus.BAD_INPUT,
        "",
        files={"sample.log": "a line\nanother line\n"},
    ),
]

# The one line each hardening case must print (after "kbt: error: "). {prom} is the endpoint.
HARDENING_LINES = {
    "structure-deep-yaml": "spec.yaml:1: nested more than 64 levels deep",
    "structure-alias-bomb": "spec.yaml:7: aliases expand to more than 1,000,000 values",
    "structure-yaml-many-values": "spec.yaml:4: more than 100,000 values: not a file kbt reads",
    "structure-yaml-too-large": "spec.yaml: 1.1 MiB is more than the 1 MiB kbt reads for a spec file",
    "files-profile-directory": 'spec.yaml:11: profiles[0]: "." is a directory, not a file',
    "flags-prometheus-ipv6-unclosed": "--prometheus: 'http://[::1:9090' is not a URL (its [IPv6] host is not closed or not an address)",  # noqa: E501
    "messages-yaml-list-key": 'spec.yaml:11: profiles[0]: unknown key "[a, b]"',
    "structure-name-format-code": "spec.yaml: name_format: format 'd' of {profile} does not fit its value 'batched'",  # noqa: E501
    "flags-command-config-protocol": "--command-config c.properties: security.protocol 'TLS' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",  # noqa: E501
    "files-target-tilde-user": "target file t.yaml: prometheus.bearer_token_file ~nobodyxx/token: no such file",  # noqa: E501
    "files-log-symlink-loop": 'spec.yaml:7: workload.message: path: no such log file "loop.log" (set if_missing: generate to fall back)',  # noqa: E501
    "stress-worker-master-blank": "--master 'stress master:5557': give HOST:PORT (the kbt stress run's --master-host and --master-port)",  # noqa: E501
    "numbers-window-past-a-year": "--window '9999h': is longer than a year",
    "numbers-yaml-many-digits": "spec.yaml: not valid YAML: a number with too many digits",
    "structure-vary-product": "spec.yaml: the sweep expands to 64,000 runs (more than 500)",
    "structure-name-format-attr": "spec.yaml: name_format: {profile.__class__} is not a plain field name (no attribute or index access)",  # noqa: E501
    "structure-name-format-width": "spec.yaml: name_format: format '>999999999' of {profile} is too wide (at most 64)",  # noqa: E501
    "structure-record-array": "results/s/r.json: not a run record: expected a JSON object, found a list",
    "structure-lab-state-string": "lab state lab/state.json is not a JSON object; remove it and run 'kbt lab up'",  # noqa: E501
    "numbers-flag-nan": "Invalid value for '--slo-p99': 'nan' is not a finite number (see 'kbt recommend --help')",  # noqa: E501
    "numbers-end-huge": "--end '1e308': must lie between 1970 and the year 3000",
    "numbers-non-ascii-digits": "--batch-sizes: '١٢' is not a whole number",
    "numbers-spec-nan": "spec.yaml: workload.duration_s: must be a finite number (got nan)",
    "numbers-spec-inf-string": "spec.yaml:6: workload.rate_per_producer: must be a number of msgs/s per producer or \"max\" (got 'inf')",  # noqa: E501
    "numbers-duration-huge": "filebeat.yml:5: output.kafka.bulk_flush_frequency: 3.6e+14 s is longer than a year",  # noqa: E501
    "numbers-size-1e26": "filebeat.yml: output.kafka.bulk_max_size: 1e+26 is too large",
    "files-spec-directory": "specs: is a directory, not a spec file",
    "files-spec-fifo": "spec.yaml: is a FIFO, not a spec file",
    "files-probe-dev-zero": "/dev/zero: is a device, not a file",
    "files-spec-latin1": "spec.yaml:2: not UTF-8 text (byte 0xe9 at offset 15); save the file as UTF-8",
    "files-record-truncated": "results/s/r.json:1: not valid JSON: Expecting property name enclosed in double quotes",  # noqa: E501
    "network-trickle": "Prometheus at {prom} did not answer within 10 s",
    "network-query-string": "{prom}/prom/api/v1/query did not answer with Prometheus JSON (HTTP 200: '<html><body>It works!</body></html>')",  # noqa: E501
    "network-report-schemeless": "--prometheus '127.0.0.1:9090': give a URL such as http://127.0.0.1:9090",
    "network-broker-refused-check": "{promhost}: cannot reach {promhost} (Connection refused)",
    "network-broker-refused-health": "{promhost}: cannot reach {promhost} (Connection refused)",
    "network-broker-refused-capture": "cannot reach {promhost} (Connection refused)",
    "secrets-url-userinfo-slash": "--prometheus 'http://kbt:[redacted]@127.0.0.1:1x': give a URL such as http://127.0.0.1:9090 (the port is not a number)",  # noqa: E501
    "secrets-url-query-token": "{prom}/api/v1/query did not answer with Prometheus JSON (HTTP 200: '<html><body>It works!</body></html>')",  # noqa: E501
    "secrets-filebeat-hosts": 'filebeat.yml:2: output.kafka.hosts: "kbt:[redacted]@broker:9092x" is not host:port or a ${VAR} reference',  # noqa: E501
    "secrets-key-pem": 'spec.yaml:11: profiles[0].overrides: "ssl.key.pem" holds a secret: give it as a ${VAR} reference to an environment variable, not literally',  # noqa: E501
    "secrets-oauthbearer-config": 'spec.yaml:11: profiles[0].overrides: "sasl.oauthbearer.config" holds a secret: give it as a ${VAR} reference to an environment variable, not literally',  # noqa: E501
    "secrets-key-whitespace": 'spec.yaml:11: profiles[0].overrides: " sasl.password " holds a secret: give it as a ${VAR} reference to an environment variable, not literally',  # noqa: E501
    "secrets-reference-default": 'spec.yaml:11: profiles[0].overrides: "sasl.password" holds a secret: give it as a ${VAR} reference to an environment variable, not literally',  # noqa: E501
    "writes-json-device": "--json /dev/full: is a device; kbt writes a file only to a regular file or a new path",  # noqa: E501
    "writes-parent-not-directory": "--json sample.log/out.json: sample.log is not a directory",
    "writes-markdown-fifo": "--markdown out.md: is a FIFO; kbt writes a file only to a regular file or a new path",  # noqa: E501
    "writes-plot-format": "out.xyz: unknown plot format 'xyz' (use one of avif, eps, gif, jpeg, jpg, pdf, pgf, png, ps, raw, rgba, svg, svgz, tif, tiff, webp)",  # noqa: E501
    "messages-long-value": "spec.yaml:4: workload.topics[0].name: must match pattern '^[A-Za-z0-9._-]{1,200}$' (got 'tttttttttttttttttttttttttttttttttttttttt...')",  # noqa: E501
    "messages-control-chars": 'spec.yaml:11: profiles[0]: unknown key "\\x1b[2Jx"',
    "messages-python-wording": "--levels: 'high' is not a whole number",
}
CASES += [dataclasses.replace(c, line=E + HARDENING_LINES[c.id]) for c in HARDENING_CASES]

# ---- issue 30: one way in per class (numbers, regex time, reader, records) ----------------------
HOSTILE_DURATION = "11s" * 40 + "x"  # backtracked 2**40 times through the old Go-duration pattern
_V1_RECORD = (
    Path(__file__).resolve().parents[1]
    / "unit/data/records-v1/filebeat-small-logs/filebeat-default--20231114T223000.000Z.json"
)


def old_record(field: str, value: str) -> str:
    """The committed version-1 record with one profile field of the wrong type (as JSON text)."""
    text = _V1_RECORD.read_text()
    old = f'"{field}": null'
    assert old in text, old
    return text.replace(old, f'"{field}": {value}', 1)


def old_record_figure(old: str, new: str) -> str:
    """The committed version-1 record with one figure changed (as JSON text)."""
    text = _V1_RECORD.read_text()
    assert old in text, old
    return text.replace(old, new, 1)


TARGET = "name: t\nbootstrap_servers: [127.0.0.1:9092]\nclient: {properties_file: client.properties}\n"


def properties_case(id: str, what: str, body: str | None, area: str = "files") -> Case:
    """`kbt target check` of a target whose client.properties is `body` (None: a directory)."""
    files = {
        "t.yaml": TARGET,
        **({"client.properties": body} if body is not None else {"client.properties/x": "x"}),
    }
    area = "secrets" if id.startswith("secrets") else area
    return Case(id, area, what, ("target", "check", "t.yaml"), ExitStatus.BAD_INPUT, "", files=files)


def record_case(id: str, what: str, field: str, value: str) -> Case:
    """`kbt recommend` over one old record whose profile `field` is `value` (JSON)."""
    return Case(
        id,
        "old records",
        what,
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        "",
        files={"results/s/r.json": old_record(field, value)},
    )


def hostile_case(id: str, what: str, url: str, area: str = "network") -> Case:
    """`kbt diagnose` against the hostile fake Prometheus; `url` picks its fault."""
    return Case(
        id, area, what, ("diagnose", "--prometheus", url), ExitStatus.UNREACHABLE, "", serve="hostile"
    )


ONE_WAY_IN_CASES: list[Case] = [
    spec_case("numbers-boolean-count", "partitions: true", "partitions: 3", "partitions: true", ""),
    spec_case(
        "numbers-underscore", 'partitions: "1_0" (Python reads 10)', "partitions: 3", 'partitions: "1_0"', ""
    ),
    spec_case("numbers-tiny-rate", "1e-300 msgs/s", "rate_per_producer: 10", "rate_per_producer: 1e-300", ""),
    spec_case(
        "numbers-override-inf",
        'message.timeout.ms: "inf"',
        "linger_ms: 50",
        'linger_ms: 50, overrides: {message.timeout.ms: "inf"}',
        "",
    ),
    Case(
        "numbers-name-format-arabic-width",
        "numbers",
        "a name_format width in Arabic-Indic digits",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        "",
        files={"spec.yaml": GOOD_SPEC + 'name_format: "{profile:>\u0669\u0669\u0669\u0669\u0669\u0669}"\n'},
    ),
    Case(
        "numbers-record-version-true",
        "numbers",
        "schema_version: true in a run record",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        "",
        files={"results/s/r.json": '{"schema_version": true, "run_id": "s/r"}'},
    ),
    Case(
        "regex-window",
        "regex time",
        '--window "11s" x 40 + "x"',
        ("diagnose", "--prometheus", "http://127.0.0.1:9090", "--window", HOSTILE_DURATION),
        ExitStatus.BAD_INPUT,
        "",
    ),
    filebeat_case(
        "regex-filebeat-duration",
        '"11s" x 40 + "x" as a Filebeat duration',
        "bulk_flush_frequency: 0s",
        f"bulk_flush_frequency: {HOSTILE_DURATION}",
        "",
    ),
    Case(
        "regex-scrub-query",
        "regex time",
        "a URL of 20,000 query parameters (scrubbed in linear time)",
        ("diagnose", "--prometheus", "http://127.0.0.1:1x/?" + "a=b&" * 20000),
        ExitStatus.BAD_INPUT,
        "",
    ),
    properties_case("files-properties-fifo", "a client properties file that is a FIFO (would block)", FIFO),
    properties_case("files-properties-directory", "a client properties file that is a directory", None),
    properties_case("files-properties-binary", "a binary client properties file", "\x00\x01binary"),
    Case(
        "records-figure-past-its-bound",
        "bounds",
        "a run record whose broker count is 10^12 (the model keeps a list per broker)",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        "",
        files={"results/s/r.json": old_record_figure('"broker_count": 1', '"broker_count": 1000000000000')},
    ),
    record_case(
        "records-old-linger-text", "a version-1 record whose profile linger_ms is text", "linger_ms", '"soon"'
    ),
    record_case(
        "records-old-batch-boolean",
        "a version-1 record whose profile batch_messages is true",
        "batch_messages",
        "true",
    ),
    properties_case(
        "secrets-jaas-single-quoted",
        "a JAAS password in single quotes",
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
        f" username='u' password='{SECRET}';\n",
    ),
    properties_case(
        "secrets-jaas-unquoted",
        "a JAAS password without quotes",
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
        f"org.apache.kafka.common.security.plain.PlainLoginModule required username=u password={SECRET};\n",
    ),
    properties_case(
        "secrets-properties-literal-default",
        "${VAR:literal-default} for sasl.password",
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.password=${{PW:{SECRET}}}\n",
    ),
    Case(
        "secrets-filebeat-monitoring-password",
        "Filebeat profile",
        "monitoring.elasticsearch.password written literally",
        ("check", "filebeat", "filebeat.yml"),
        ExitStatus.BAD_INPUT,
        "",
        files={"filebeat.yml": GOOD_FILEBEAT + f"monitoring.elasticsearch.password: {SECRET}\n"},
    ),
    hostile_case("http-bad-gzip", "an answer that says gzip and is not", "{prom}/badgzip"),
    hostile_case("http-truncated", "an answer cut short of its Content-Length", "{prom}/truncated"),
    hostile_case("http-bad-chunk", "a chunked answer with a chunk size that is not hex", "{prom}/badchunk"),
    hostile_case(
        "http-redirect-other-origin",
        "a redirect to another host (would carry the credentials there)",
        "http://kbt:" + SECRET + "@{promhost}/away",
    ),
    hostile_case(
        "http-echoed-credentials",
        "a server that echoes the Authorization header back",
        "http://kbt:" + SECRET + "@{promhost}/echo",
        area="secrets",
    ),
    record_case("records-old-acks-list", "a version-1 record whose profile acks is a list", "acks", "[1]"),
]

ONE_WAY_IN_LINES: dict[str, str] = {
    "http-bad-gzip": "Prometheus at {prom}/badgzip sent a body that is not in the encoding it named (bad gzip or deflate data)",  # noqa: E501
    "http-truncated": "Prometheus at {prom}/truncated closed the connection before the whole answer arrived (truncated body)",  # noqa: E501
    "http-bad-chunk": "Prometheus at {prom}/badchunk sent a broken chunked body (a chunk size that is not hex)",  # noqa: E501
    "http-redirect-other-origin": "Prometheus at {prom}/away redirected to another origin (http://127.0.0.2:9090/api/v1/query); kbt follows redirects only within the URL's scheme, host and port",  # noqa: E501
    "http-echoed-credentials": "Prometheus rejected the query (bad_data: you sent Basic [redacted] None None)",  # noqa: E501
    "secrets-jaas-single-quoted": 'target file t.yaml: client: the password in "sasl.jaas.config" must be a ${VAR} reference (credentials are never written in a file)',  # noqa: E501
    "secrets-jaas-unquoted": 'target file t.yaml: client: the password in "sasl.jaas.config" must be a ${VAR} reference (credentials are never written in a file)',  # noqa: E501
    "secrets-properties-literal-default": 'target file t.yaml: client: "sasl.password" must be a ${VAR} reference (credentials are never written in a file)',  # noqa: E501
    "secrets-filebeat-monitoring-password": "filebeat.yml:12: monitoring.elasticsearch.password: literal credentials are not allowed: use an environment reference like ${KAFKA_PASSWORD}",  # noqa: E501
    "numbers-boolean-count": "spec.yaml:4: workload.topics[0]: partitions: must be a number, not true",
    "numbers-underscore": "spec.yaml:4: workload.topics[0]: partitions: must be a whole number such as 12, in ASCII digits (got '1_0')",  # noqa: E501
    "numbers-tiny-rate": "spec.yaml:6: workload.rate_per_producer: must be at least 0.01 msgs/s per producer (got 1e-300)",  # noqa: E501
    "numbers-override-inf": "spec.yaml:11: profiles[0].overrides: \"message.timeout.ms\": must be a whole number in ASCII digits (got 'inf')",  # noqa: E501
    "numbers-name-format-arabic-width": "spec.yaml: name_format: format '>٩٩٩٩٩٩' of {profile} is not [[fill]align][width][.precision][type] in ASCII digits",  # noqa: E501
    "numbers-record-version-true": "results/s/r.json: run record schema_version true, this kbt reads 1 to"
    f" {SCHEMA_VERSION}",
    "regex-window": "--window '11s11s11s11s11s11s11s11s11s11s11s11s11s1...': must be a duration like 5m, 300s or 1h",  # noqa: E501
    "regex-filebeat-duration": "filebeat.yml:5: output.kafka.bulk_flush_frequency: must be a duration like 500ms, 1s or 2m (got '11s11s11s11s11s11s11s11s11s11s11s11s11s1...')",  # noqa: E501
    "regex-scrub-query": "--prometheus 'http://127.0.0.1:1x/?a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b&a=b... (79,735 more characters)",  # noqa: E501
    "files-properties-fifo": "client.properties: is a FIFO, not a client properties file",
    "files-properties-directory": "client.properties: is a directory, not a client properties file",
    "files-properties-binary": "client.properties: binary data, not text (a NUL byte at offset 0)",
    "records-figure-past-its-bound": "results/s/r.json: invalid run record: environment.broker_count: must be less than or equal to 10000 (got 1000000000000)",  # noqa: E501
    "records-old-linger-text": "results/s/r.json: invalid run record: cannot upgrade from schema_version 2: profile.linger_ms 'soon': must be a number",  # noqa: E501
    "records-old-batch-boolean": "results/s/r.json: invalid run record: cannot upgrade from schema_version 2: profile.batch_messages: must be a number, not true",  # noqa: E501
    "records-old-acks-list": "results/s/r.json: invalid run record: cannot upgrade from schema_version 2: profile.acks: must be all, -1, 0 or 1 (got '[1]')",  # noqa: E501
}
CASES += [dataclasses.replace(c, line=E + ONE_WAY_IN_LINES[c.id]) for c in ONE_WAY_IN_CASES]


# ---- issue 30's leftovers: exit codes, keys.pattern in linear time, outputs all or nothing -------
KEYS_AT = "message: {kind: generated, bytes: 100}"
V1_RECORDS = _V1_RECORD.parents[1]
V1_RECORD_FILES = sorted(V1_RECORDS.rglob("*.json"))


def key_pattern_case(id: str, what: str, pattern: str) -> Case:
    return spec_case(id, what, KEYS_AT, KEYS_AT + "\n  keys: {kind: field, pattern: '" + pattern + "'}", "")


LEFTOVER_CASES: list[Case] = [
    Case(
        "exit-client-comma",
        "exit codes",
        "--client given only a comma",
        ("recommend", "--results", ".", "--client", ","),
        ExitStatus.BAD_INPUT,
        "",
    ),
    Case(
        "exit-render-out-under-file",
        "exit codes",
        "render --out under a file",
        ("render", "filebeat", "--out", "afile/sub"),
        ExitStatus.BAD_INPUT,
        "",
        files={"afile": "x"},
    ),
    Case(
        "writes-render-out-is-file",
        "partial writes",
        "render --out naming a file (nothing written)",
        ("render", "filebeat", "--out", "afile"),
        ExitStatus.BAD_INPUT,
        "",
        files={"afile": "x"},
    ),
    Case(
        "writes-forecast-model-then-bad-diagnosis",
        "partial writes",
        "forecast --save-model with a --diagnosis that is not one (the model was written before the check)",
        ("forecast", "--results", "results", "--save-model", "model.json", "--diagnosis", "bad.json"),
        ExitStatus.BAD_INPUT,
        "",
        files={
            "bad.json": '{"x": 1}',
            **{f"results/{p.relative_to(V1_RECORDS)}": p.read_text() for p in V1_RECORD_FILES},
        },
    ),
    key_pattern_case("regex-key-backreference", "keys.pattern with a backreference", r"(x+)\1"),
    key_pattern_case("regex-key-lookahead", "keys.pattern with a lookahead", "(?=a)(b)"),
    key_pattern_case("regex-key-too-long", "keys.pattern of 600 characters", "a" * 597 + "(b)"),
    key_pattern_case("regex-key-no-group", "keys.pattern without a capture group", "uid=\\w+"),
]
LEFTOVER_LINES = {
    "exit-client-comma": f"--client names no client kind: expected one of {', '.join(KINDS)}",
    "exit-render-out-under-file": "--out afile/sub: is under afile, which is not a directory",
    "writes-render-out-is-file": "--out afile: is not a directory",
    "writes-forecast-model-then-bad-diagnosis": "--diagnosis bad.json: not a `kbt diagnose --json` file",
    "regex-key-backreference": "spec.yaml:8: workload.keys: keys.pattern: not a regex kbt can match in linear time (invalid escape sequence: \\1); RE2 syntax: no backreferences or lookaround",  # noqa: E501
    "regex-key-lookahead": "spec.yaml:8: workload.keys: keys.pattern: not a regex kbt can match in linear time (invalid perl operator: (?=); RE2 syntax: no backreferences or lookaround",  # noqa: E501
    "regex-key-too-long": "spec.yaml:8: workload.keys: keys.pattern: 600 characters; at most 512",
    "regex-key-no-group": "spec.yaml:8: workload.keys: keys.pattern: needs a capture group (the key)",
}
CASES += [dataclasses.replace(c, line=E + LEFTOVER_LINES[c.id]) for c in LEFTOVER_CASES]

# A forecast that cannot reproduce today: the committed saturated diagnosis (network idle 0.21 on its
# busiest broker) against a cost model shaped like the lab demo's fit (network R^2 0.03).
_FIT = '"bytes_coef": 0.0, "n": 9, "rmse": 0.02'
POOR_COST_MODEL = (
    f'{{"network": {{"requests_coef": 2e-05, "intercept": 0.0335, "r2": 0.03, {_FIT}}}, '
    f'"handler": {{"requests_coef": 0.00109, "r2": 0.73, {_FIT}}}}}'
)
SATURATED = Path(__file__).resolve().parents[1] / "unit" / "data" / "forecast" / "saturated-diagnosis.json"
CASES.append(
    Case(
        "forecast-refused-poor-fit",
        "kbt forecast",
        "a cost model that cannot reproduce the diagnosis' measured idle, on a fit too poor to calibrate",
        ("forecast", "--diagnosis", "diagnosis.json", "--cost-model", "model.json"),
        ExitStatus.REFUSED,
        E + "forecast refused: current: live cluster: the cost model gives the busiest broker network idle "
        "0.917 for today's traffic where broker 1 measured 0.210 (+0.71, past 0.1) and its network fit is "
        "too poor to calibrate (R^2 0.03 < 0.5): give --cost-model fitted on records of this cluster or one "
        "set up like it",
        files={"diagnosis.json": SATURATED.read_text(encoding="utf-8"), "model.json": POOR_COST_MODEL},
    )
)


# ---- issue 41: the new surfaces (request logs, truststores, command-config, collector files) ----


def _pkcs12_store(mac_iterations: int) -> str:
    """A PKCS12 truststore (one CA, password hunter2-store) whose MAC iteration count is
    `mac_iterations`, as the LATIN1 body of a case's file."""
    from tests.unit.pkcs12_stores import ca_truststore
    from tests.unit.test_hostile_inputs import _with_mac_iterations

    store = ca_truststore(b"hunter2-store", "kbt bad-input CA")
    return LATIN1 + _with_mac_iterations(store, mac_iterations).decode("latin-1")


def _pkcs12_bag_rounds(rounds: int) -> str:
    """A PKCS12 truststore (one CA, password hunter2-store) whose bag's PBKDF2 runs `rounds` rounds,
    with a valid MAC, as the LATIN1 body of a case's file."""
    from tests.unit.test_truststore_rounds import _store, _with_rounds

    store = _with_rounds(_store(password="hunter2-store"), [rounds], password="hunter2-store")
    return LATIN1 + store.decode("latin-1")


def _request_log_case(id: str, what: str, files: dict[str, str], logs: tuple[str, ...], line: str) -> Case:
    """`kbt diagnose` with request logs: they are checked before Prometheus is asked (none here)."""
    argv = (
        "diagnose",
        "--prometheus",
        "http://127.0.0.1:9",
        *(a for log in logs for a in ("--request-log", log)),
    )
    return Case(id, "request logs", what, argv, ExitStatus.BAD_INPUT, E + line, files=files)


_REQUEST_LINE = (
    '[2026-11-26 22:46:08,982] DEBUG Completed request:{"requestHeader":{"requestApiKey":0}} (x)\n'
)
_TRUSTSTORE_TARGET = (
    "name: t\nbootstrap_servers: [127.0.0.1:9]\nclient:\n  properties:\n    security.protocol: SSL\n"
    "    ssl.truststore.location: trust.p12\n    ssl.truststore.type: PKCS12\n"
    "    ssl.truststore.password: ${KBT_TS_PW}\n"
)
ISSUE_41_CASES: list[Case] = [
    Case(
        "secrets-yaml-key-twice",
        "secrets",
        "a target file giving sasl.password twice, the second a literal (the parser quoted both)",
        ("target", "check", "t.yaml"),
        ExitStatus.BAD_INPUT,
        E + 't.yaml:6: not valid YAML: the key "sasl.password" is given twice (first given on line 5);'
        " give each key once",
        files={
            "t.yaml": "name: t\nbootstrap_servers: [127.0.0.1:9]\nclient:\n  properties:\n"
            '    sasl.password: "${KBT_PW}"\n    sasl.password: "hunter2-pasted"\n'
        },
    ),
    Case(
        "secrets-header-twice",
        "secrets",
        "a Prometheus Authorization header given twice",
        ("target", "check", "t.yaml"),
        ExitStatus.BAD_INPUT,
        E + 't.yaml:6: not valid YAML: the key "Authorization" is given twice (first given on line 5);'
        " give each key once",
        files={
            "t.yaml": "name: t\nbootstrap_servers: [127.0.0.1:9]\nprometheus:\n  url: http://127.0.0.1:9\n"
            '  headers: {Authorization: "Bearer hunter2-a",\n    Authorization: "Bearer hunter2-b"}\n'
        },
    ),
    _request_log_case(
        "request-log-gzip",
        "a gzip'd request log",
        {"r.log.gz": LATIN1 + gzip.compress(_REQUEST_LINE.encode(), mtime=0).decode("latin-1")},
        ("r.log.gz",),
        "r.log.gz: gzip-compressed data, not a request log: unpack it first",
    ),
    _request_log_case(
        "request-log-binary",
        "a request log holding NUL bytes",
        {"r.log": "\x00" + _REQUEST_LINE},
        ("r.log",),
        "r.log: binary data, not a request log (a NUL byte at offset 0)",
    ),
    _request_log_case(
        "request-log-twice",
        "one request log given twice (its requests would count twice)",
        {"r.log": _REQUEST_LINE},
        ("r.log", "./r.log"),
        "r.log: given twice as a request log: give each broker's log once",
    ),
    _request_log_case(
        "request-log-fifo",
        "a request log that is a FIFO",
        {"r.log": FIFO},
        ("r.log",),
        "r.log: is a FIFO, not a request log",
    ),
    Case(
        "truststore-pkcs12-iterations",
        "truststores",
        "a PKCS12 truststore with a MAC iteration count of 2^31-1 (hours of key derivation, deaf to Ctrl-C)",
        ("target", "check", "t.yaml"),
        ExitStatus.BAD_INPUT,
        E + "t: trust.p12: a MAC iteration count of 2,147,483,647 (Java reads PKCS12 stores of 1 to"
        " 5,000,000): not a store kbt opens",
        files={"t.yaml": _TRUSTSTORE_TARGET, "trust.p12": _pkcs12_store(2**31 - 1)},
        env={"KBT_TS_PW": "hunter2-store"},
    ),
    Case(
        "truststore-pkcs12-bag-rounds",
        "truststores",
        "a PKCS12 truststore with a valid MAC whose certificate bag's PBKDF2 asks for 2^31-1 rounds",
        ("target", "check", "t.yaml"),
        ExitStatus.BAD_INPUT,
        E + "t: trust.p12: a bag's key derivation of 2,147,483,647 iterations (Java reads PKCS12 stores"
        " of 1 to 5,000,000): not a store kbt opens",
        files={"t.yaml": _TRUSTSTORE_TARGET, "trust.p12": _pkcs12_bag_rounds(2**31 - 1)},
        env={"KBT_TS_PW": "hunter2-store"},
    ),
    Case(
        "truststore-pem-naming-pkcs12",
        "truststores",
        "ssl.truststore.type PEM naming a PKCS12 file (librdkafka's constructor raised)",
        ("target", "check", "t.yaml"),
        ExitStatus.BAD_INPUT,
        E + "the Kafka client refused its configuration: Failed to create admin client: ssl.ca.location"
        " failed: x509 certificate routines::no certificate or crl found",
        files={
            "t.yaml": _TRUSTSTORE_TARGET.replace("PKCS12", "PEM").replace(
                "    ssl.truststore.password: ${KBT_TS_PW}\n", ""
            ),
            "trust.p12": _pkcs12_store(2048),
        },
    ),
    Case(
        "bootstrap-bad-ipv6",
        "bounds",
        "--bootstrap-server [:::::]:9092",
        ("target", "check", "--bootstrap-server", "[:::::]:9092"),
        ExitStatus.BAD_INPUT,
        E
        + "--bootstrap-server: '[:::::]:9092' is not host:port (a DNS name of at most 253 characters, an IPv4"
        " address or a [bracketed] IPv6 address, and a port 1-65535)",
    ),
    Case(
        "bootstrap-line-break",
        "bounds",
        "--bootstrap-server ending in a line break",
        ("target", "check", "--bootstrap-server", "broker:9092\n"),
        ExitStatus.BAD_INPUT,
        E + "--bootstrap-server: 'broker:9092\\n' is not host:port (a DNS name of at most 253 characters,"
        " an IPv4 address or a [bracketed] IPv6 address, and a port 1-65535)",
    ),
    Case(
        "bootstrap-long-host",
        "bounds",
        "--bootstrap-server with a host of 300 characters (a DNS name has at most 253)",
        ("target", "check", "--bootstrap-server", "h" * 300 + ":9092"),
        ExitStatus.BAD_INPUT,
        E + "--bootstrap-server: '" + "h" * 120 + "' is not host:port (a DNS name of at most 253 characters,"
        " an IPv4 address or a [bracketed] IPv6 address, and a port 1-65535)",
    ),
    Case(
        "bootstrap-empty",
        "library wording",
        "an empty --bootstrap-server",
        ("target", "check", "--bootstrap-server", ""),
        ExitStatus.BAD_INPUT,
        E + "--bootstrap-server: give at least one host:port (a comma-separated list)",
    ),
    Case(
        "bounds-cost-model-queue-cap",
        "bounds",
        "a cost model whose queue_cap is 2^53 (numpy asked for 64 PiB)",
        ("forecast", "--diagnosis", "diagnosis.json", "--cost-model", "model.json"),
        ExitStatus.BAD_INPUT,
        E + "--cost-model model.json: not a cost model: queue.queue_cap: must be less than or equal to"
        " 1000000 (got 9007199254740992)",
        files={
            "diagnosis.json": SATURATED.read_text(encoding="utf-8"),
            "model.json": POOR_COST_MODEL[:-1]
            + ', "queue": {"service_rate_per_s": 1000, "queue_cap": 9007199254740992}}',
        },
    ),
    Case(
        "bounds-cost-model-negative",
        "bounds",
        "a cost model whose network cost per request is negative (a request cannot free a thread)",
        ("forecast", "--diagnosis", "diagnosis.json", "--cost-model", "model.json"),
        ExitStatus.BAD_INPUT,
        E + "--cost-model model.json: not a cost model: network.requests_coef: must be greater than or equal"
        " to 0 (got -5)",
        files={
            "diagnosis.json": SATURATED.read_text(encoding="utf-8"),
            "model.json": POOR_COST_MODEL.replace('"requests_coef": 2e-05', '"requests_coef": -5'),
        },
    ),
    Case(
        "otelcol-literal-password",
        "secrets",
        "check otelcol of a fragment holding a literal password (check filebeat refuses one too)",
        ("check", "otelcol", "otelcol.yaml"),
        ExitStatus.BAD_INPUT,
        E + 'otelcol.yaml: "exporters.kafka.auth.sasl.password" must be an ${env:VAR} reference'
        " (credentials are never written in a file)",
        files={
            "otelcol.yaml": "exporters:\n  kafka:\n    auth:\n      sasl:\n        password: hunter2-otel\n"
        },
    ),
    Case(
        "otelcol-brokers-variable-listed",
        "Collector config",
        "the brokers variable as one list element (one seed address to the collector, every record dropped)",
        ("check", "otelcol", "otelcol.yaml"),
        ExitStatus.BAD_INPUT,
        E + "otelcol.yaml: exporters.kafka.brokers: a ${env:KAFKA_HOSTS} list element is one broker address"
        " to the collector: with several brokers in the variable every record is dropped; write brokers:"
        " ${env:KAFKA_HOSTS} (the variable alone, not in a list)",
        files={"otelcol.yaml": 'exporters:\n  kafka:\n    brokers: ["${env:KAFKA_HOSTS}"]\n'},
    ),
    Case(
        "otelcol-fifo",
        "files",
        "check otelcol of a FIFO (it was read without a cap)",
        ("check", "otelcol", "otelcol.yaml"),
        ExitStatus.BAD_INPUT,
        E + "otelcol.yaml: is a FIFO, not a collector config",
        files={"otelcol.yaml": FIFO},
    ),
]
CASES += ISSUE_41_CASES

TRUTH_FILEBEAT = (
    Path(__file__).resolve().parents[2]
    / "loadtests/truth/records/truth-filebeat/fb-filestream-low-latency--20261127T025405.654Z.json"
).read_text()


def _lab_state(**config: object) -> str:
    """A lab state as `kbt lab up` writes it (phase up), with `config` settings put in as they are."""
    from tuner.lab.config import LabConfig
    from tuner.lab.state import new_state

    state = json.loads(new_state(LabConfig(lab_dir=Path("lab")), "abc", 1.8e9).model_dump_json())
    state["phase"] = "up"
    state["config"].update(config)
    return json.dumps(state)


# Files named as what they are (not "spec file" for every YAML file kbt reads); flags held to their
# range where they are parsed, so --dry-run refuses them too.
LATE_CASES: list[Case] = [
    Case(
        "files-thresholds-directory",
        "files",
        "a directory given as the thresholds file",
        ("diagnose", "--prometheus", "http://127.0.0.1:9", "--thresholds", "thresholds"),
        ExitStatus.BAD_INPUT,
        E + "thresholds: is a directory, not a thresholds file",
        files={"thresholds/keep.txt": "x"},
    ),
    Case(
        "stress-master-port-range",
        "CLI",
        "--master-port past 65535 (locust would have refused it once the lab had ramped)",
        ("stress", "stress.yaml", *DRY, "--master-port", "99999"),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--master-port': must be less than or equal to 65535 (got 99999)"
        " (see 'kbt stress --help')",
        files={"stress.yaml": "{stress}"},
    ),
    Case(
        "writes-render-out-empty",
        "partial writes",
        "render --out '' (read as '.': the profiles and a README.md were written over the working directory)",
        ("render", "filebeat", "--out", ""),
        ExitStatus.BAD_INPUT,
        E + "Invalid value for '--out': an empty path; give a path ('.' is the working directory)"
        " (see 'kbt render filebeat --help')",
        files={"README.md": "mine\n"},
    ),
    Case(
        "writes-json-over-its-input",
        "partial writes",
        "check filebeat f.yml --json f.yml (the check's JSON replaced the config it checked)",
        ("check", "filebeat", "filebeat.yml", "--json", "filebeat.yml"),
        ExitStatus.BAD_INPUT,
        E + "--json filebeat.yml: is an input of this command too; give the output its own path",
        files={"filebeat.yml": GOOD_FILEBEAT},
    ),
    Case(
        "writes-png-dir-stdout",
        "partial writes",
        "report --png-dir - (a directory named '-' was made; every other output takes '-' as stdout)",
        ("report", "--results", "results", "--png-dir", "-"),
        ExitStatus.BAD_INPUT,
        E + "--png-dir -: names a directory, which cannot be stdout",
    ),
    Case(
        "writes-render-over-a-users-file",
        "partial writes",
        "render --out . where a README.md of the user's is (it was replaced by the profiles' README)",
        ("render", "filebeat", "--out", "."),
        ExitStatus.BAD_INPUT,
        E + "README.md: not a file `kbt render filebeat` wrote, so it is not replaced; move it away or give"
        " --out another directory",
        files={"README.md": "mine\n"},
    ),
    Case(
        "files-results-is-a-record",
        "files",
        'a run record given as the results directory (it was "no such results directory")',
        ("report", "--results", "r.json"),
        ExitStatus.BAD_INPUT,
        E + "r.json: is a file, not a results directory",
        files={"r.json": "{}"},
    ),
    spec_case(
        "spec-filebeat-output-not-a-mapping",
        "a Filebeat profile whose output is a number (was an AttributeError traceback)",
        "  - {name: batched, linger_ms: 50, compression: lz4}",
        "  - {name: fb, client: filebeat, filebeat: {output: 5}}",
        E + "spec.yaml:11: profiles[0].filebeat.output: must be a mapping of keys (got 5)",
    ),
    Case(
        "records-filebeat-output-null",
        "bounds",
        "a run record whose Filebeat profile's output is null (was an AttributeError traceback)",
        ("report", "--results", "results", "--out", "r.html"),
        ExitStatus.BAD_INPUT,
        E + "results: no readable run records: results/s/r.json: invalid run record:"
        " plan.profile.filebeat.output: must be a mapping of keys",
        files={
            "results/s/r.json": re.sub(r'"output": \{\s*"kafka": \{\}\s*\}', '"output": null', TRUTH_FILEBEAT)
        },
    ),
    Case(
        "lab-state-profile-mapping",
        "lab state",
        "a lab state whose config.profile is a mapping (was an unhashable-type TypeError traceback)",
        ("lab", "status", "--lab-dir", "lab"),
        ExitStatus.ENVIRONMENT,
        E + "lab state lab/state.json is unreadable (config: unknown lab profile {}); remove it and run"
        " 'kbt lab up'",
        files={"lab/state.json": _lab_state(profile={})},
    ),
    Case(
        "http-figure-past-its-bound",
        "network",
        "a Prometheus whose broker figure is past its bound, 1e308 scrapes (was a ValidationError traceback)",
        ("diagnose", "--prometheus", "{prom}/huge"),
        ExitStatus.UNREACHABLE,
        E + "Prometheus at {prom}/huge answered a figure kbt cannot use: broker 1: scrape_attempts: must be"
        " less than or equal to 9007199254740992 (got 1e+308)",
        serve="hostile",
    ),
    Case(
        "window-past-prometheus-points",
        "bounds",
        "--window 24h --step 1s: 86,401 points a series (Prometheus answers a range query of 11,000 at most)",
        ("diagnose", "--prometheus", "http://127.0.0.1:9", "--window", "24h", "--step", "1s"),
        ExitStatus.BAD_INPUT,
        E + "--window 24h at --step 1s is 86,401 points a series, past the 11,000 Prometheus answers a query:"
        " give a step of 8 s or longer (or a shorter --window)",
    ),
    Case(
        "compare-window-past-prometheus-points",
        "bounds",
        "compare --window 12h --step 1s: 43,201 points a series in each window",
        (
            "compare",
            "--prometheus",
            "http://127.0.0.1:9",
            "--window",
            "12h",
            "--step",
            "1s",
            "--before",
            "now-13h",
        ),
        ExitStatus.BAD_INPUT,
        E + "--window 12h at --step 1s is 43,201 points a series, past the 11,000 Prometheus answers a query:"
        " give a step of 4 s or longer (or a shorter --window)",
    ),
    Case(
        "http-figure-negative",
        "network",
        "a Prometheus answering a negative produce time (it was diagnosed as it came)",
        ("diagnose", "--prometheus", "{prom}/negative"),
        ExitStatus.UNREACHABLE,
        E + "Prometheus at {prom}/negative answered a figure kbt cannot use: broker 1: produce_total_p999_ms:"
        " must be 0 or more (got -5)",
        serve="hostile",
    ),
    Case(
        "http-compare-p99-negative",
        "network",
        "compare where Prometheus answers a negative produce p99 (compare showed it as it came)",
        ("compare", "--prometheus", "{prom}/negative-p99", "--before", "1700000000", "--after", "1700003600"),
        ExitStatus.UNREACHABLE,
        E + "Prometheus at {prom}/negative-p99 answered a figure kbt cannot use: broker 1:"
        " produce_total_p99_ms: must be 0 or more (got -5)",
        serve="hostile",
    ),
]
CASES += LATE_CASES

# A team's own client files (collector configs, properties files) as their client reads them.
CLIENT_FILE_CASES: list[Case] = [
    Case(
        "otelcol-top-level-list",
        "Collector config",
        "check otelcol of a file whose top level is a list (the collector's answer came with its log time)",
        ("check", "otelcol", "otelcol.yaml"),
        ExitStatus.BAD_INPUT,
        E + "otelcol.yaml: expected a mapping of keys at the top level, not a list",
        files={"otelcol.yaml": "- exporters\n- service\n"},
    ),
    Case(
        "properties-line-after-comments",
        "files",
        "a bad line after comments and a continuation (it was numbered among the key lines alone)",
        ("check", "librdkafka", "producer.properties"),
        ExitStatus.BAD_INPUT,
        E + "producer.properties: line 5 is not key=value",
        files={"producer.properties": "# team defaults\n\nlinger.ms=5\\\n  0\n=lz4\n"},
    ),
    Case(
        "properties-byte-order-mark",
        "files",
        "a properties file saved with a byte-order mark (Java reads it into the first key; kbt dropped it)",
        ("check", "java", "producer.properties"),
        ExitStatus.BAD_INPUT,
        E + "producer.properties: starts with a byte-order mark, which Kafka's tools and Java clients read"
        " as part of the first key (that setting is then ignored): save the file as UTF-8 without one",
        files={"producer.properties": "\ufefflinger.ms=5\nacks=all\n"},
    ),
    Case(
        "properties-windows-path",
        "files",
        "a Windows path's \\users in a properties file (Java refuses the \\u escape; kbt read it as u)",
        (
            "stress",
            "stress.yaml",
            *DRY,
            "--bootstrap-server",
            "127.0.0.1:9",
            "--command-config",
            "c.properties",
        ),
        ExitStatus.BAD_INPUT,
        E + "--command-config c.properties: line 2 has a \\u escape without four hex digits (Java refuses the"
        " file: Malformed \\uxxxx encoding); a backslash before a u is written \\\\u",
        files={
            "stress.yaml": GOOD_STRESS,
            "c.properties": "security.protocol=SSL\nssl.truststore.location=C:\\users\\kafka\\t.jks\n",
        },
    ),
    Case(
        "filebeat-many-values",
        "files",
        "a Filebeat configuration of 60,000 keys (under the size cap; it was read for minutes)",
        ("check", "filebeat", "filebeat.yml"),
        ExitStatus.BAD_INPUT,
        E + "filebeat.yml:50000: more than 100,000 values: not a file kbt reads",
        files={"filebeat.yml": "".join(f"k{i}: {i}\n" for i in range(60_000))},
    ),
    Case(
        "filebeat-two-documents",
        "files",
        "a Filebeat configuration holding two YAML documents (it was ruamel's 'but found another document')",
        ("check", "filebeat", "filebeat.yml"),
        ExitStatus.BAD_INPUT,
        E + "filebeat.yml:12: not valid YAML: a second document (after ---): kbt reads one document a file",
        files={"filebeat.yml": GOOD_FILEBEAT + "---\n" + GOOD_FILEBEAT},
    ),
    Case(
        "properties-negative-linger",
        "sweep spec",
        "a team's Java properties file with linger.ms=-5 (it was 'must be a whole number in ASCII digits')",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "producer.properties: overrides: \"linger.ms\": must be -1 or more (got '-5')",
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "  - {name: batched, linger_ms: 50, compression: lz4}", "  - java:producer.properties"
            ),
            "producer.properties": "linger.ms=-5\nacks=all\n",
        },
    ),
    Case(
        "profile-file-is-fifo",
        "sweep spec",
        "a FIFO named where a team's properties file goes (it was 'no such file')",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + 'spec.yaml:11: profiles[0]: "producer.properties" is a FIFO, not a file',
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "  - {name: batched, linger_ms: 50, compression: lz4}", "  - java:producer.properties"
            ),
            "producer.properties": FIFO,
        },
    ),
    Case(
        "librdkafka-unknown-property",
        "sweep spec",
        "a misspelled property in a team's librdkafka file (it passed the dry run and failed at run time)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + f'producer.properties:3: unknown librdkafka property "lingr.ms" (librdkafka {LIBRDKAFKA})'
        ' (did you mean "linger.ms"?)',
        files={
            "spec.yaml": LIBRDKAFKA_FILE_SPEC,
            "producer.properties": "# the team's producer\nacks=all\nlingr.ms=5\n",
        },
    ),
    Case(
        "librdkafka-bad-value",
        "stress spec",
        "a codec librdkafka does not have in a stress profile's overrides (it failed at run time)",
        ("stress", "stress.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + 'stress.yaml:13: profiles.recommended: librdkafka refuses compression.type: Invalid value "lz5"'
        ' for configuration property "compression.codec"',
        files={
            "stress.yaml": GOOD_STRESS.replace(
                "  recommended: {name: batched, linger_ms: 50, compression: lz4}",
                "  recommended:\n    name: batched\n    overrides: {compression.type: lz5}",
            )
        },
    ),
    Case(
        "librdkafka-consumer-property",
        "files",
        "a consumer's property in a librdkafka producer file (librdkafka ignores it; check said ok)",
        ("check", "librdkafka", "producer.properties"),
        ExitStatus.BAD_INPUT,
        E + f'producer.properties:2: "enable.auto.commit" is a consumer property: a librdkafka producer'
        f" ignores it (librdkafka {LIBRDKAFKA})",
        files={"producer.properties": "linger.ms=5\nenable.auto.commit=false\n"},
    ),
    Case(
        "librdkafka-bad-value-beside-secret",
        "sweep spec",
        "a bad linger.ms in a librdkafka file that also holds a password (the password is never shown)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "producer.properties:2: librdkafka refuses linger.ms: Invalid value for configuration property"
        ' "queue.buffering.max.ms"',
        files={
            "spec.yaml": LIBRDKAFKA_FILE_SPEC,
            "producer.properties": "sasl.password=hunter2\nlinger.ms=five\n",
        },
    ),
    Case(
        "librdkafka-security-protocol-value",
        "sweep spec",
        "a misspelled security.protocol in a team's librdkafka file (the deployment's settings were checked"
        " by name only: it passed the dry run)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + 'producer.properties:2: librdkafka refuses security.protocol: Invalid value "plaintextt" for'
        ' configuration property "security.protocol"',
        files={
            "spec.yaml": LIBRDKAFKA_FILE_SPEC,
            "producer.properties": "acks=all\nsecurity.protocol=plaintextt\n",
        },
    ),
    Case(
        "librdkafka-sasl-mechanism-value",
        "sweep spec",
        "a SASL mechanism librdkafka does not have, in a file whose SASL the deployment switches on"
        " (librdkafka reads it only with SASL on; the password beside it is never shown)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "producer.properties:1: librdkafka refuses sasl.mechanism: Unsupported SASL mechanism: BOGUS",
        files={
            "spec.yaml": LIBRDKAFKA_FILE_SPEC,
            "producer.properties": "sasl.mechanism=BOGUS\nsasl.password=hunter2\n",
        },
    ),
    Case(
        "librdkafka-integer-fraction",
        "sweep spec",
        "a number librdkafka would misread where it takes an integer (retries 1e3 ran as 1 retry;"
        " linger.ms, a float to it, takes 0.5)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + 'spec.yaml:11: profiles[0].overrides: "retries": must be a whole number in ASCII digits'
        " (got '1e3')",
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "  - {name: batched, linger_ms: 50, compression: lz4}",
                '  - {name: batched, overrides: {linger.ms: 0.5, retries: "1e3"}}',
            ),
        },
    ),
    Case(
        "librdkafka-filebeat-yaml",
        "sweep spec",
        "a Filebeat YAML named as a librdkafka file (its YAML keys were run as properties)",
        ("sweep", "spec.yaml", *DRY),
        ExitStatus.BAD_INPUT,
        E + "filebeat.yml: a YAML file, not librdkafka properties: name a Filebeat or collector config"
        " without a kind",
        files={
            "spec.yaml": GOOD_SPEC.replace(
                "  - {name: batched, linger_ms: 50, compression: lz4}", "  - librdkafka:filebeat.yml"
            ),
            "filebeat.yml": GOOD_FILEBEAT,
        },
    ),
]
CASES += CLIENT_FILE_CASES

# Results directories whose entries are named like records but are not files kbt wrote: each is named
# in one line (a FIFO would otherwise be waited on for ever), and nothing is written.
READ_BACK_CASES: list[Case] = [
    Case(
        "files-results-record-fifo",
        "files",
        "a FIFO named like a run record in a results directory (a reader would block on it)",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        E + "results/s/r.json: is a FIFO, not a run record",
        files={"results/s/r.json": FIFO},
    ),
    Case(
        "files-results-record-directory",
        "files",
        "a directory named like a run record in a results directory",
        ("forecast", "--results", "results"),
        ExitStatus.BAD_INPUT,
        E + "results/s/r.json: is a directory, not a run record",
        files={"results/s/r.json/x": "x"},
    ),
    Case(
        "files-results-record-symlink-loop",
        "files",
        "a symbolic link loop named like a run record in a results directory",
        ("report", "--results", "results", "--out", "r.html"),
        ExitStatus.BAD_INPUT,
        E + "results: no readable run records: results/s/r.json: cannot read: Too many levels of symbolic"
        " links",
        files={"results/s/r.json": SYMLINK_LOOP},
    ),
    Case(
        "numbers-record-version-long",
        "numbers",
        "a run record whose schema_version is a string of 300 digits (the line once ended in them)",
        ("recommend", "--results", "results"),
        ExitStatus.BAD_INPUT,
        E + f'results/s/r.json: run record schema_version "999999999... (292 more characters), this kbt'
        f" reads 1 to {SCHEMA_VERSION}",
        files={"results/s/r.json": '{"schema_version": "' + "9" * 300 + '"}'},
    ),
]
CASES += READ_BACK_CASES
# a sweep names a value once for each setting: the run runs it (tuner/spec/sweep.py _varied)
CASES.append(
    spec_case(
        "spec-vary-one-setting-twice",
        "two varied settings that decide one client setting (a knob and an alias of its property)",
        "compression: lz4}\n",
        "compression: lz4}\nvary:\n  profile.linger_ms: [5, 50]\n"
        "  profile.overrides.queue.buffering.max.ms: [100]\n",
        E + "spec.yaml: run (profile=batched, profile.linger_ms=5,"
        " profile.overrides.queue.buffering.max.ms=100): profile.linger_ms and"
        " profile.overrides.queue.buffering.max.ms decide one librdkafka setting: name one of them",
    )
)
CASES.append(
    spec_case(
        "spec-vary-setting-turned-off",
        "a varied setting the profile turns off (Filebeat's flush.timeout with flush.min_events 0)",
        "{name: batched, linger_ms: 50, compression: lz4}\n",
        "{name: fb, client: filebeat, filebeat: {queue.mem.flush.min_events: 0}}\n"
        "vary:\n  profile.filebeat.queue.mem.flush.timeout: [100ms, 5s]\n",
        E + "spec.yaml: run (profile=fb, profile.filebeat.queue.mem.flush.timeout=100ms):"
        " profile.filebeat.queue.mem.flush.timeout would not run: with queue.mem.flush.min_events 0, Filebeat"
        " hands events over at once (set profile.filebeat.queue.mem.flush.min_events in the run too)",
    )
)


def capture_json(start: float = 1_795_000_000.0, end: float = 1_795_000_060.0, **client: int) -> str:
    """A capture.json as `kbt capture` writes it: one client on one broker over the window (600
    requests of 1000 B in 60 s, its fields as given), a plan of no group."""
    row = {
        "client_id": "app",
        "broker": "b1:9092",
        "requests": 600,
        "record_bytes": 600_000,
        "partitions": 600,
    }
    record = {
        "start": start,
        "end": end,
        "bootstrap_servers": "b1:9092",
        "brokers": 1,
        "clients": [row | client],
    }
    plan = {"scale": 1.0, "producers": 1, "lab_producers": 1, "groups": [], "busiest_broker": None,
            "worst_offender": None, "notes": [], "options": {}}  # fmt: skip
    return json.dumps({"record": record, "plan": plan})


CAPTURED = E + "capture/capture.json: invalid capture: "
CALIBRATE = "tuner.render.calibrate"
CAPTURE_WINDOW = "tuner.render.capture_window"


def _calibrated(case_id: str, what: str, line: str, capture: str) -> Case:
    """`python -m tuner.render.calibrate` (a reader of capture.json) of a capture read back, its own
    replay: the record is refused before anything is calibrated or written."""
    files = {"capture/capture.json": capture}
    argv = ("capture", "capture", "calibrated")
    status = ExitStatus.BAD_INPUT
    return Case(case_id, "capture", what, argv, status, CAPTURED + line, files, module=CALIBRATE)


CAPTURE_CASES: list[Case] = [
    _calibrated(
        "capture-record-window-tiny",
        "a capture.json read back whose window is 1e-300 s (every rate past 1e300 a second, accepted)",
        "end: a window of 1e-300 s from start to end, not one kbt captures (5 s to 7200 s)",
        capture_json(start=0.0, end=1e-300),
    ),
    _calibrated(
        "capture-record-requests-implausible",
        "a capture.json read back with 9e15 produce requests of one client in a 60 s window (accepted)",
        "clients.0.requests: 9,000,000,000,000,000 in a 60 s window is 1.5e+14 produce requests a second,"
        " past any cluster's 1e+09",
        capture_json(requests=9 * 10**15, record_bytes=0, partitions=0),
    ),
    _calibrated(
        "capture-record-more-connections-than-requests",
        "a capture.json read back whose client produced on more connections than it sent requests",
        "clients.0.connections: 5,000 against 600 requests (each counted from a request)",
        capture_json(connections=5000),
    ),
    Case(
        "capture-check-diagnosis-damaged",
        "capture",
        "the capture bench's acceptance over a diagnosis damaged by hand: a rate that is a list (a"
        " TypeError traceback)",
        ("out",),
        ExitStatus.BAD_INPUT,
        E + "out/source-diagnosis.json: not a `kbt diagnose --json` file",
        files={
            "out/capture/capture.json": capture_json(),
            "out/replay-capture/capture.json": capture_json(),
            "out/source-diagnosis.json": json.dumps(
                {
                    "snapshot": {
                        "brokers": [{"broker": "1", "produce_requests_per_s": [54], "bytes_in_per_s": 1}]
                    }
                }
            ),
        },
        module="tuner.render.capture_check",
    ),
    Case(
        "capture-window-end-damaged",
        "capture",
        "the capture scripts' window end (scripts/bench_capture.sh, pressure_loop.sh) of a capture.json"
        " whose end was made a word by hand (a traceback of the scripts' own JSON read, or a time made up)",
        ("capture",),
        ExitStatus.BAD_INPUT,
        CAPTURED + "end: must be a number such as 12 or 0.5, in ASCII digits (got 'soon')",
        files={"capture/capture.json": capture_json().replace("1795000060.0", '"soon"')},
        module=CAPTURE_WINDOW,
    ),
    Case(
        "capture-window-runs-damaged",
        "capture",
        "scripts/pressure_loop.sh's rollout window end over a run record that is not an object (a"
        " TypeError traceback)",
        ("--runs", "after"),
        ExitStatus.BAD_INPUT,
        E + "after/s/r--1.json: not a run record: expected a JSON object, found a list",
        files={"after/s/r--1.json": "[]"},
        module=CAPTURE_WINDOW,
    ),
]
CASES += CAPTURE_CASES


def render_doc() -> str:
    """docs/errors.md: the exit codes, then every catalogued bad input with its line."""
    out = [
        "<!-- Generated by `python -m tests.e2e.bad_inputs --write` from the bad-input catalog that"
        " tests/e2e/test_bad_inputs.py runs. Do not edit. -->",
        "",
        "# Errors and exit codes",
        "",
        "kbt reports an expected problem as one line on stderr, `kbt: error: ...`, and exits with a",
        "code from the table below; it never prints a traceback for bad input. Each row of the second",
        "table is run by the test suite as written, and the message is checked word for word (a value",
        f"longer than {MAX_CELL} characters is shown cut here, with its length).",
        *textwrap.wrap(
            f"`{DOC_PROM}` is a local endpoint the test opens for the case: a port that refuses"
            " connections, an HTTP server that answers with an HTML page, or a fake Prometheus that makes"
            " a transport fault (bad gzip, truncation, a bad chunk, a redirect elsewhere, echoed"
            " credentials).",
            100,
            break_long_words=False,
            break_on_hyphens=False,
        ),
        "",
        "| exit code | name | meaning |",
        "|---|---|---|",
    ]
    meanings = {
        ExitStatus.OK: "success",
        ExitStatus.FAILURE: "a run failed (records lost) or a check found a problem",
        ExitStatus.BAD_INPUT: "bad flag, spec, profile or file: fix the input",
        ExitStatus.NO_SOLUTION: "no setting meets the SLO",
        ExitStatus.ENVIRONMENT: "the machine is not ready: no lab running, port taken, tool missing",
        ExitStatus.UNREACHABLE: "a broker or Prometheus could not be reached, or answered garbage",
        ExitStatus.REFUSED: "`kbt forecast`: the cost model cannot reproduce today's measured idle (a fit "
        "too poor to calibrate) or nothing was measured: fit the model on records of this cluster",
        ExitStatus.WARNING: "`kbt diagnose`: warning",
        ExitStatus.CRITICAL: "`kbt diagnose`: critical",
        ExitStatus.INTERRUPTED: "interrupted (Ctrl-C / SIGTERM / SIGHUP); completed records are kept",
        ExitStatus.BROKEN_PIPE: "the reader of stdout went away (`kbt ... \\| head -c1`); nothing is printed",
    }
    for status in ExitStatus:
        out.append(f"| {int(status)} | `{status.name}` | {meanings[status]} |")
    out += [
        "",
        "## Bad inputs",
        "",
        "| # | area | bad input | command | exit | message |",
        "|---|---|---|---|---|---|",
    ]
    for n, case in enumerate(CASES, 1):
        env = " ".join(f"{k}={v}" for k, v in case.env.items())
        # a line break in an argument would end the table's row: shown escaped
        command = _cell(escape_controls(" ".join(filter(None, [env, case.program, *case.command(DOC_PROM)]))))
        message = _cell(case.expected(DOC_PROM)).replace("|", "\\|")
        out.append(f"| {n} | {case.area} | {case.what} | `{command}` | {int(case.status)} | `{message}` |")
    return "\n".join(out) + "\n"


# A cell longer than this (a case of 20,000 query parameters) is shown cut, with its length: the
# test runs the whole value, the page stays readable
MAX_CELL = 240


def _cell(text: str) -> str:
    if len(text) <= MAX_CELL:
        return text
    return f"{text[: MAX_CELL - 40]}... ({len(text):,} characters in all)"


DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/errors.md")
    args = parser.parse_args()
    if args.write:
        DOC.write_text(render_doc())
        print(f"wrote {DOC.name} ({len(CASES)} cases)")
        return 0
    sys.stdout.write(render_doc())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
