"""spec layer: workload, client profile and sweep specs (pydantic, loaded from YAML)."""

from tuner.spec.clients import ClientProfile
from tuner.spec.loader import LoadedSweep, load_profile, load_sweep, load_workload
from tuner.spec.sweep import SLO, RunPlan, SweepSpec, spec_hash
from tuner.spec.workload import (
    ConsumerGroupSpec,
    GeneratedSource,
    KeySpec,
    LogFileSource,
    SizeDistributionSource,
    TopicSpec,
    WorkloadSpec,
)

__all__ = [
    "SLO",
    "ClientProfile",
    "ConsumerGroupSpec",
    "GeneratedSource",
    "KeySpec",
    "LoadedSweep",
    "LogFileSource",
    "RunPlan",
    "SizeDistributionSource",
    "SweepSpec",
    "TopicSpec",
    "WorkloadSpec",
    "load_profile",
    "load_sweep",
    "load_workload",
    "spec_hash",
]
