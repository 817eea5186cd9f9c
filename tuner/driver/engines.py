"""The driver engines by EngineId: a client kind names its engine (`ClientKind.engine`), the runner
takes it from `ENGINES` and runs it through `drive`, which holds a request to what the engine
declares it can do. Adding an engine: its module (an `Engine` of its id, capabilities and run
function, see tuner/driver/engine.py) and one line below.
The engines' heavy parts (the Sarama and Java engines' processes, real Filebeat, the librdkafka
workers) start only when a run needs them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.driver.engine import Engine, Hold, Placement
from tuner.driver.filebeat.engine import FILEBEAT_ENGINE
from tuner.driver.filebeat.sarama import SARAMA_ENGINE
from tuner.driver.java_engine import JAVA_ENGINE
from tuner.driver.librdkafka_engine import LIBRDKAFKA_ENGINE
from tuner.driver.otelcol.engine import OTELCOL_ENGINE
from tuner.driver.result import DriverResult
from tuner.spec.clients import ClientProfile, kind_of
from tuner.spec.engine_id import EngineId
from tuner.spec.sweep import RunPlan

_REGISTERED: tuple[Engine, ...] = (
    LIBRDKAFKA_ENGINE, SARAMA_ENGINE, FILEBEAT_ENGINE, JAVA_ENGINE, OTELCOL_ENGINE
)  # fmt: skip
ENGINES: Mapping[EngineId, Engine] = {engine.id: engine for engine in _REGISTERED}


def engine_of(plan: RunPlan) -> Engine:
    """The engine that runs `plan`'s client kind."""
    return ENGINES[kind_of(plan.profile).engine]


def client_refusal(profile: ClientProfile, own_file: Path | None = None) -> str | None:
    """The profile's client's own refusal of the team's file it stands for (`own_file`), else of the
    file its run would start from (real Filebeat's `test config`, the collector's `validate`, the
    Java producer's config), None when it takes it or its engine has no such check (librdkafka's
    settings are checked as the profile loads)."""
    check = ENGINES[kind_of(profile).engine].checks
    return None if check is None else check(profile, own_file)


def drive(plan: RunPlan, placement: Placement, hold: Hold | None = None) -> DriverResult:
    """Run `plan` on its kind's engine, where `placement` says; BadInput when the run asks for
    what the engine does not declare (a secure target, a held load)."""
    engine = engine_of(plan)
    caps, name = engine.capabilities, plan.profile.name
    if placement.security and not caps.secure:
        raise BadInput(
            f"profile {name}: the {engine.id} engine does not take SASL_SSL or ${{VAR}} overrides yet"
        )
    if hold is not None and not caps.holds_load:
        raise BadInput(f"profile {name}: the {engine.id} engine cannot hold its load")
    if not caps.live_exporter:
        placement = replace(placement, exporter_ports=())  # nothing would serve on them
    return engine.run(plan, placement, hold)
