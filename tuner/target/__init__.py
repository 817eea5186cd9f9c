"""Targets: where load goes and where broker metrics come from, behind one interface.

    target = resolve_target(lab_dir=None, target_file=None)   # the embedded lab by default

A target kind is one module here (`lab`: kbt's own lab; `file`: any cluster named by a target
file, or by Kafka-tool flags: `ClusterFlags`) registered in `KINDS`. Runners take a `Target` and
never read the lab's state file.
"""

from tuner.target.base import (
    BrokerSelectors,
    ClusterFlags,
    PrometheusAccess,
    Target,
    TargetLimits,
    TargetSource,
)
from tuner.target.registry import resolve_target

__all__ = [
    "BrokerSelectors",
    "ClusterFlags",
    "PrometheusAccess",
    "Target",
    "TargetLimits",
    "TargetSource",
    "resolve_target",
]
