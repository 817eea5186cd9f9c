"""The bad-input catalog: every entry is run as `kbt ...` by tests/e2e/test_bad_inputs.py, which
asserts the exit code and the exact one-line message, and docs/errors.md is generated from it.

    python -m tests.e2e.bad_inputs --write    # rewrite docs/errors.md after changing a case

Each case runs in a fresh empty directory holding only its `files`; `{spec}` in a file body is
replaced with the good sweep spec below, so a case states only what it breaks.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.errors import ExitStatus

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
  hosts: ["${KAFKA_HOSTS}"]
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

    def materialise(self, directory: Path) -> None:
        for name, body in self.files.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if body.startswith("\x00"):
                path.write_bytes(body.encode("latin-1"))
            else:
                path.write_text(body.replace("{spec}", GOOD_SPEC))


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
        E + "spec.yaml:8: workload.duration_s: must be greater than 0 (got 0)",
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
        E + "invalid lab setting security: Input should be 'plaintext' or 'sasl_ssl' (got 'tls')",
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
        E + "spec.yaml: cannot read: 'utf-8' codec can't decode byte 0xff in position 1: invalid start byte",
        files={"spec.yaml": "\x00\xff\xfe\x00garbage"},
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
        E + "Invalid value for '--brokers': Input should be greater than or equal to 1"
        " (see 'kbt lab up --help')",
    ),
    Case(
        "lab-privileged-port",
        "CLI",
        "--base-port below 1024",
        ("lab", "up", "--base-port", "80", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting base_port: Input should be greater than or equal to 1024 (got 80)",
    ),
    Case(
        "lab-bad-heap",
        "CLI",
        "--heap not a JVM size",
        ("lab", "up", "--heap", "2x", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting heap: String should match pattern '^[1-9][0-9]*[mMgG]$' (got '2x')",
    ),
    Case(
        "lab-fast-scrape",
        "CLI",
        "--scrape-interval below 0.5 s",
        ("lab", "up", "--scrape-interval", "0.1", *NO_LAB),
        ExitStatus.BAD_INPUT,
        E + "invalid lab setting scrape_interval_s: Input should be greater than or equal to 0.5 (got 0.1)",
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
        E + "nope.yml: no such spec file",
    ),
]


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
        "table is run by the test suite as written, and the message is checked word for word.",
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
        ExitStatus.WARNING: "`kbt diagnose`: warning",
        ExitStatus.CRITICAL: "`kbt diagnose`: critical",
        ExitStatus.INTERRUPTED: "interrupted (Ctrl-C / SIGTERM); completed records are kept",
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
        command = " ".join(filter(None, [env, "kbt", *case.argv]))
        message = case.line.replace("|", "\\|")
        out.append(f"| {n} | {case.area} | {case.what} | `{command}` | {int(case.status)} | `{message}` |")
    return "\n".join(out) + "\n"


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
