"""`kbt report --results DIR`: one self-contained HTML page from run records, their time series and the
recommendation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tuner.cli.args import positional_results, results_dir
from tuner.cli.cluster_flags import target_source
from tuner.cli.diagnose import prometheus_url
from tuner.cli.json_out import document_text, json_file
from tuner.cli.options import option
from tuner.core.errors import BadInput, ExitStatus, KbtError
from tuner.core.redact import scrub
from tuner.core.text import decoded
from tuner.core.writes import atomic_write_all, is_stdout
from tuner.target.base import ClusterFlags, TargetSource

if TYPE_CHECKING:
    from tuner.measure.prometheus import Prometheus
    from tuner.render.report_data import ReportInput


_RECOMMENDATION = typer.Option(
    None,
    "--recommendation",
    help="Recommendation JSON (default: the newest one at the top of RESULTS, if any).",
)
_PNG_DIR = typer.Option(None, "--png-dir", help="Also write every plot as a PNG file into this directory.")


def report(
    results_arg: Path | None = positional_results(),
    results_opt: Path | None = option("--results", "report"),
    out: Path = option("--out", "report"),
    recommendation: Path | None = _RECOMMENDATION,
    png_dir: Path | None = _PNG_DIR,
    prometheus: str | None = option("--prometheus", "report"),
    lab_dir: Path | None = option("--lab-dir", "report"),
    target_file: Path | None = option("--target", "report"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    title: str = typer.Option("kbt report", "--title", help="Page title."),
    json_path: Path | None = option("--json", what="what the report holds and where it went"),
) -> None:
    """Write an HTML report of a results directory.

    Write an HTML report. It opens with the verdict and the before/after that matters (produce
    requests/s, network idle, request queue, broker CPU, p99, lost); then the recommendation and its
    evidence (when RESULTS holds one), and per sweep or stress run: offered vs achieved load (bars
    only when some run fell short of it), produce request rate and idle ratios over time per broker,
    latency percentiles per run/step, a Pareto plot of produce requests/s vs p99, and before/after
    comparisons of profiles. Plots are PNGs embedded in the page (matplotlib)."""
    from tuner.render.report import build_report
    from tuner.render.report_data import load_report_input

    prometheus_url(prometheus) if prometheus is not None else None  # a bad URL before any work
    results = results_dir(results_opt, results_arg)
    if results is None:
        raise BadInput("give --results DIR (the run records to report on)")
    source = target_source(target_file, bootstrap, command_config, prometheus, prometheus_alone=True)
    if isinstance(source, ClusterFlags):
        if prometheus is None or lab_dir is not None:
            raise BadInput("--bootstrap-server: give --prometheus URL with it (and no --lab-dir)")
        prometheus = None  # the target's Prometheus, its dialect detected
    elif sum(x is not None for x in (prometheus, lab_dir, target_file)) > 1:
        raise BadInput("give one of --prometheus, --lab-dir and --target")
    prom = _target_prometheus(source)  # a bad target file is one line before anything is read or written
    data = load_report_input(results, recommendation)
    prom = _url_prometheus(prometheus, lab_dir) or prom
    if prom is not None:
        _backfill(data, prom)
    # a title is text (an undecodable byte escaped as a traceback)
    built = build_report(data, title=decoded(title))
    outputs: dict[Path, str | bytes] = {out: scrub(built.html)}
    if png_dir is not None:
        outputs |= {png_dir / name: png for name, png in built.pngs.items()}
    document = _document(out, png_dir, built.pngs, data)
    atomic_write_all(outputs | json_file(json_path, document), "report")  # page, plots, --json: all or none
    _summary(json_path, out, built.pngs, data)


def _target_prometheus(source: TargetSource | None) -> Prometheus | None:
    if source is None:
        return None
    from tuner.measure.prometheus import PrometheusError
    from tuner.runner.live_diagnosis import window_prometheus

    try:
        return window_prometheus(None, source, None)
    except PrometheusError as exc:
        raise KbtError(exc.message, ExitStatus.UNREACHABLE) from None


def _url_prometheus(prometheus: str | None, lab_dir: Path | None) -> Prometheus | None:
    """The Prometheus at --prometheus URL, or the lab's (--lab-dir)."""
    url = prometheus_url(prometheus) if prometheus is not None else None
    if url is None and lab_dir is not None:
        from tuner.target.registry import resolve_target

        url = resolve_target(lab_dir).prometheus_url
    if url is None:
        return None
    from tuner.measure.prometheus import QUERY_TIMEOUT_S, Prometheus

    return Prometheus(url, timeout_s=QUERY_TIMEOUT_S, deadline_s=600)


def _document(out: Path, png_dir: Path | None, pngs: dict[str, bytes], data: ReportInput) -> str:
    return document_text(
        "report",
        out=out,
        plots=sorted(pngs),
        png_dir=png_dir,
        runs=[
            {"name": e.record.name, "run_id": e.record.run_id, "status": e.record.status} for e in data.runs
        ],
        recommendation=data.recommendation is not None,
        problems=list(data.problems),
    )


def _summary(json_path: Path | None, out: Path, pngs: dict[str, bytes], data: ReportInput) -> None:
    """The one line of what was written; exit 1 when a record was left out."""
    typer.echo(f"wrote {out} ({len(pngs)} plots, {len(data.runs)} runs)", err=is_stdout(json_path))
    left_out = [p for p in data.problems if p.startswith("left out ")]
    if left_out:  # the report says so too; a skipped record is never silent
        more = f" (and {len(left_out) - 1} more)" if len(left_out) > 1 else ""
        raise KbtError(f"the report {left_out[0]}{more}", ExitStatus.FAILURE)


def _backfill(data: ReportInput, prom: Prometheus) -> None:
    """Fetch and save time series for the records that have none (while Prometheus has the data)."""
    from dataclasses import replace

    from tuner.runner.series_store import save_series
    from tuner.store.run_series import load_run_series

    if any(entry.series is None for entry in data.runs):
        prom.instant("vector(1)")  # a dead or wrong URL is one line and a non-zero exit, not a note
    for i, entry in enumerate(data.runs):
        if entry.series is not None:
            continue
        scrape = entry.record.environment.prometheus_scrape_interval_s or 5.0
        problem = save_series(prom, entry.record, entry.path, scrape)
        if problem:
            data.problems.append(problem)
            continue
        data.runs[i] = replace(entry, series=load_run_series(entry.path))
