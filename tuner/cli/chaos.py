"""`kbt chaos SPEC`: run a sweep spec's workload and profiles under the fault matrix on the lab."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tuner.cli.args import list_values
from tuner.cli.json_out import console_for, write_json
from tuner.cli.options import option
from tuner.core.errors import BadInput, ExitStatus, Interrupted, KbtError, did_you_mean

if TYPE_CHECKING:  # the fault machinery and its clients are imported when the matrix runs
    from rich.console import Console

    from tuner.runner.chaos.run_matrix import ChaosOutcome
    from tuner.runner.chaos.scenarios import Scenario


def pick_scenarios(names: list[str]) -> list[Scenario]:
    from tuner.runner.chaos.scenarios import BY_NAME, MATRIX

    if names == ["all"]:
        return list(MATRIX)
    for name in names:
        if name not in BY_NAME:
            raise BadInput(f"unknown fault {name!r}{did_you_mean(name, BY_NAME)} (see 'kbt chaos --list')")
    if not names:
        raise BadInput("--faults: name at least one fault (or all)")
    return [BY_NAME[name] for name in names]


_SPEC = typer.Argument(
    None, help="Sweep spec whose workload and profiles run under each fault, e.g. loadtests/chaos.yaml."
)
_FAULTS = typer.Option(
    ["all"],
    "--faults",
    help="Faults from --list, or all (repeat or comma list; negative controls included).",
)


def chaos(
    spec: Path | None = _SPEC,
    faults: list[str] = _FAULTS,
    profile: list[str] = option("--profile"),
    results: Path = option("--results"),
    resume: bool = option("--resume"),
    lab_dir: Path | None = option("--lab-dir"),
    markdown: Path | None = option("--markdown"),
    list_faults: bool = typer.Option(False, "--list", help="List the fault matrix and exit."),
    json_path: Path | None = option("--json", what="each fault run's verdict and delivery counts"),
) -> None:
    """Run the fault matrix beside a spec's load and verify every acked record.

    Run the fault matrix: each fault beside the spec's load (RF 3, min.insync.replicas 2, acks all,
    idempotence on; the negative controls weaken one of them), every acked record verified (lost,
    duplicates, per-partition order). Records go under <results>/<spec>-chaos/ marked with the fault
    and, when the cluster could not take every write, degraded: never tuning results. The load runs
    past the spec's duration until the fault script is done (for at most twice the duration more, or
    120 s if that is longer; a script still running then fails the run). Exits 1 when any run did
    not come out as its fault expects. Needs a 3-broker lab; network faults need 'kbt lab up
    --via-toxiproxy' ('kbt lab up --profile chaos' gives both); faults the lab cannot do are skipped
    with the reason."""
    if list_faults:
        from tuner.runner.chaos.scenarios import MATRIX

        for s in MATRIX:
            needs = f" [needs {', '.join(s.needs)}]" if s.needs else ""
            typer.echo(f"{s.name:30} {s.expect:13} {s.summary}{needs}")
        return
    if spec is None:
        raise BadInput("give a sweep spec (e.g. loadtests/chaos.yaml), or --list")
    from tuner.cli.chaos_progress import PrintObserver
    from tuner.cli.signals import interruptible
    from tuner.lab.config import default_lab_dir
    from tuner.runner.chaos.run_matrix import ChaosRunner, chaos_plans
    from tuner.runner.lifecycle import Engine
    from tuner.spec.loader import load_sweep
    from tuner.store.results import ResultsStore
    from tuner.target.registry import resolve_target

    loaded = load_sweep(spec)
    runs = chaos_plans(loaded, pick_scenarios(list_values(faults)), list_values(profile) or None)
    console = console_for(json_path)
    store = ResultsStore(results)
    observer = PrintObserver(console, len(runs))
    runner = ChaosRunner(resolve_target(lab_dir or default_lab_dir()), Engine(), store, observer)
    with interruptible():
        try:
            outcome = runner.run(runs, resume=resume)
        except (KeyboardInterrupt, Interrupted):
            sweep = runs[0].plan.sweep if runs else ""
            kept = len({r.plan.name for r in runs} & store.latest(sweep).keys()) if sweep else 0
            raise Interrupted(
                f"interrupted: {kept} of {len(runs)} chaos runs recorded under {results};"
                " rerun with --resume to finish"
            ) from None
    _report(console, outcome, loaded.spec.name, results, markdown, json_path)


def _report(
    console: Console,
    outcome: ChaosOutcome,
    name: str,
    results: Path,
    markdown: Path | None,
    json_path: Path | None,
) -> None:
    """The table (and its markdown), the JSON, then exit 1 when a run did not come out as expected."""
    from tuner.core.writes import atomic_write
    from tuner.render.chaos_table import chaos_markdown, chaos_rows, chaos_table
    from tuner.render.plain import show

    skipped = [(s.scenario.name, s.profile, "skipped", s.reason) for s in outcome.skipped]
    skipped += [(s.scenario.name, s.profile, "error", s.reason) for s in outcome.errors]
    show(console, chaos_table(outcome.all_records, skipped, title=f"kbt chaos {name}"))
    for problem in outcome.problems:
        console.print(f"[yellow]warning: {problem}[/yellow]")
    if markdown is not None:
        atomic_write(markdown, chaos_markdown(outcome.all_records, skipped), "markdown table")
    write_json(
        json_path,
        "chaos",
        spec=name,
        results=results,
        runs=chaos_rows(outcome.all_records),
        not_run=[{"scenario": a, "profile": b, "what": c, "reason": d} for a, b, c, d in skipped],
        problems=list(outcome.problems),
    )
    bad = [r.name for r in outcome.failed] + [f"{e.scenario.name}-{e.profile}" for e in outcome.errors]
    if bad:
        raise KbtError(f"{len(bad)} chaos run(s) did not come out as expected: {', '.join(bad)}",
                       ExitStatus.FAILURE)  # fmt: skip
