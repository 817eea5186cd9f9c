"""spec layer: workload, client profile and sweep specs (pydantic, loaded from YAML).

The names are imported on first use (tuner/core/lazy.py): reading one spec module (the thresholds,
a constant) does not build every model of the layer.
"""

from typing import TYPE_CHECKING

from tuner.core.lazy import lazy_exports

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

_HOME = {
    "ClientProfile": "tuner.spec.clients",
    **dict.fromkeys(("LoadedSweep", "load_profile", "load_sweep", "load_workload"), "tuner.spec.loader"),
    **dict.fromkeys(("SLO", "RunPlan", "SweepSpec", "spec_hash"), "tuner.spec.sweep"),
    **dict.fromkeys(
        (
            "ConsumerGroupSpec",
            "GeneratedSource",
            "KeySpec",
            "LogFileSource",
            "SizeDistributionSource",
            "TopicSpec",
            "WorkloadSpec",
        ),
        "tuner.spec.workload",
    ),
}

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

__getattr__ = lazy_exports(__name__, _HOME)
