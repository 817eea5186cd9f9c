"""`kbt check filebeat FILE...`: validate Filebeat `output.kafka` + `queue.mem` profiles offline."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from tuner.cli.json_out import json_option, to_stdout, write_json
from tuner.core.errors import BadInput, ExitStatus
from tuner.spec.filebeat_load import filebeat_warnings, load_filebeat

app = typer.Typer(help="Check client configuration files without touching a broker.", no_args_is_help=True)


_TOPIC_MAX_MESSAGE_BYTES = typer.Option(
    None,
    "--topic-max-message-bytes",
    min=1,
    help="The target topic's max.message.bytes: warn when output.kafka.max_message_bytes exceeds it.",
)
_FILEBEAT_VERSION = typer.Option(
    None,
    "--filebeat-version",
    help="Real Filebeat build for `filebeat test config` (default: the newest; see kbt --version).",
)


@app.command()
def filebeat(
    files: list[Path] = typer.Argument(..., help="Filebeat YAML files (output.kafka and queue.mem)."),
    topic_max_message_bytes: int | None = _TOPIC_MAX_MESSAGE_BYTES,
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors (exit 2)."),
    filebeat_version: str | None = _FILEBEAT_VERSION,
    json_path: Path | None = json_option("each file's errors and warnings"),
) -> None:
    """Check Filebeat configuration files: unknown keys, bad values, settings without effect.

    Reject unknown options (with a did-you-mean hint) and bad values, one line per file (exit 2);
    warn about settings that have no effect, e.g. bulk_max_size above queue.mem.flush.min_events.
    When a real Filebeat build is installed, it also runs `filebeat test config` on each file."""
    from tuner.driver.filebeat_builds import filebeat_builds

    builds = filebeat_builds()
    if filebeat_version is not None and filebeat_version not in builds:
        sys.stderr.write(
            f"kbt: error: --filebeat-version {filebeat_version}: not built"
            f" (available: {', '.join(builds) or 'none; run make install'})\n"
        )
        raise typer.Exit(int(ExitStatus.BAD_INPUT))
    failed = 0
    checked: list[dict[str, object]] = []
    for path in files:
        try:
            loaded = load_filebeat(path)
        except BadInput as exc:
            sys.stderr.write(f"kbt: error: {exc.message}\n")
            checked.append({"file": path, "ok": False, "errors": [exc.message], "warnings": []})
            failed += 1
            continue
        if builds:
            from tuner.driver.filebeat_testconfig import test_config

            version, problem = test_config(path, filebeat_version)
            if problem is not None:
                message = f"{path}: filebeat {version} test config: {problem}"
                sys.stderr.write(f"kbt: error: {message}\n")
                checked.append({"file": path, "ok": False, "errors": [message], "warnings": []})
                failed += 1
                continue
        warnings = filebeat_warnings(loaded, topic_max_message_bytes)
        for line in warnings:
            sys.stderr.write(f"kbt: warning: {line}\n")
        ok = not (strict and warnings)
        checked.append({"file": path, "ok": ok, "errors": [], "warnings": list(warnings)})
        if not ok:
            failed += 1
        elif not warnings:
            typer.echo(f"{path}: ok", err=to_stdout(json_path))
    write_json(json_path, "check filebeat", strict=strict, files=checked)
    if failed:
        raise typer.Exit(int(ExitStatus.BAD_INPUT))
