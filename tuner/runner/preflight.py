"""Before load reaches a target: the target file, its caps against the offered load, the
operator's confirmation off loopback, then a connection with its credentials (one line, exit 5,
when the cluster does not answer). Nothing is created before these pass; a dry run stops after
the caps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.redact import scrub
from tuner.core.text import one_line
from tuner.driver.engines import client_refusal
from tuner.runner.target_facts import cluster_facts
from tuner.spec.clients import ClientProfile, kind_of
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


def clients_checked(profiles: Iterable[ClientProfile], own_files: Mapping[str, Path]) -> None:
    """Each profile's client asked, where it is installed, of the team's file the profile stands
    for (`own_files`, by profile name), else of the file a run would start it from (real Filebeat's
    `test config`, the collector's `validate`, the Java producer's config; each file once): its
    refusal is one line (exit 2) before anything is created or a dry run lists the runs, not a run
    that fails to start or runs without a setting the team wrote."""
    seen: set[tuple[str, str]] = set()
    for profile in profiles:
        kind, own = kind_of(profile), own_files.get(profile.name)
        file = (kind.name, str(own) if own is not None else kind.artifact(profile).text)
        if file in seen:
            continue
        seen.add(file)
        problem = client_refusal(profile, own)
        if problem is not None:  # a client's words may quote its file: never a secret, one line
            raise BadInput(one_line(scrub(problem)))


def sweep_preflight(
    lab_dir: Path | None, source: TargetSource | None, loaded: LoadedSweep, yes: bool, dry_run: bool
) -> Target | None:
    """The target a sweep runs against (None: the lab, which needs no target preflight), checked;
    every run's client file first."""
    clients_checked((plan.profile for plan in loaded.runs), loaded.own_files)
    if source is None:
        return None
    target = _capped(lab_dir, source, ((plan.name, offered(plan.workload)) for plan in loaded.runs))
    if not dry_run:
        _confirmed(target, f"{len(loaded.runs)} sweep runs", yes)
    return target


def stress_preflight(
    lab_dir: Path | None, source: TargetSource | None, loaded: LoadedStress, yes: bool, dry_run: bool
) -> None:
    """Every profile's client file; then, on a target, caps against the highest stage's rate and
    (not on a dry run) confirmation and reachability."""
    clients_checked(loaded.spec.profiles.values(), loaded.own_files)
    if source is None:
        return
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
