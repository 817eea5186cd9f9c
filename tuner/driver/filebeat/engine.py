"""Which Filebeat runs a `client: filebeat` profile: real Filebeat (`real`) or the Sarama
emulation (`sarama`). The profile's `input.engine` decides; `auto` (the default) is real
Filebeat whenever a build is installed (`make install` builds one)."""

from __future__ import annotations

from tuner.core.errors import BadInput
from tuner.driver.engine import Capabilities, Engine, Placement
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.driver.result import DriverResult
from tuner.spec.clients.filebeat import config_of
from tuner.spec.engine_id import EngineId
from tuner.spec.sweep import RunPlan


def run_filebeat(plan: RunPlan, placement: Placement) -> DriverResult:
    """A run on real Filebeat or the Sarama emulation, as the profile says."""
    config = config_of(plan.profile)
    engine = config.input.engine
    if engine == "emulated" and not config.input.is_default:
        raise BadInput(
            f"profile {plan.profile.name}: input.* settings need real Filebeat (the Sarama emulation has"
            " no input stage): set input.engine to real or auto, or remove them"
        )
    if engine == "real" or (engine == "auto" and filebeat_builds()):
        from tuner.driver.filebeat.real import run_real

        return run_real(plan, placement).result
    if placement.security:  # the emulation speaks PLAINTEXT only
        raise BadInput(
            f"profile {plan.profile.name}: a secure connection needs real Filebeat (input.engine real"
            " or auto with a Filebeat build installed); the Sarama emulation is PLAINTEXT only"
        )
    from tuner.driver.filebeat.sarama import run_filebeat_load

    return run_filebeat_load(plan, placement)


# Client kind filebeat's engine. Its capabilities hold for both (real Filebeat counts no produce
# requests; the brokers do), but a secure connection: real Filebeat only, the emulation refuses it.
FILEBEAT_ENGINE = Engine(
    EngineId.FILEBEAT,
    Capabilities(secure=True, holds_load=False, live_trials=True, counts_requests=False, live_exporter=False),
    run_filebeat,
)
