"""Before load reaches a target: the target file, its caps against the offered load, the
operator's confirmation off loopback, then a connection with its credentials (one line, exit 5,
when the cluster does not answer). Nothing is created before these pass; a dry run stops after
the caps."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tuner.runner.target_facts import cluster_facts
from tuner.spec.loader import LoadedSweep
from tuner.spec.stress_load import LoadedStress
from tuner.target.base import Target, TargetSource
from tuner.target.registry import resolve_target
from tuner.target.safety import Offered, check_caps, confirm_load, offered


def _capped(lab_dir: Path | None, source: TargetSource, loads: Iterable[tuple[str, Offered]]) -> Target:
    target = resolve_target(lab_dir, source)
    for name, load in loads:
        check_caps(target, name, load)
    return target


def _confirmed(target: Target, summary: str, yes: bool) -> None:
    confirm_load(target, summary, yes)
    cluster_facts(target)  # reachable, credentials accepted: a one-line error before anything is made


def sweep_preflight(
    lab_dir: Path | None, source: TargetSource | None, loaded: LoadedSweep, yes: bool, dry_run: bool
) -> Target | None:
    """The target a sweep runs against (None: the lab, which needs no preflight), checked."""
    if source is None:
        return None
    target = _capped(lab_dir, source, ((plan.name, offered(plan.workload)) for plan in loaded.runs))
    if not dry_run:
        _confirmed(target, f"{len(loaded.runs)} sweep runs", yes)
    return target


def stress_preflight(
    lab_dir: Path | None, source: TargetSource, loaded: LoadedStress, yes: bool, dry_run: bool
) -> None:
    """Caps against the highest stage's rate, then (not on a dry run) confirmation and reachability."""
    peak = loaded.baseline_msgs_per_s * max(max(s.multiplier, s.multiplier_end) for s in loaded.stages)
    size = loaded.spec.workload.message.nominal_bytes
    load = Offered(peak, peak * size if size else None)
    target = _capped(lab_dir, source, [("the stress test's highest step", load)])
    if not dry_run:
        _confirmed(target, f"a stress test peaking at {peak:.0f} msgs/s", yes)


def recommend_preflight(source: TargetSource, live: LoadedSweep, max_trials: int, yes: bool) -> None:
    """As a sweep's: caps against the --live spec's offered load, confirmation, reachability."""
    spec = live.spec
    target = _capped(None, source, [(spec.name, offered(spec.workload))])
    _confirmed(target, f"up to {max_trials} trial runs per client kind of {spec.name}", yes)
