"""`kbt diagnose --prometheus URL`: why are a live cluster's broker threads busy, and how bad is it."""

from __future__ import annotations

import math
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import typer

from tuner.cli.cluster_flags import target_source
from tuner.cli.json_out import console_for, document_text
from tuner.cli.options import option
from tuner.core.errors import BadInput
from tuner.core.numbers import NUMBER, check_duration, cut_value, parse_number
from tuner.core.redact import scrub
from tuner.core.text import one_line
from tuner.core.writes import atomic_write, is_stdout
from tuner.measure.request_log import check_request_logs
from tuner.render.plain import show
from tuner.spec.duration import Duration
from tuner.target.base import ClusterFlags, TargetSource

if TYPE_CHECKING:
    from tuner.model.diagnosis import Diagnosis


def seconds(value: str, what: str) -> float:
    """A duration flag (5m, 300s, 1h30m or plain seconds) in seconds; BadInput if it is not one."""
    try:
        if NUMBER.fullmatch(value.strip()):
            result = parse_number(value, what)
        else:
            result = Duration.parse(value).seconds
        check_duration(result, what)
    except ValueError as exc:  # a duration past the year bound is one, said so (not "like 5m")
        why = (
            "is longer than a year"
            if "longer than a year" in str(exc)
            else "must be a duration like 5m, 300s or 1h"
        )
        raise BadInput(f"{what} {cut_value(value)}: {why}") from None
    if result <= 0:
        raise BadInput(f"{what} {value!r}: must be positive")
    return result


def window_and_step(window: str, step: str) -> tuple[float, float]:
    """--window and --step in seconds, the step no longer than the window."""
    window_s, step_s = seconds(window, "--window"), seconds(step, "--step")
    if step_s > window_s:
        raise BadInput(f"--step {step} is longer than --window {window}")
    from tuner.measure.prometheus import too_many_points

    refused = too_many_points(f"--window {window}", f"--step {step}", window_s, step_s)
    if refused is not None:
        raise BadInput(refused + " (or a shorter --window)")
    return window_s, step_s


def prometheus_url(value: str) -> str:
    """A --prometheus URL with a host and, if any, a valid port; BadInput otherwise."""
    hint = f"--prometheus {value!r}: give a URL such as http://127.0.0.1:9090"
    if not value.startswith(("http://", "https://")):
        raise BadInput(hint)
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:  # a port that is not a number or out of range, a broken [IPv6] host
        # Never urllib's own words: they quote the part it choked on, which may be a password
        # (in http://user:pa/ss@host the "port" is the password).
        text = str(exc)
        why = (
            "the port is not a number" if "cast to integer" in text
            else "the port is out of range 0-65535" if "out of range" in text
            else "not a URL"
        )  # fmt: skip
        raise BadInput(f"{hint} ({why})") from None
    if not parts.hostname:
        raise BadInput(f"{hint} (no host)")
    if port == 0:
        raise BadInput(f"{hint} (port 0)")
    return value


YEAR_3000_S = 32503680000.0  # a time past this is a typo, not a window


def end_time(value: str, flag: str = "--end") -> float:
    """A window's end: now, now-<duration> (as Grafana writes it), unix seconds or an ISO 8601 time
    (UTC when it names no zone)."""
    text, shown = value.strip(), f"{flag} {cut_value(value)}"
    if text == "now":
        return time.time()
    if text.startswith("now-"):
        try:
            return time.time() - seconds(text.removeprefix("now-"), flag)
        except BadInput:
            raise BadInput(f"{shown}: now-<duration> takes a duration like 5m, 300s or 1h") from None
    try:
        when_s = parse_number(value, flag)
    except ValueError as exc:
        if "finite" in str(exc) or "too large" in str(exc):
            when_s = math.inf  # a number, out of range
        else:
            try:
                when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise BadInput(
                    f"{shown}: give now, now-1h, unix seconds or an ISO 8601 time"
                    " such as 2026-01-01T20:00:00Z"
                ) from None
            when_s = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    if not 0 <= when_s <= YEAR_3000_S:  # an ISO time as much as unix seconds
        raise BadInput(f"{shown}: must lie between 1970 and the year 3000")
    return when_s


def diagnose(
    prometheus: str | None = option("--prometheus", "source"),
    target_file: Path | None = option(
        "--target", what="its Prometheus, auth, broker selectors and metric dialect"
    ),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    window: str = option("--window"),
    step: str = option("--step"),
    json_path: Path | None = option("--json", "bare", what="the diagnosis"),
    thresholds: Path | None = typer.Option(
        None, "--thresholds", help="YAML overriding classification thresholds (see docs/diagnose.md)."
    ),
    cost_model: Path | None = option("--cost-model"),
    top_topics: int = typer.Option(
        5, "--top-topics", min=0, max=100, help="Topics to list by produce request rate."
    ),
    end: str | None = typer.Option(
        None,
        "--end",
        help="Window end: now, now-1h, unix seconds or ISO 8601 (e.g. 2026-01-01T20:00:00Z); default now.",
    ),
    request_log: list[Path] | None = option(
        "--request-log",
        what="each client's produce requests counted, not estimated (docs/diagnose.md: which clients)",
    ),
) -> None:
    """Diagnose a live cluster's produce-request pressure from its Prometheus.

    Diagnose a live cluster from any Prometheus scraping its brokers with kbt's jmx rules: per broker
    produce requests/s, bytes per request, network and handler idle, request queue, Produce P999,
    log flush, fetches; each broker classified (small requests, handler threads, disk flush, large
    fetches, network bytes, healthy) with its evidence. Exit 0 healthy, 10 warning, 11 critical
    (an idle ratio below 0.3); 5 when Prometheus cannot be reached or does not answer like
    Prometheus, 4 when it holds no kbt broker metrics."""
    from tuner.runner.diagnose_inputs import load_cost_model, load_thresholds
    from tuner.runner.live_diagnosis import diagnose_live

    source = _source(prometheus, target_file, bootstrap, command_config)
    window_s, step_s = window_and_step(window, step)
    end_s = end_time(end) if end is not None else None
    limits = load_thresholds(thresholds)
    model = load_cost_model(cost_model) if cost_model is not None else None
    logs = list(request_log or [])
    check_request_logs(logs)  # regular files, not compressed or binary, each once
    live = diagnose_live(prometheus, source, window_s, step_s, limits, model, end_s, top_topics, logs)
    write_notes(live.notes)
    _show(live.diagnosis, json_path)
    raise typer.Exit(int(live.diagnosis.exit_status))


def _source(
    prometheus: str | None, target_file: Path | None, bootstrap: str | None, command_config: Path | None
) -> TargetSource | None:
    """The target named by --target or the Kafka-tool flags (with --prometheus), or None for a bare
    --prometheus URL; BadInput for a combination diagnose cannot read."""
    source = target_source(target_file, bootstrap, command_config, prometheus, prometheus_alone=True)
    if isinstance(source, ClusterFlags):
        if prometheus is None:
            raise BadInput(
                "--bootstrap-server: diagnose reads the brokers' Prometheus: give --prometheus URL too"
            )
    elif (prometheus is None) == (target_file is None):
        raise BadInput("give --prometheus URL or --target FILE (one of them)")
    if prometheus is not None:
        prometheus_url(prometheus)
    return source


def _show(result: Diagnosis, json_path: Path | None) -> None:
    """The diagnosis as a table, and as JSON to a file or ('-') to stdout instead of the table."""
    from tuner.render.diagnosis import diagnosis_view

    text = document_text("diagnose", **result.model_dump(mode="json"))
    if not is_stdout(json_path):
        show(console_for(None), diagnosis_view(result))
    if json_path is not None:  # '-': atomic_write prints it
        atomic_write(json_path, text, "diagnosis")


def write_notes(notes: list[str]) -> None:
    """One stderr line per note of a live diagnosis (a series the target's dialect lacks)."""
    for note in notes:  # a note can quote a label or an answer: one line, scrubbed
        sys.stderr.write(f"kbt: note: {one_line(scrub(note), 1000)}\n")
