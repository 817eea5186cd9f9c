"""The service-level objective a run or a recommended setting must meet: the one SLO type (a
recommendation adds the cluster's limits to it, tuner.store.recommendation.SLOBounds)."""

from __future__ import annotations

from pydantic import Field

from tuner.spec.base import StrictModel
from tuner.spec.duration import MAX_SPEC_MS
from tuner.spec.limits import MAX_MEMORY_BYTES


class SLO(StrictModel):
    """What a run must meet to count as acceptable."""

    p99_ms: float | None = Field(
        default=None, gt=0, le=MAX_SPEC_MS, description="p99 delivery latency bound, ms."
    )
    max_producer_memory_mb: float | None = Field(
        default=None, gt=0, le=MAX_MEMORY_BYTES / 2**20, description="Per producer, MB."
    )
    min_network_idle: float | None = Field(
        default=None,
        gt=0,
        lt=1,
        description="Capacity bound: the busiest broker's network idle at the offered load, at least.",
    )
