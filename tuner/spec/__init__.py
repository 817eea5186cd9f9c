"""spec layer: workload, client profile and sweep specs (pydantic, loaded from YAML).

The names are imported on first use (PEP 562): reading one spec module (the thresholds, a
constant) does not build every model of the layer.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name == "ClientProfile":
        from tuner.spec import clients

        return clients.ClientProfile
    if name in ("LoadedSweep", "load_profile", "load_sweep", "load_workload"):
        from tuner.spec import loader

        return getattr(loader, name)
    if name in ("SLO", "RunPlan", "SweepSpec", "spec_hash"):
        from tuner.spec import sweep

        return getattr(sweep, name)
    if name in __all__:
        from tuner.spec import workload

        return getattr(workload, name)
    raise AttributeError(f"module 'tuner.spec' has no attribute {name!r}")
