"""`kbt check filebeat FILE...`: validate Filebeat `output.kafka` + `queue.mem` profiles offline;
`kbt check otelcol FILE...`: OpenTelemetry Collector configs, by the collector's own `validate`;
`kbt check librdkafka|java FILE...`: producer properties files, by the client's own parser."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from pathlib import Path

import typer

from tuner.cli.json_out import write_json
from tuner.cli.options import option
from tuner.core.errors import BadInput, ExitStatus
from tuner.core.inputs import shown_path
from tuner.core.properties import parse_properties, read_properties
from tuner.core.redact import scrub
from tuner.core.text import one_line, value
from tuner.core.units import MAX_KAFKA_BYTES
from tuner.core.writes import is_stdout
from tuner.spec.filebeat_lines import line_of
from tuner.spec.filebeat_load import filebeat_warnings, load_filebeat

app = typer.Typer(help="Check client configuration files without touching a broker.", no_args_is_help=True)


@app.command()
def filebeat(
    files: list[Path] = typer.Argument(..., help="Filebeat YAML files (output.kafka and queue.mem)."),
    topic_max_message_bytes: int | None = typer.Option(
        None,
        "--topic-max-message-bytes",
        min=1,
        max=MAX_KAFKA_BYTES,
        help="The target topic's max.message.bytes: warn when output.kafka.max_message_bytes exceeds it.",
    ),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors (exit 2)."),
    filebeat_version: str | None = typer.Option(
        None,
        "--filebeat-version",
        help="The Filebeat version the files are for: its queue defaults and rules (7.17, or 8.13 and"
        " later incl. 9.x), and that build's `filebeat test config` when it is installed (see kbt"
        " --version). Default: the newest build.",
    ),
    json_path: Path | None = option("--json", what="each file's errors and warnings"),
) -> None:
    """Check Filebeat configuration files: unknown keys, bad values, settings without effect.

    Reject unknown options (with a did-you-mean hint) and bad values, one line per file (exit 2);
    warn about settings that have no effect, e.g. bulk_max_size above queue.mem.flush.min_events.
    When a real Filebeat build is installed, it also runs `filebeat test config` on each file (TLS
    files not on this machine as placeholder PEMs, said in a note). `${VAR}` in a number, boolean
    or duration option is read from the environment, else its default, as Filebeat reads it. The
    YAML is read as Filebeat's reader reads it: unquoted yes/on/no/off are booleans, 04000 is octal."""
    from tuner.driver.filebeat.builds import filebeat_builds

    builds = filebeat_builds()
    if filebeat_version is not None:
        _note_unbuilt(filebeat_version, builds)
    run_binary = bool(builds) and (filebeat_version is None or filebeat_version in builds)
    version = filebeat_version or (list(builds)[-1] if builds else None)
    checked: list[dict[str, object]] = []
    for path in files:
        try:
            loaded = load_filebeat(path, version)
        except BadInput as exc:
            sys.stderr.write(f"kbt: error: {exc.message}\n")
            checked.append({"file": path, "ok": False, "errors": [exc.message], "warnings": []})
            continue
        message = _filebeat_refuses(path, filebeat_version) if run_binary else None
        if message is not None:
            sys.stderr.write(f"kbt: error: {message}\n")
            checked.append({"file": path, "ok": False, "errors": [message], "warnings": []})
            continue
        warnings = filebeat_warnings(loaded, topic_max_message_bytes)
        for line in warnings:
            sys.stderr.write(f"kbt: warning: {line}\n")
        ok = not (strict and warnings)
        checked.append({"file": path, "ok": ok, "errors": [], "warnings": list(warnings)})
        if ok and not warnings:
            typer.echo(f"{path}: ok", err=is_stdout(json_path))
    write_json(json_path, "check filebeat", strict=strict, files=checked)
    if any(not c["ok"] for c in checked):
        raise typer.Exit(int(ExitStatus.BAD_INPUT))


def _filebeat_refuses(path: Path, filebeat_version: str | None) -> str | None:
    """`filebeat test config`'s one-line complaint about `path` (None: it takes it); its notes on
    stderr."""
    from tuner.driver.filebeat.testconfig import test_config

    said: list[str] = []
    tested, problem = test_config(path, filebeat_version, said)
    for line in said:
        sys.stderr.write(f"kbt: note: {line}\n")
    return None if problem is None else f"{path}: filebeat {tested} test config: {problem}"


def _note_unbuilt(filebeat_version: str, builds: Collection[str]) -> None:
    """Exit 2 on a version no line models; a note when it is modelled but not built."""
    try:
        modelled = line_of(filebeat_version)
    except ValueError as exc:
        sys.stderr.write(f"kbt: error: --filebeat-version: {exc}\n")
        raise typer.Exit(int(ExitStatus.BAD_INPUT)) from None
    if filebeat_version not in builds:
        sys.stderr.write(
            f"kbt: note: no Filebeat {filebeat_version} build (built: {', '.join(builds) or 'none'}):"
            f" checked against the {modelled.name} line's defaults and rules, without"
            " `filebeat test config`\n"
        )


@app.command()
def otelcol(
    files: list[Path] = typer.Argument(
        ..., help="OpenTelemetry Collector config files or fragments (kbt recommend's otelcol.yaml)."
    ),
    json_path: Path | None = option("--json", what="each file's errors"),
) -> None:
    """Check OpenTelemetry Collector configs with the collector's own `validate`.

    Each file is merged over a stub base (a file_log receiver, the kafka exporter, one logs
    pipeline) as `--config base.yaml --config FILE` merges it, and validated by the collector
    `make install` builds; `${env:VAR}` references take this environment's values (a secret's, or
    an unset one, a placeholder word, named when the collector refuses it; an unset one with a
    default, `${env:VAR:-x}`, its default). The YAML is read as the collector reads it (04000 is
    octal, `yes` is no boolean). A brokers variable as a list element (one address to the
    collector) is refused. One line per refused file (exit 2)."""
    from tuner.driver.otelcol.build import collector_binary
    from tuner.driver.otelcol.check import check_fragment

    if collector_binary() is None:
        sys.stderr.write("kbt: error: no OpenTelemetry Collector build: run 'make install'\n")
        raise typer.Exit(int(ExitStatus.ENVIRONMENT))
    checked: list[dict[str, object]] = []
    for path in files:
        try:
            found = check_fragment(path)
            problem = None if found is None else f"{value(shown_path(path))}: otelcol validate: {found}"
        except BadInput as exc:  # not a regular file, too large, not YAML, a literal secret
            found = problem = exc.message
        if problem is not None:
            # the collector's complaint may quote the file: scrubbed of its secrets, on one line
            sys.stderr.write(f"kbt: error: {one_line(scrub(problem))}\n")
            found = one_line(scrub(str(found)))
        else:
            typer.echo(f"{value(shown_path(path))}: ok", err=is_stdout(json_path))
        checked.append({"file": path, "ok": problem is None, "errors": [found] if problem else []})
    write_json(json_path, "check otelcol", files=checked)
    if any(not c["ok"] for c in checked):
        raise typer.Exit(int(ExitStatus.BAD_INPUT))


_PROPERTIES_FILES = typer.Argument(..., help="Producer properties files (kbt recommend's, or your own).")


@app.command()
def librdkafka(
    files: list[Path] = _PROPERTIES_FILES,
    json_path: Path | None = option("--json", what="each file's errors and durability"),
) -> None:
    """Check librdkafka producer properties files with librdkafka itself.

    Each file builds a producer (three placeholder brokers; nothing connects), as an application
    builds one from it: a property librdkafka does not know, a bad value or a conflict (idempotence
    with acks 1) is one line (exit 2); else the durability it runs with (acks, idempotence, retries,
    requests in flight). A sasl.username without sasl.password gets a placeholder (the application
    adds it), a PEM location not on this machine a placeholder file (said in a note); a secret
    written in the file is a warning that never shows it."""
    from tuner.driver.file_check import check_librdkafka_file

    def check(_path: Path, text: str, where: str) -> dict[str, str]:
        said: list[str] = []
        try:
            return check_librdkafka_file(text, where, said)
        finally:  # a refusal may come from a placeholder: the note says so first
            for line in said:
                sys.stderr.write(f"kbt: note: {line}\n")

    _check_properties(files, "librdkafka", check, json_path)


@app.command()
def java(
    files: list[Path] = _PROPERTIES_FILES,
    json_path: Path | None = option("--json", what="each file's errors and durability"),
) -> None:
    """Check Java producer properties files with the Java client's own parser (ProducerConfig).

    Each file is loaded as Kafka's tools load --producer.config and parsed by the producer's config
    (names, types, validators, config providers such as ${env:VAR}, idempotence's defaults; a
    placeholder broker when the file names none; nothing connects): a refused file is one line
    (exit 2); else the durability it runs with. A secret written in the file, or one whose
    ${env:VAR} is not set here, is a warning; a file config provider's file that is not on this
    machine (the pod's secret mount) is read as placeholders, said in a note."""
    from tuner.driver.java_plan import check_properties_file, unset_references

    def check(path: Path, text: str, where: str) -> dict[str, str]:
        said: list[str] = []
        try:
            reported = check_properties_file(path, notes=said, text=text)
        finally:  # a refusal may come from a placeholder: the note says so first
            for line in said:
                sys.stderr.write(f"kbt: note: {where}: {line}\n")
        for key, why in unset_references(parse_properties(text, where), reported).items():
            sys.stderr.write(f"kbt: warning: {where}: {key}: {why}\n")
        return {
            k: reported[k]
            for k in ("acks", "enable.idempotence", "retries", "max.in.flight.requests.per.connection")
        }

    _check_properties(files, "java", check, json_path)


def _check_properties(
    files: list[Path], client: str, check: Callable[[Path, str, str], dict[str, str]], json_path: Path | None
) -> None:
    """Each file read (bounded, a regular file), then checked by `check(path, text, where)`."""
    from tuner.spec.clients import KINDS
    from tuner.spec.clients.producer import ProducerKind
    from tuner.target.security import literal_secret_keys

    checked: list[dict[str, object]] = []
    for path in files:
        where = value(shown_path(path))
        try:
            text = read_properties(path)
            kind = KINDS[client]
            if isinstance(kind, ProducerKind):  # the file's line of a property the client refuses
                kind.read_file(text, where)
            durability = check(path, text, where)
            literal = literal_secret_keys(parse_properties(text, where))
        except BadInput as exc:
            message = one_line(exc.message if exc.message.startswith(where) else f"{where}: {exc.message}")
            sys.stderr.write(f"kbt: error: {message}\n")
            checked.append({"file": path, "ok": False, "errors": [message], "durability": None})
            continue
        warnings = [
            f"{where}: {key} holds a secret as written: {' '.join(KINDS[client].secrets_hint)}"
            for key in literal
        ]
        for line in warnings:
            sys.stderr.write(f"kbt: warning: {line}\n")
        said = ", ".join(f"{k} {v}" for k, v in durability.items())
        typer.echo(f"{where}: ok ({said})", err=is_stdout(json_path))
        checked.append(
            {"file": path, "ok": True, "errors": [], "warnings": warnings, "durability": durability}
        )
    write_json(json_path, f"check {client}", files=checked)
    if any(not c["ok"] for c in checked):
        raise typer.Exit(int(ExitStatus.BAD_INPUT))
