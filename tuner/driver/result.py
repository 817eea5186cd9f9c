"""What a driver run returns: client aggregates and the delivery verdict (defined once, for the
drivers and the run records alike, in tuner.core.client_figures) and the topics."""

from __future__ import annotations

from pydantic import Field

from tuner.core.client_figures import ArtifactRef, ClientResult, DeliveryResult, LatencyMs
from tuner.core.frozen import Frozen


class DriverResult(Frozen):
    """A driver's answer for one run."""

    client: ClientResult
    delivery: DeliveryResult
    topics: list[str] = Field(default_factory=list)


__all__ = ["ArtifactRef", "ClientResult", "DeliveryResult", "DriverResult", "LatencyMs"]
