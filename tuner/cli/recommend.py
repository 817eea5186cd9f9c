"""`kbt recommend [--results DIR]`: batch settings per client kind that cut produce requests under an
SLO, with the model's prediction, the runs that confirm it, and rendered client files."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from tuner.cli.args import list_values, positional_results, results_dir
from tuner.cli.cluster_flags import target_source
from tuner.cli.json_out import console_for, document_text, json_file
from tuner.cli.options import option
from tuner.core.errors import BadInput, Interrupted
from tuner.core.paths import DEFAULT_RESULTS_DIR
from tuner.core.writes import atomic_write_all
from tuner.render.plain import show
from tuner.spec.clients import KINDS
from tuner.target.base import TargetSource

if TYPE_CHECKING:
    from tuner.store.recommendation import Recommendation

CLIENTS = tuple(KINDS)


def _codecs(values: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for value in values:
        client, sep, codecs = value.partition("=")
        if not sep or client not in KINDS:
            raise BadInput(
                f'--codecs "{value}": expected CLIENT=codec,... with CLIENT one of {", ".join(CLIENTS)}'
            )
        names = [c.strip() for c in codecs.split(",") if c.strip()]
        bad = [c for c in names if c not in KINDS[client].codecs]
        if bad or not names:
            raise BadInput(
                f'--codecs "{value}": {client} offers {", ".join(KINDS[client].codecs)}'
                f" (got {codecs or 'nothing'})"
            )
        out[client] = names
    return out


_LIVE = typer.Option(
    None,
    "--live",
    help="Sweep spec whose runs' workload (its vary: applied) to search on the lab: each trial is a"
    " run record.",
)
_SLO_MARGIN = typer.Option(
    None,
    "--slo-margin",
    help="Share of the p99 bound to keep free, in [0, 1): the search aims at p99 <= (1 - margin) x"
    " bound, and a setting measured inside it is marked at the edge (default 0.1, the measured"
    " run-to-run p99 spread).",
)
_MIN_NETWORK_IDLE = typer.Option(
    None,
    "--min-network-idle",
    help="Capacity bound beside p99: the busiest broker's network idle at the offered load after "
    "the change, at least (default: the spec's slo.min_network_idle, else 0.7; 0 turns it off).",
)
_CLIENT = typer.Option(
    list(CLIENTS), "--client", help="Client kinds to recommend for (repeat or comma list; default all)."
)
_PROBE = typer.Option(None, "--probe", help="Compression probe JSON (kbt probe compression).")
_MAX_TRIALS = typer.Option(6, "--max-trials", min=1, max=50, help="Lab runs per client kind (--live).")


def recommend(
    results_arg: Path | None = positional_results(),
    results_opt: Path | None = option("--results", "recommend"),
    live: Path | None = _LIVE,
    slo_p99: float | None = typer.Option(None, "--slo-p99", help="p99 delivery latency bound, ms."),
    slo_memory: float | None = typer.Option(None, "--slo-memory", help="Producer memory bound, MB."),
    slo_margin: float | None = _SLO_MARGIN,
    min_network_idle: float | None = _MIN_NETWORK_IDLE,
    client: list[str] = _CLIENT,
    codecs: list[str] = option("--codecs"),
    probe: Path | None = _PROBE,
    baseline: str | None = typer.Option(None, "--baseline", help="Profile name to compare against."),
    workload: str | None = typer.Option(None, "--workload", help="Workload name (default: newest run's)."),
    sweep: list[str] = option("--sweep"),
    out: Path = option("--out", "recommend"),
    max_trials: int = _MAX_TRIALS,
    lab_dir: Path | None = option("--lab-dir", "live"),
    target_file: Path | None = option("--target", what="run the --live trials on that cluster"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prom_flag: str | None = option("--prometheus"),
    yes: bool = option("--yes"),
    json_path: Path | None = option("--json", what="the recommendation and the files written"),
) -> None:
    """Recommend batch settings per client kind and write their config files.

    Recommend batch settings per client kind: the model searches for the fewest produce requests
    on the busiest broker within the SLO, run records (or --live lab runs) confirm it. Writes a
    recommendation JSON plus filebeat.yml / librdkafka.properties / java.properties (the Java one
    also as Logstash kafka output options); exits 3 when no setting meets the SLO."""
    results = results_dir(results_opt, results_arg, DEFAULT_RESULTS_DIR)
    clients = _clients(client)
    source = target_source(target_file, bootstrap, command_config, prom_flag, lab_dir=lab_dir)
    if source is not None:
        _check_target(source, live, max_trials, yes)
    console = console_for(json_path)
    options = dict(
        results=results,
        live=live,
        slo_p99=slo_p99,
        slo_memory=slo_memory,
        slo_margin=slo_margin,
        min_network_idle=min_network_idle,
        clients=clients,
        codecs=_codecs(codecs),
        probe=probe,
        baseline=baseline,
        workload=workload,
        sweeps=list_values(sweep),
        max_trials=max_trials,
        lab_dir=lab_dir,
        target_file=source,
    )
    _write(console, _answer(console, live, options), out, json_path)


def _answer(console: Console, live: Path | None, options: dict[str, Any]) -> Recommendation:
    """The model's answer from the records, or the live trials' (--live)."""
    if live is not None:
        return _live(console, options)
    from tuner.model.recommend import recommend as run_recommend
    from tuner.runner.simulation_cache import gather  # simulations kept between runs

    with console.status("searching with the model"):
        return run_recommend(gather(**options))


def _clients(values: list[str]) -> list[str]:
    clients = list_values(values)
    unknown = [c for c in clients if c not in CLIENTS]
    if unknown:
        raise BadInput(f'--client "{unknown[0]}": expected one of {", ".join(CLIENTS)}')
    if not clients:
        raise BadInput(f"--client names no client kind: expected one of {', '.join(CLIENTS)}")
    return clients


def _check_target(target_file: TargetSource, live: Path | None, max_trials: int, yes: bool) -> None:
    """As `kbt sweep --target` does before anything is created (tuner.runner.preflight)."""
    from tuner.runner.preflight import recommend_preflight
    from tuner.spec.loader import load_sweep

    if live is None:
        raise BadInput("--target or --bootstrap-server runs trials on a cluster: give it with --live SPEC")
    recommend_preflight(target_file, load_sweep(live), max_trials, yes)


def _write(console: Console, rec: Recommendation, out: Path, json_path: Path | None) -> None:
    """The table and summary, then the recommendation JSON and the rendered client files."""
    from tuner.render.recommendation import recommendation_view, render_files
    from tuner.store.recommendation import recommendation_text
    from tuner.store.results import run_stamp

    show(console, recommendation_view(rec))
    target = out / f"{rec.workload.name}--{run_stamp(time.time())}"
    path = target / "recommendation.json"
    files = render_files(rec)
    document = document_text(
        "recommend",
        recommendation_file=path,
        files=[target / name for name in files],
        recommendation=rec,
    )
    # the record, its rendered files and the --json document: all or none
    written = {path: recommendation_text(rec), **{target / name: text for name, text in files.items()}}
    atomic_write_all(written | json_file(json_path, document), "recommendation")
    console.print(f"wrote {', '.join(files)} beside", highlight=False)
    console.print(str(path), highlight=False, markup=False, soft_wrap=True)  # a path is never folded


def _live(console: Console, options: dict[str, Any]) -> Recommendation:
    """Search on the lab with the sweep's progress bar; Ctrl-C keeps the trials already recorded."""
    from tuner.cli.sweep_progress import ProgressObserver, progress_bar
    from tuner.model.recommend import recommend as run_recommend
    from tuner.runner.recommend_inputs import gather

    with progress_bar(console) as progress:
        observer = ProgressObserver(progress, console)
        request = gather(**options, observer=observer)
        try:
            return run_recommend(request)
        except KeyboardInterrupt:
            observer._finish_ticker()
            raise Interrupted(
                f"interrupted: the trials run so far are recorded under {options['results']}"
            ) from None
