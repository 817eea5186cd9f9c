"""`kbt sweep SPEC`: run every named run of a sweep spec against the lab and record each one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tuner.cli.cluster_flags import target_source
from tuner.cli.json_out import console_for, write_json
from tuner.cli.options import option
from tuner.core.errors import ExitStatus, Interrupted, KbtError

if TYPE_CHECKING:  # the runner and its clients are imported when a sweep runs, not for --help
    from rich.console import Console

    from tuner.runner.sweep import SweepOutcome
    from tuner.spec.loader import LoadedSweep
    from tuner.target.base import TargetSource


_ONLY = typer.Option(
    None,
    "--only",
    metavar="NAME[,NAME...]",
    help="Only these runs of the spec (their names, as --dry-run lists them).",
)


def sweep(
    spec: Path = typer.Argument(..., help="Sweep spec (YAML), e.g. loadtests/qunar-logs.yaml."),
    results: Path = option("--results"),
    resume: bool = option("--resume"),
    lab_dir: Path | None = option("--lab-dir"),
    dry_run: bool = option("--dry-run", what="list the runs"),
    target_file: Path | None = option("--target", what="run against that cluster, not the lab"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prom_flag: str | None = option("--prometheus"),
    yes: bool = option("--yes"),
    json_path: Path | None = option("--json", what="the runs (with --dry-run: the plan)"),
    only: str | None = _ONLY,
) -> None:
    """Run every named run of a sweep spec against the lab and record each one.

    Run a sweep: each named run gets fresh topics, the load, broker measurement, delivery
    verification and one JSON record. Ends with a table sorted by produce request rate; exits 1
    when any run lost records."""
    from tuner.render.plain import show
    from tuner.render.sweep_table import sweep_rows, sweep_table
    from tuner.runner.preflight import sweep_preflight
    from tuner.spec.loader import load_sweep, select_runs
    from tuner.spec.references import expand_references

    source = target_source(target_file, bootstrap, command_config, prom_flag, lab_dir=lab_dir)
    loaded = load_sweep(spec)
    if only is not None:
        loaded = select_runs(loaded, only)
    for plan in loaded.runs:  # an unset ${VAR} is bad input before anything starts
        expand_references(plan.profile.raw_properties, f"{spec}: profile {plan.profile.name}")
    console = console_for(json_path)
    # caps, confirmation and the target's own checks before anything is created
    target = sweep_preflight(lab_dir, source, loaded, yes, dry_run)
    if dry_run:
        from tuner.render.dry_run import sweep_dry_run

        prefix = target.topic_prefix if target is not None else "kbt-"
        rows, lines = sweep_dry_run(loaded, prefix, console.width)
        write_json(json_path, "sweep --dry-run", spec=loaded.spec.name, runs=rows)
        for line in lines:
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        return
    outcome = _run(console, loaded, lab_dir, results, source, target_file, resume)
    show(console, sweep_table(outcome.all_records, title=f"sweep {loaded.spec.name}"))
    write_json(
        json_path,
        "sweep",
        spec=loaded.spec.name,
        results=results,
        runs=sweep_rows(outcome.all_records),
        failed=[r.name for r in outcome.failed],
        unverified=[r.name for r in outcome.unverified],
        problems=list(outcome.problems),
    )
    _verdict(console, outcome)


def _run(
    console: Console,
    loaded: LoadedSweep,
    lab_dir: Path | None,
    results: Path,
    source: TargetSource | None,
    target_file: Path | None,
    resume: bool,
) -> SweepOutcome:
    """The runs with a progress bar and live figures; Ctrl-C keeps the runs already recorded."""
    from rich.progress import MofNCompleteColumn

    from tuner.cli.live import LiveFigures
    from tuner.cli.signals import interruptible
    from tuner.cli.sweep_progress import ProgressObserver, progress_bar
    from tuner.runner.wiring import sweep_runner

    # Ctrl-C and SIGTERM stop the sweep even when started with SIGINT ignored (a background job).
    progress = progress_bar(console, MofNCompleteColumn())
    observer = ProgressObserver(progress, console)
    try:
        with interruptible(), progress:
            runner = sweep_runner(lab_dir, results, observer=observer, target_file=source)
            found = runner.target
            observer.live = LiveFigures(console, found.prometheus_url, found.scrape_interval_s, target_file)
            try:
                return runner.run(loaded, resume=resume)
            except (KeyboardInterrupt, Interrupted):
                observer._finish_ticker()
                kept = len({p.name for p in loaded.runs} & runner.store.latest(loaded.spec.name).keys())
                raise Interrupted(
                    f"interrupted: {kept} of {len(loaded.runs)} runs recorded under {results};"
                    f" rerun with --resume to finish"
                ) from None
    finally:
        if observer.live is not None:
            observer.live.close()


def _verdict(console: Console, outcome: SweepOutcome) -> None:
    """Warnings, then exit 1 when a run failed or its delivery could not be verified."""
    for problem in outcome.problems:
        console.print(f"[yellow]warning: {problem}[/yellow]")
    if outcome.unclean:
        names = ", ".join(r.name for r in outcome.unclean)
        console.print(
            f"[yellow]warning: {len(outcome.unclean)} run(s) not a clean measurement, kept out of"
            f" calibration and recommendations: {names}[/yellow]"
        )
    if outcome.failed:
        names = ", ".join(r.name for r in outcome.failed)
        raise KbtError(f"{len(outcome.failed)} run(s) failed: {names}", ExitStatus.FAILURE)
    if outcome.unverified:
        unread = sum(r.delivery.unread for r in outcome.unverified)
        names = ", ".join(r.name for r in outcome.unverified)
        raise KbtError(
            f"{len(outcome.unverified)} run(s) unverified: the read-back was cut short with {unread:,} acked"
            f" records unread (none counted lost): {names}",
            ExitStatus.FAILURE,
        )
