"""Confirmation runs on the lab (or a target file's cluster): each trial is a one-run sweep through
the normal sweep runner, so it gets fresh topics, broker measurement, delivery verification and a
run record."""

from __future__ import annotations

from pathlib import Path

from tuner.core.errors import KbtError
from tuner.driver.engines import ENGINES
from tuner.runner.lifecycle import Observer
from tuner.spec.clients import ClientProfile
from tuner.spec.loader import LoadedSweep
from tuner.spec.sweep import SLO, SweepSpec
from tuner.spec.workload import WorkloadSpec
from tuner.store.record import RunRecord
from tuner.target.base import TargetSource


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
