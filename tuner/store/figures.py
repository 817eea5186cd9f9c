"""The figures a run record holds: client aggregates, the delivery verdict and the broker window.

These are the on-disk schema (tuner.store.record). The client's figures are defined once, in
tuner.core.client_figures, for the drivers that report them and the records that keep them; the
broker's and its threads' once, in tuner.core.broker_figures, for the measurement that reports them
and the records that keep them; the attribution is defined here (the measure layer reports a cause of
its own type and the runner copies it in).
Counts marked "window" cover only the measured window [window_start, window_end] (warm-up
trimmed); "_total" counts cover the whole run.
"""

from __future__ import annotations

from tuner.core.broker_figures import BrokerStats, BrokerWindow, ThreadTime, ThreadWindow
from tuner.core.client_figures import ArtifactRef, ClientResult, DeliveryResult, LatencyMs
from tuner.core.frozen import Frozen
from tuner.core.units import Ratio, Text

# The client's, broker's and threads' figures, each defined once in tuner.core: a record's schema
# names them here.
__all__ = [
    "ArtifactRef",
    "BrokerStats",
    "BrokerWindow",
    "ClientResult",
    "DeliveryResult",
    "LatencyMs",
    "ThreadTime",
    "ThreadWindow",
]


class Attribution(Frozen):
    """Where the network threads' busy time went over the window and the cause it points to
    (tuner/measure/attribution.py): request queue full, host contention, own work, ..."""

    threads: ThreadWindow
    network_idle: Ratio | None = None
    busy: Ratio
    blocked: Ratio  # shares of the busy time
    own_cpu: Ratio
    runqueue_wait: Ratio
    handler_busy: Ratio | None = None  # the request handlers: 1 - their idle
    handler_own_cpu: Ratio | None = None  # shares of the handlers' busy time
    handler_runqueue_wait: Ratio | None = None
    handler_disk: Ratio | None = None
    handler_off_cpu: Ratio | None = None
    handler_limit: Text | None = None  # own CPU | runqueue wait | disk wait | off-CPU wait
    cause: Text
    why: Text
