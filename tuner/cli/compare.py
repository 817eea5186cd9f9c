"""`kbt compare`: a live cluster before -> after a change, per broker and per client group."""

from __future__ import annotations

from pathlib import Path

import typer

from tuner.cli.diagnose import _source, end_time, window_and_step, write_notes
from tuner.cli.json_out import console_for, write_json
from tuner.cli.options import option
from tuner.measure.request_log import check_request_logs
from tuner.render.plain import show


def compare(
    before: str = typer.Option(
        ...,
        "--before",
        metavar="TIME",
        help="End of the window before the change: now-1h, unix seconds or ISO 8601.",
    ),
    after: str = typer.Option(
        "now", "--after", metavar="TIME", help="End of the window after the change (or now)."
    ),
    window: str = option("--window", "compare"),
    step: str = option("--step"),
    prometheus: str | None = option("--prometheus", "source"),
    target_file: Path | None = option("--target", what="its Prometheus and dialect"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    request_log: list[Path] | None = option("--request-log", what="client groups compared"),
    json_path: Path | None = option("--json", what="the comparison"),
) -> None:
    """Compare a live cluster before and after a change (a rollout), per broker and client group.

    Reads two windows of --window ending at --before and --after from the brokers' Prometheus, as
    `kbt diagnose` does: per broker network idle, request queue, handler idle, produce requests/s,
    bytes per request and produce p99 (TotalTimeMs); with --request-log, each client group's produce
    requests/s, bytes per request and p99, before -> after."""
    from tuner.render.compare import compare_lines
    from tuner.runner.compare import compare_windows

    source = _source(prometheus, target_file, bootstrap, command_config)
    window_s, step_s = window_and_step(window, step)
    before_end, after_end = end_time(before, "--before"), end_time(after, "--after")
    logs = list(request_log or [])
    check_request_logs(logs)  # the one check of --request-log, as diagnose does it
    result, notes = compare_windows(prometheus, source, before_end, after_end, window_s, step_s, logs)
    write_notes(notes)
    show(console_for(json_path), "\n".join(compare_lines(result)))
    write_json(json_path, "compare", comparison=result)
