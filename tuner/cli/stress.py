"""`kbt stress SPEC`: the pre-holiday stress test on locust, profile after profile."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tuner.cli.args import list_values
from tuner.cli.cluster_flags import target_source
from tuner.cli.json_out import console_for, write_json
from tuner.cli.options import option
from tuner.core.errors import BadInput, ExitStatus, Interrupted, KbtError, did_you_mean

if TYPE_CHECKING:  # locust, the clients and the runner are imported when a stress test runs
    from rich.console import Console

    from tuner.cli.stress_progress import ConsoleObserver
    from tuner.runner.stress.locust_processes import LocustOptions
    from tuner.runner.stress.run_stages import StressOutcome
    from tuner.spec.stress_load import LoadedStress
    from tuner.target.base import TargetSource

_BASELINE_FROM = typer.Option(
    None, "--baseline-from", help="Baseline load from 'kbt diagnose --json' output (overrides the spec)."
)
_WORKERS = typer.Option(
    0, "--workers", min=0, max=32, help="Local locust workers under a master (0: one locust process)."
)
_REMOTE_WORKERS = typer.Option(
    0,
    "--remote-workers",
    min=0,
    max=256,
    help="Workers from other machines the master waits for. Each load machine (kbt installed, the"
    " target's bootstrap servers reachable) runs 'kbt stress-worker --master HOST:PORT' with this"
    " run's --master-host and --master-port; it gets the plan from the master (docs/targets.md).",
)
_JOIN_TIMEOUT = typer.Option(
    60.0,
    "--join-timeout",
    min=0.0,
    max=3600.0,
    help="Seconds remote workers have to join before the first stage. The run stops if they have not.",
)
_MASTER_HOST = typer.Option(
    "127.0.0.1", "--master-host", help="Address the locust master binds (0.0.0.0 for other machines)."
)
# A port the master and its web UI bind: refused here, in --dry-run too, not by locust once the lab
# has ramped (0 would silently mean the default)
_MASTER_PORT = typer.Option(
    None, "--master-port", min=1, max=65535, help="Locust master port (default lab base+180)."
)
_WEB_PORT = typer.Option(None, "--web-port", min=1, max=65535, help="Web UI port (default lab base+185).")
_WEB_UI = typer.Option(
    False, "--web-ui", help="Serve locust's web UI while the test runs (headless otherwise)."
)


def stress(
    spec: Path = typer.Argument(..., help="Stress spec (YAML), e.g. loadtests/holiday-peak.yaml."),
    profiles: list[str] = option("--profile", "stress"),
    baseline_from: Path | None = _BASELINE_FROM,
    results: Path = option("--results"),
    lab_dir: Path | None = option("--lab-dir"),
    workers: int = _WORKERS,
    remote_workers: int = _REMOTE_WORKERS,
    join_timeout: float = _JOIN_TIMEOUT,
    master_host: str = _MASTER_HOST,
    master_port: int | None = _MASTER_PORT,
    web_ui: bool = _WEB_UI,
    web_port: int | None = _WEB_PORT,
    dry_run: bool = option("--dry-run", what="print the stages"),
    target_file: Path | None = option("--target", what="stress that cluster, not the lab"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prom_flag: str | None = option("--prometheus"),
    yes: bool = option("--yes"),
    json_path: Path | None = option(
        "--json", what="each profile's stages and verdicts (with --dry-run: the stages)"
    ),
) -> None:
    """Ramp the lab through a stress spec's stages per profile, gates judged per step.

    Ramp the lab through the spec's stages with each profile (current, recommended, ...): librdkafka
    producers on locust with real-time and lagging consumer groups beside them; any other kind (real
    Filebeat, the Java producer, the collector) stage by stage through its own engine, as a sweep
    runs it, real-time groups beside it. Gates judged per step, one record per stage. Ends with the
    highest step each profile held. Exits 1 when acked records were lost."""
    from tuner.runner.preflight import stress_preflight
    from tuner.runner.stress.locust_processes import LocustOptions, check_locust_flags
    from tuner.spec.stress_load import load_stress

    check_locust_flags(master_host, workers + remote_workers, master_port, web_ui, web_port)
    source = target_source(target_file, bootstrap, command_config, prom_flag, lab_dir=lab_dir)
    loaded = load_stress(spec, baseline_from=baseline_from)
    labels = _labels(list_values(profiles) if profiles else None, loaded.profile_labels())
    console = console_for(json_path)
    heading = _heading(loaded, labels)
    # the clients' own checks, caps, confirmation and reachability before anything is created
    stress_preflight(lab_dir, source, loaded, yes and not dry_run, dry_run)
    if dry_run:
        for line in heading:
            console.print(line)
        _dry_run(console, json_path, loaded, labels)
        return
    from tuner.cli.stress_progress import ConsoleObserver

    locust = LocustOptions(workers, remote_workers, master_host, master_port, web_ui, web_port, join_timeout)
    observer = ConsoleObserver(console, heading)  # said once the runner's start checks pass
    outcome = _run(observer, loaded, labels, lab_dir, results, locust, source, target_file, json_path)
    _report(console, outcome, loaded.baseline_msgs_per_s, loaded.spec.name)
    _write_json(json_path, outcome, loaded.baseline_msgs_per_s, loaded.spec.name, results)
    lost = sum(p.delivery.lost for p in outcome.profiles if p.delivery is not None)
    unverified = [p.label for p in outcome.profiles if p.delivery is not None and not p.delivery.verified]
    if lost:
        raise KbtError(f"{lost} acked records lost", ExitStatus.FAILURE)
    if unverified:
        raise KbtError(f"delivery not verified for {', '.join(unverified)}", ExitStatus.FAILURE)


def _heading(loaded: LoadedStress, labels: list[str]) -> list[str]:
    """The baseline, the producers and the profiles, then the spec's notes."""
    return [
        f"baseline {loaded.baseline_msgs_per_s:g} msgs/s (from {loaded.baseline_source}),"
        f" {loaded.spec.workload.producers} producers; profiles {', '.join(labels)}",
        *(f"[yellow]note: {note}[/yellow]" for note in loaded.spec.notes()),
    ]


def _dry_run(console: Console, json_path: Path | None, loaded: LoadedStress, labels: list[str]) -> None:
    from tuner.render.dry_run import stress_driver_lines, stress_drivers, stress_dry_run

    stages, lines = stress_dry_run(loaded)
    write_json(
        json_path,
        "stress --dry-run",
        spec=loaded.spec.name,
        baseline_msgs_per_s=loaded.baseline_msgs_per_s,
        profiles=labels,
        driven_by=stress_drivers(loaded, labels),
        stages=stages,
    )
    for line in [*stress_driver_lines(loaded, labels), *lines]:
        console.print(line)


def _run(
    observer: ConsoleObserver,
    loaded: LoadedStress,
    labels: list[str],
    lab_dir: Path | None,
    results: Path,
    locust: LocustOptions,
    source: TargetSource | None,
    target_file: Path | None,
    json_path: Path | None,
) -> StressOutcome:
    """The profiles on locust with live figures; Ctrl-C keeps the stage records already written."""
    from tuner.cli.live import LiveFigures
    from tuner.cli.signals import interruptible
    from tuner.cli.stress_progress import closing
    from tuner.runner.stress.run_stages import StressInterrupted
    from tuner.runner.stress.target_wiring import stress_runner

    console = observer.console
    with interruptible(), closing(observer):
        runner = stress_runner(lab_dir, results, locust, observer, source)
        observer.live = LiveFigures(
            console, runner.target.prometheus_url, runner.target.scrape_interval_s, target_file
        )
        try:
            return runner.run(loaded, labels)
        except StressInterrupted as exc:
            _report(console, exc.outcome, loaded.baseline_msgs_per_s, loaded.spec.name)
            _write_json(json_path, exc.outcome, loaded.baseline_msgs_per_s, loaded.spec.name, results)
            kept = sum(len(p.records) for p in exc.outcome.profiles)
            raise Interrupted(f"interrupted: {kept} stage records written under {results}") from None


def _write_json(path: Path | None, outcome: StressOutcome, baseline: float, name: str, results: Path) -> None:
    if path is None:
        return
    profiles = []
    for p in outcome.profiles:
        best = p.highest_held
        stages = []
        for r in p.records:
            st = r.stress
            stages.append(
                {
                    "stage": st.stage.name if st else r.name,
                    "verdict": st.verdict if st else None,
                    "offered_msgs_per_s": st.offered_msgs_per_s if st else None,
                    "acked_msgs_per_s": r.client.records_per_s,
                    "client_requests_per_s": r.client.requests_per_s,
                    "p99_ms": r.client.delivery_latency_ms.p99,
                    "network_idle": r.broker.network_idle_ratio if r.broker else None,
                    "lost": r.delivery.lost,
                    "run_id": r.run_id,
                }
            )
        profiles.append(
            {
                "label": p.label,
                "highest_held": best.name if best else None,
                "highest_held_multiplier": best.multiplier if best else None,
                "aborted_at": p.aborted_at.name if p.aborted_at else None,
                "spike_held": p.spike_held,
                "interrupted": p.interrupted,
                "lost": p.delivery.lost if p.delivery else None,
                "delivery_verified": p.delivery.verified if p.delivery else None,
                "problems": p.problems,
                "stages": stages,
            }
        )
    write_json(
        path,
        "stress",
        spec=name,
        results=results,
        baseline_msgs_per_s=baseline,
        profiles=profiles,
        problems=outcome.problems,
    )


def _labels(labels: list[str] | None, known: list[str]) -> list[str]:
    """The --profiles labels (repeat and comma lists already flattened), or every one."""
    if labels is None:
        return known
    if not labels:
        raise BadInput("--profiles: name at least one profile")
    for label in labels:
        if label not in known:
            raise BadInput(f'--profiles: no profile "{label}" in the spec{did_you_mean(label, known)}'
                           f" (it has {', '.join(known)})")  # fmt: skip
    return labels


def _report(console: Console, outcome: StressOutcome, baseline: float, name: str) -> None:
    from tuner.render.plain import show
    from tuner.render.stress_table import highest_held_line, stress_table

    records = [r for p in outcome.profiles for r in p.records]
    if records:
        show(console, stress_table(records, title=f"stress {name}"))
    for profile in outcome.profiles:
        best = profile.highest_held
        line = highest_held_line(
            profile.label, best.name if best else None, best.multiplier if best else None, baseline
        )
        if profile.aborted_at is not None:
            line += f"; ramp aborted at {profile.aborted_at.name}"
        if profile.spike_held is not None:
            line += f"; spike {'held' if profile.spike_held else 'failed'}"
        if profile.interrupted:
            line += " (interrupted)"
        console.print(f"[bold]{line}[/bold]")
        for problem in profile.problems:
            console.print(f"[yellow]warning: {profile.label}: {problem}[/yellow]")
    for problem in outcome.problems:
        console.print(f"[yellow]warning: {problem}[/yellow]")
