"""What `kbt recommend` works from: the run records of one workload (or a sweep spec for --live),
the baseline profiles, the SLO and the codec table; for --live, the confirmation runs on the lab
(or a target file's cluster): each trial a one-run sweep through the normal sweep runner, so it
gets fresh topics, broker measurement, delivery verification and a run record."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tuner.core.errors import BadInput, KbtError, did_you_mean, field_message
from tuner.core.inputs import check_directory, exists
from tuner.driver.engines import ENGINES
from tuner.model.codecs import CodecTable, default_table, table_from_probe
from tuner.model.evidence import brokers_of, workload_key
from tuner.model.recommend import Request
from tuner.runner.lifecycle import Observer
from tuner.spec.clients import ClientProfile
from tuner.spec.error_bands import load_error_bands
from tuner.spec.loader import LoadedSweep, load_sweep
from tuner.spec.sweep import SLO, SweepSpec
from tuner.spec.thresholds import THRESHOLDS
from tuner.spec.workload import WorkloadSpec
from tuner.store.probe_record import load_probe_record
from tuner.store.recommendation import SLOBounds
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore
from tuner.target.base import TargetSource


def load_records(results: Path, sweeps: Sequence[str]) -> list[RunRecord]:
    store = ResultsStore(results)
    names = list(sweeps) or store.sweeps()
    missing = [s for s in sweeps if s not in store.sweeps()]
    if missing:
        raise BadInput(
            f'--sweep "{missing[0]}": no records under {results}'
            f" (sweeps: {', '.join(store.sweeps()) or 'none'})"
        )
    return [r for name in names for r in store.records(name)]


def _baselines(
    profiles: Sequence[ClientProfile], wanted: str | None
) -> tuple[ClientProfile | None, dict[str, ClientProfile]]:
    per_kind: dict[str, ClientProfile] = {}
    for p in profiles:
        per_kind.setdefault(p.client, p)
    if wanted is None:
        return (profiles[0] if profiles else None), per_kind
    for p in profiles:
        if p.name == wanted:
            per_kind[p.client] = p
            return p, per_kind
    names = sorted({p.name for p in profiles})
    raise BadInput(
        f'--baseline "{wanted}": no such profile{did_you_mean(wanted, names)} (profiles: {", ".join(names)})'
    )


def _slo(
    spec_slo: SLO | None,
    p99: float | None,
    memory: float | None,
    workload: WorkloadSpec,
    codecs: dict[str, list[str]],
    min_idle: float | None = None,
) -> SLOBounds:
    # The capacity bound: the flag (0 turns it off), else the spec's, else kbt's threshold.
    if min_idle is None:
        min_idle = spec_slo.min_network_idle if spec_slo and spec_slo.min_network_idle else None
    bound = THRESHOLDS.capacity_network_idle_min if min_idle is None else (min_idle or None)
    return SLOBounds(
        min_network_idle=bound,
        p99_ms=p99 if p99 is not None else (spec_slo.p99_ms if spec_slo else None),
        max_producer_memory_mb=memory
        if memory is not None
        else (spec_slo.max_producer_memory_mb if spec_slo else None),
        max_message_bytes=workload.max_message_bytes,
        codecs=codecs,
    )


def _check_slo_flags(p99: float | None, memory: float | None) -> None:
    """The SLO flags within the SLO's own bounds, before anything is read (a p99 past a week was a
    traceback where the SLO was built)."""
    try:
        SLO(p99_ms=p99, max_producer_memory_mb=memory)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        flag = {"p99_ms": "--slo-p99", "max_producer_memory_mb": "--slo-memory"}[str(err["loc"][0])]
        raise BadInput(f"{flag} {field_message(err)}") from None


class LabTrials:
    """Runs trials of one workload as the sweep `<workload>-recommend` under `results`."""

    def __init__(
        self,
        workload: WorkloadSpec,
        slo: SLO,
        results: Path,
        lab_dir: Path | None,
        spec_path: Path,
        observer: Observer | None = None,
        target_file: TargetSource | None = None,
    ) -> None:
        from tuner.runner.wiring import sweep_runner

        self.workload = workload
        self.slo = slo
        self.spec_path = spec_path
        self.sweep = f"{workload.name}-recommend"
        self.runner = sweep_runner(lab_dir, results, observer, target_file)
        self.count = 0
        self.engines = frozenset(eid for eid, engine in ENGINES.items() if engine.capabilities.live_trials)

    def run(self, profile: ClientProfile, reason: str) -> RunRecord:
        spec = SweepSpec(
            name=self.sweep,
            description=f"kbt recommend confirmation runs ({reason})",
            workload=self.workload,
            profiles=[profile],
            name_format="{profile}",
            slo=self.slo,
        )
        try:
            plan = spec.expand()[0]
        except ValueError as exc:
            raise KbtError(f"cannot run {profile.name}: {exc}") from None
        plan = plan.model_copy(update={"index": self.count})
        self.count += 1
        outcome = self.runner.run(LoadedSweep(path=self.spec_path, spec=spec, runs=[plan]))
        if not outcome.records:
            raise KbtError(f"the confirmation run of {profile.name} wrote no record")
        return outcome.records[0]


def gather(
    *,
    results: Path,
    live: Path | None,
    slo_p99: float | None,
    slo_memory: float | None,
    clients: list[str],
    min_network_idle: float | None = None,
    codecs: dict[str, list[str]],
    probe: Path | None,
    baseline: str | None,
    workload: str | None,
    sweeps: Sequence[str],
    max_trials: int,
    lab_dir: Path | None,
    observer: Observer | None = None,
    target_file: TargetSource | None = None,
    slo_margin: float | None = None,
) -> Request:
    if slo_margin is not None and not 0 <= slo_margin < 1:
        raise BadInput(
            f"--slo-margin must lie in [0, 1) (got {slo_margin:g}; 0.1 keeps 10% of the p99 bound free)"
        )
    margin = THRESHOLDS.slo_margin if slo_margin is None else slo_margin
    _check_slo_flags(slo_p99, slo_memory)
    if min_network_idle is not None and not 0 <= min_network_idle < 1:
        raise BadInput(f"--min-network-idle must lie in [0, 1) (got {min_network_idle:g}; 0 turns it off)")
    if exists(results):  # absent: no records yet (kbt sweep, or --live, makes them)
        check_directory(results, "results directory")
    records = load_records(results, sweeps) if results.is_dir() else []
    if live is not None:  # the sweep spec's workload on the target, its records so far as evidence
        from tuner.core.kafka_clients import reached_admin
        from tuner.target.registry import resolve_target
        from tuner.target.security import connection
        from tuner.target.topics import ADMIN_TIMEOUT_S, broker_ids

        sweep = load_sweep(live)
        spec = sweep.spec
        conn = connection(resolve_target(lab_dir, target_file))
        # a cluster that never answers: said at once, before the metadata's wait
        brokers = len(broker_ids(reached_admin(conn, ADMIN_TIMEOUT_S)))
        workload_spec = _one_workload(live, [run.workload for run in sweep.runs], brokers)
        key = workload_key(workload_spec, brokers)
        group = [r for r in records if workload_key(r.plan.workload, brokers_of(r)) == key]
        spec_slo, profiles = spec.slo, list(spec.profiles)
    else:
        newest, group = _newest_group(records, workload, results)
        brokers, workload_spec, spec_slo = brokers_of(newest), newest.plan.workload, newest.plan.slo
        order = sorted(group, key=lambda r: (r.sweep != newest.sweep, r.index, -r.created_at))
        profiles = list({r.plan.profile.name: r.plan.profile for r in reversed(order)}.values())[::-1]
    base, per_kind = _baselines(profiles, baseline)
    slo = _slo(spec_slo, slo_p99, slo_memory, workload_spec, codecs, min_network_idle)
    found = {r.sweep for r in group}
    live_fields: dict[str, Any] = {}
    if live is not None:
        trials_slo = SLO(
            p99_ms=slo.p99_ms,
            max_producer_memory_mb=slo.max_producer_memory_mb,
            min_network_idle=slo.min_network_idle,
        )
        trials = LabTrials(
            workload_spec, trials_slo, results, lab_dir, live, observer, target_file=target_file
        )
        found.add(trials.sweep)
        live_fields = {"trials": trials, "max_trials": max_trials, "live_spec": str(live)}
    return Request(
        workload=workload_spec,
        brokers=brokers,
        slo=slo,
        clients=clients,
        records=group,
        baselines=per_kind,
        baseline=base,
        codecs=_table(probe, group),
        results_dir=str(results),
        sweeps=sorted(found),
        bands=load_error_bands(),
        slo_margin=margin,
        **live_fields,
    )


def _one_workload(live: Path, workloads: list[WorkloadSpec], brokers: int) -> WorkloadSpec:
    """The one workload the --live spec's runs share (its `vary:` may set workload fields: the
    search is on what its runs offer, not on the spec's workload before the variation)."""
    distinct = {workload_key(w, brokers): w for w in workloads}
    if len(distinct) != 1:
        raise BadInput(
            f"--live {live}: its runs offer {len(distinct)} different workloads (a vary: of workload"
            " fields); the search needs one: give a spec whose runs share their workload"
        )
    return next(iter(distinct.values()))


def _newest_group(
    records: list[RunRecord], workload: str | None, results: Path
) -> tuple[RunRecord, list[RunRecord]]:
    """The newest record (of --workload) and every record of its workload on as many brokers."""
    if not records:
        raise BadInput(
            f"no run records under {results}: run `kbt sweep SPEC` first,"
            " or search on the lab with --live SPEC"
        )
    if workload is not None:
        chosen = [r for r in records if r.plan.workload.name == workload]
        if not chosen:
            names = sorted({r.plan.workload.name for r in records})
            raise BadInput(
                f'--workload "{workload}": no records{did_you_mean(workload, names)}'
                f" (workloads: {', '.join(names)})"
            )
        records = chosen
    newest = max(records, key=lambda r: r.created_at)
    key = workload_key(newest.plan.workload, brokers_of(newest))
    return newest, [r for r in records if workload_key(r.plan.workload, brokers_of(r)) == key]


def _table(probe: Path | None, records: Sequence[RunRecord]) -> CodecTable:
    if probe is None:
        return default_table()
    sizes = [r.client.bytes_acked / r.client.records_acked for r in records if r.client.records_acked]
    record = load_probe_record(probe)
    return table_from_probe(record, str(probe), sorted(sizes)[len(sizes) // 2] if sizes else None)
