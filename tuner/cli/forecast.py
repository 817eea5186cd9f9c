"""`kbt forecast --results DIR --peak 3x`: idle ratios, produce requests, brokers needed at a peak."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tuner.cli.args import positional_results, results_dir
from tuner.cli.cluster_flags import target_source
from tuner.cli.diagnose import seconds, write_notes
from tuner.cli.json_out import console_for, document_text, json_file
from tuner.cli.options import option
from tuner.core.errors import BadInput, Unreachable
from tuner.core.numbers import cut_value, parse_number
from tuner.core.writes import atomic_write_all, is_stdout
from tuner.render.plain import show
from tuner.runner.diagnose_inputs import load_cost_model, load_records
from tuner.target.base import TargetSource

if TYPE_CHECKING:
    from tuner.model.cost import BrokerCostModel
    from tuner.model.diagnosis import Diagnosis
    from tuner.model.forecast_baseline import TopicPlacement
    from tuner.model.forecast_today import Baseline
    from tuner.store.record import RunRecord

_PEAK = re.compile(r"^\s*([0-9]{0,6}\.?[0-9]{1,6})\s*x?\s*$", re.IGNORECASE | re.ASCII)


def parse_peak(value: str) -> float:
    match = _PEAK.match(value)
    peak = parse_number(match.group(1), "--peak") if match else 0.0
    if peak <= 0:
        raise BadInput(
            f"--peak {cut_value(value)}: give a positive multiple of today's traffic such as 3x or 1.5"
            " (at most 6 digits each side of the point)"  # 1.0000000001 is positive, and refused
        )
    return peak


_CURRENT = typer.Option(None, "--current", help="Run with today's settings (default: most requests).")
_RECOMMENDED = typer.Option(
    None,
    "--recommended",
    help="Run with the recommended settings (default: fewest requests meeting the SLO).",
)
_DIAGNOSIS = typer.Option(
    None, "--diagnosis", help="Baseline from `kbt diagnose --json` of a live cluster instead of runs."
)
_RF = typer.Option(
    None,
    "--replication-factor",
    min=1,
    max=64,
    help="Largest replication factor of the topics: the fewest brokers needed (default: metadata, or 3).",
)
_MIN_IDLE = typer.Option(0.3, "--min-idle", min=0.01, max=0.99, help="Idle ratio to keep at the peak.")


def forecast(
    results_arg: Path | None = positional_results(),
    results_opt: Path | None = option("--results", "forecast"),
    peak: str = typer.Option("3x", "--peak", help="Peak traffic as a multiple of today's, e.g. 3x."),
    sweep: str | None = option("--sweep", "forecast"),
    current: str | None = _CURRENT,
    recommended: str | None = _RECOMMENDED,
    diagnosis: Path | None = _DIAGNOSIS,
    target_file: Path | None = option("--target", "forecast"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prom_flag: str | None = option("--prometheus", "forecast"),
    window: str = option("--window", "forecast"),
    cost_model: Path | None = option("--cost-model", "forecast"),
    replication_factor: int | None = _RF,
    min_idle: float = _MIN_IDLE,
    save_model: Path | None = typer.Option(None, "--save-model", help="Write the fitted cost model as JSON."),
    json_path: Path | None = option("--json", "bare", what="the forecast"),
) -> None:
    """Forecast a traffic peak's broker load and brokers needed, current vs recommended.

    Forecast a traffic peak from the fitted broker cost model: per settings (current vs recommended)
    the produce requests, the busiest broker's network and handler idle on today's brokers, and the
    brokers needed to keep both idle ratios >= --min-idle. The baseline is a sweep's runs in RESULTS,
    a live cluster's `kbt diagnose --json`, or a target file's cluster diagnosed now (--target).

    The model's figures for today's traffic are checked against what the brokers measured first:
    calibrated to them past a tolerance (the factor is said), or refused (exit 6) when the fit is too
    poor or nothing was measured."""
    from tuner.model.forecast import forecast as run_forecast
    from tuner.model.forecast_baseline import records_baselines
    from tuner.render.diagnosis_forecast import forecast_view

    k = parse_peak(peak)
    results = results_dir(results_opt, results_arg)
    source = target_source(target_file, bootstrap, command_config, prom_flag)
    live = _check_baseline(results, diagnosis, source, cost_model, replication_factor)
    window_s = seconds(window, "--window")
    records = load_records(results) if results is not None else []
    model = _model(cost_model, records)
    if live:
        baselines = _live_baselines(diagnosis, source, window_s, replication_factor)
    else:
        baselines = records_baselines(records, sweep, current, recommended)
    result = run_forecast(model, baselines, k, min_idle, require_measured=True)
    text = document_text("forecast", **result.model_dump(mode="json"))
    if _write_outputs(model, text, save_model, json_path):
        return
    console = console_for(None)
    show(console, forecast_view(result))


def _check_baseline(
    results: Path | None,
    diagnosis: Path | None,
    source: TargetSource | None,
    cost_model: Path | None,
    replication_factor: int | None,
) -> bool:
    """One baseline named, and the flags that go with it; True for a live cluster's."""
    if diagnosis is not None and source is not None:
        raise BadInput(
            "give --diagnosis FILE or --target FILE (or --bootstrap-server) as the baseline, not both"
        )
    live = diagnosis is not None or source is not None
    if results is None and (not live or cost_model is None):
        raise BadInput("give --results DIR, or --diagnosis FILE (or --target FILE) with --cost-model")
    if replication_factor is not None and not live:
        raise BadInput(
            "--replication-factor goes with --diagnosis or --target: a run's workload names its topics"
        )
    return live


def _live_baselines(
    diagnosis: Path | None, source: TargetSource | None, window_s: float, replication_factor: int | None
) -> list[Baseline]:
    """Current and recommended from a diagnosis file, or from the target diagnosed now (with its
    topics' placement read from the cluster's metadata unless --replication-factor says it)."""
    from tuner.model.forecast_baseline import diagnosis_baselines

    if diagnosis is not None:
        return diagnosis_baselines(_read_diagnosis(diagnosis), replication_factor)
    assert source is not None  # one of the two, checked by the caller
    live = _live_diagnosis(source, window_s)
    placement = _placement(source, live) if replication_factor is None else None
    return diagnosis_baselines(live, replication_factor, placement)


def _live_diagnosis(source: TargetSource, window_s: float) -> Diagnosis:
    from tuner.runner.live_diagnosis import target_diagnosis

    live = target_diagnosis(source, window_s)
    write_notes(live.notes)
    return live.diagnosis


def _placement(source: TargetSource, diagnosis: Diagnosis) -> TopicPlacement | None:
    """The diagnosed topics' replication factor and leaders from the cluster's metadata; a cluster
    whose metadata cannot be read leaves them assumed, with a note."""
    from tuner.runner.target_facts import topic_placement

    try:
        return topic_placement(source, [t.topic for t in diagnosis.snapshot.topics])
    except Unreachable as exc:
        write_notes([f"{exc.message}: the replication factor is assumed (give --replication-factor)"])
        return None


def _write_outputs(
    model: BrokerCostModel, text: str, save_model: Path | None, json_path: Path | None
) -> bool:
    """--save-model and --json written together once every input was read, all or none; True when
    the forecast went to stdout as JSON ('-')."""
    outputs: dict[Path, str | bytes] = {}
    if save_model is not None:
        outputs[save_model] = json.dumps(model.model_dump(mode="json"), indent=2) + "\n"
    atomic_write_all(outputs | json_file(json_path, text), "forecast")
    return is_stdout(json_path)


def _model(cost_model: Path | None, records: list[RunRecord]) -> BrokerCostModel:
    """The --cost-model given, else fitted from the run records."""
    if cost_model is not None:
        return load_cost_model(cost_model)
    from tuner.model.cost import fit_cost_model

    return fit_cost_model(records)


def _read_diagnosis(path: Path) -> Diagnosis:
    """A `kbt diagnose --json` file; BadInput when it is not one."""
    from tuner.render.diagnosis import read_diagnosis

    return read_diagnosis(path, f"--diagnosis {path}")
