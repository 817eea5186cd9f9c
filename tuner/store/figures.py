"""The figures a run record holds: client aggregates, the delivery verdict and the broker window.

These are the on-disk schema (tuner.store.record). The client's figures are defined once, in
tuner.core.client_figures, for the drivers that report them and the records that keep them; the
broker's, its threads' and their attribution once, in tuner.core.broker_figures, for the measurement
that reports them and the records that keep them.
Counts marked "window" cover only the measured window [window_start, window_end] (warm-up
trimmed); "_total" counts cover the whole run.
"""

from __future__ import annotations

from tuner.core.broker_figures import Attribution, BrokerStats, BrokerWindow, ThreadTime, ThreadWindow
from tuner.core.client_figures import ArtifactRef, ClientResult, DeliveryResult, LatencyMs

# The client's, broker's and threads' figures, each defined once in tuner.core: a record's schema
# names them here.
__all__ = [
    "ArtifactRef",
    "Attribution",
    "BrokerStats",
    "BrokerWindow",
    "ClientResult",
    "DeliveryResult",
    "LatencyMs",
    "ThreadTime",
    "ThreadWindow",
]
