"""The engine interface: what every driver engine implements, in the spirit of OpenMessaging
Benchmark's small driver API. An engine runs one run's load where a `Placement` says and verifies
its delivery; it declares what it can do as typed `Capabilities`, so the runner checks a request
(a SASL_SSL target, a held load, live trials) against the declaration instead of a reader having to
read the engine. The registry of engines by `EngineId` is tuner/driver/engines.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.driver.result import DriverResult
from tuner.spec.engine_id import EngineId
from tuner.spec.profile import ProfileBase
from tuner.spec.sweep import RunPlan


@dataclass(frozen=True)
class Capabilities:
    """What an engine supports, declared once on the engine."""

    secure: bool  # takes a secure listener's client properties and `${VAR}` overrides (Placement.security)
    holds_load: bool  # keeps its load going past the duration while asked to (kbt chaos)
    live_trials: bool  # kbt recommend --live runs its trials
    counts_requests: bool  # counts its produce requests client-side (else only the brokers' counter does)
    live_exporter: bool  # serves kbt_client_* series on the target's client exporter ports while it runs


@dataclass(frozen=True)
class Placement:
    """Where a run goes: the cluster's bootstrap servers and the client properties to reach them,
    the run's topics and id, the ports its client exporters serve on."""

    run_id: str
    topics: tuple[str, ...]
    bootstrap_servers: str
    security: Mapping[str, str] = field(default_factory=dict)  # resolved client properties
    exporter_ports: tuple[int, ...] = ()

    def single_topic(self, client: str) -> str:
        """The one topic of an engine that writes one topic per run (BadInput otherwise)."""
        if len(self.topics) != 1:
            raise BadInput(f"client {client} writes one topic per run (the workload has {len(self.topics)})")
        return self.topics[0]


Hold = Callable[[], bool]  # keep the load going past its duration while this returns True


@dataclass(frozen=True)
class Engine:
    """A driver engine, one run function: one instance per EngineId, registered in
    tuner/driver/engines.py."""

    id: EngineId
    capabilities: Capabilities
    runs: Callable[..., DriverResult]  # (plan, placement), and the hold when it `holds_load`
    # The client's own check, when that client is installed, of the team's file the profile stands
    # for (if any), else of the file a run starts it from (its artifact): its one-line refusal, else
    # None. None: the spec's checks are all.
    checks: Callable[[ProfileBase, Path | None], str | None] | None = None

    def run(self, plan: RunPlan, placement: Placement, hold: Hold | None = None) -> DriverResult:
        """Drive one run and verify the delivery of every acked record. `hold` reaches only an
        engine whose capabilities say `holds_load` (librdkafka's)."""
        if self.capabilities.holds_load:
            return self.runs(plan, placement, hold)
        return self.runs(plan, placement)
