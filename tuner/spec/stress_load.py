"""Load a stress spec: workload and profiles inline or by path (relative to the spec), the baseline
from the spec or from `kbt diagnose --json` output, and the stage timeline.

Every problem is one line naming the file, line and key, like the sweep loader's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tuner.core import inputs
from tuner.core.errors import BadInput
from tuner.core.inputs import plain_data, read_json, shown_path
from tuner.spec.limits import MAX_PRODUCERS
from tuner.spec.loader import describe_error, read_references, read_yaml, validated
from tuner.spec.stress_spec import Stage, StressSpec, build_stages, on_locust
from tuner.spec.stress_stage import engine_stage_plan, stage_producers

# The per-broker records/s in `kbt diagnose --json` output (snapshot.brokers[]).
DIAGNOSE_RATE_KEY = "messages_in_per_s"


@dataclass(frozen=True)
class LoadedStress:
    path: Path
    spec: StressSpec
    baseline_msgs_per_s: float
    baseline_source: str  # "spec", "workload" or the diagnose file
    stages: list[Stage]
    own_files: Mapping[str, Path] = field(default_factory=dict)  # as LoadedSweep's

    def profile_labels(self) -> list[str]:
        return list(self.spec.profiles)


def load_stress(path: Path, baseline_from: Path | None = None) -> LoadedStress:
    """Load and validate `path`; `baseline_from` (a diagnose JSON) overrides the spec's baseline."""
    path = Path(path)
    raw = read_yaml(path)
    data = plain_data(raw)
    own_files = read_references(data, raw, path, dict)
    spec = validated(StressSpec.model_validate, data, raw, path)
    if baseline_from is not None:
        rate, source = baseline_from_diagnose(Path(baseline_from)), shown_path(Path(baseline_from))
    elif spec.baseline.from_diagnose is not None:
        target = path.parent / spec.baseline.from_diagnose
        rate, source = baseline_from_diagnose(target), shown_path(target)
    elif spec.baseline.msgs_per_s is not None:
        rate, source = spec.baseline.msgs_per_s, "spec"
    else:
        offered = spec.workload.offered_msgs_per_s
        assert offered is not None  # StressSpec rejects rate "max"
        rate, source = offered, "workload"
    stages = build_stages(spec)
    _check_engine_stages(spec, stages, rate, shown_path(path))
    return LoadedStress(
        path=path,
        spec=spec,
        baseline_msgs_per_s=rate,
        baseline_source=source,
        stages=stages,
        own_files=own_files,
    )


def _check_engine_stages(spec: StressSpec, stages: list[Stage], rate: float, shown: str) -> None:
    """Every stage a profile runs through its kind's engine must be a run that engine can make (a
    sweep's bounds: producers, rate per producer): one line now, not a failure half way up."""
    for label, profile in spec.profiles.items():
        if on_locust(profile):
            continue
        for stage in (s for s in stages if s.kind != "drain"):
            producers = stage_producers(stage)
            if producers > MAX_PRODUCERS:
                raise BadInput(
                    f"{shown}: profiles.{label}: stage {stage.name} needs {producers} producers; client"
                    f" {profile.client} runs each stage through its engine, at most {MAX_PRODUCERS}"
                    " (use fewer producers with a higher baseline each)"
                )
            try:
                engine_stage_plan(spec, label, stage, rate)
            except ValidationError as exc:
                run = f"stage {stage.name} as a run of client {profile.client}'s engine"
                key = ".".join(str(part) for part in exc.errors(include_url=False)[0]["loc"])
                why = describe_error(exc, {}, "").removeprefix(": ")  # the bound, reworded
                raise BadInput(f"{shown}: profiles.{label}: {run}: {key}: {why}") from None


def baseline_from_diagnose(path: Path) -> float:
    """The cluster's records/s from `kbt diagnose --json` output: the sum of the brokers'
    `messages_in_per_s` in its snapshot (MessagesInPerSec counts each record once, on its leader)."""
    shown = shown_path(path)
    if not inputs.exists(path):
        raise BadInput(f"{shown}: no such diagnose file (write it with 'kbt diagnose --json')")
    data = read_json(path, "diagnose file")
    snapshot = data.get("snapshot") if isinstance(data, dict) else None
    brokers = snapshot.get("brokers") if isinstance(snapshot, dict) else None
    if not isinstance(brokers, list):
        raise BadInput(f"{shown}: not 'kbt diagnose --json' output (no snapshot.brokers)")
    rates = [
        float(b[DIAGNOSE_RATE_KEY])
        for b in brokers
        if isinstance(b, dict) and isinstance(b.get(DIAGNOSE_RATE_KEY), int | float)
    ]
    total = sum(rates)
    if not rates or not math.isfinite(total) or total <= 0:
        raise BadInput(
            f"{shown}: the brokers took no records ({DIAGNOSE_RATE_KEY}): no baseline load to multiply"
        )
    return total
