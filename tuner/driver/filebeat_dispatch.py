"""Which Filebeat runs a `client: filebeat` profile: real Filebeat (filebeat_real) or the Sarama
emulation (filebeat_engine). The profile's `input.engine` decides; `auto` (the default) is real
Filebeat whenever a build is installed (`make install` builds one)."""

from __future__ import annotations

from typing import Any, Literal

from tuner.core.errors import BadInput
from tuner.driver.filebeat_builds import filebeat_builds
from tuner.driver.result import DriverResult
from tuner.spec.clients.filebeat import config_of
from tuner.spec.sweep import RunPlan


def filebeat_engine_name(plan: RunPlan) -> Literal["real", "emulated"]:
    config = config_of(plan.profile)
    engine = config.input.engine
    if engine == "auto":
        return "real" if filebeat_builds() else "emulated"
    if engine == "emulated" and not config.input.is_default:
        raise BadInput(
            f"profile {plan.profile.name}: input.* settings need real Filebeat (the Sarama emulation has"
            " no input stage): set input.engine to real or auto, or remove them"
        )
    return engine


def run_filebeat(plan: RunPlan, *args: Any, **kwargs: Any) -> DriverResult:
    """The engine registry's entry for client kind filebeat (tuner/driver/engines.py)."""
    if filebeat_engine_name(plan) == "real":
        from tuner.driver.filebeat_real import run_real_filebeat_load

        return run_real_filebeat_load(plan, *args, **kwargs)
    from tuner.driver.filebeat_engine import run_filebeat_load

    if kwargs.get("security"):  # the emulation speaks PLAINTEXT only
        raise BadInput(
            f"profile {plan.profile.name}: a secure connection needs real Filebeat (input.engine real"
            " or auto with a Filebeat build installed); the Sarama emulation is PLAINTEXT only"
        )
    return run_filebeat_load(plan, *args, **kwargs)
