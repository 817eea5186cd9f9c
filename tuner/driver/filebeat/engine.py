"""Which Filebeat runs a `client: filebeat` profile: real Filebeat (`real`) or the Sarama
emulation (`sarama`). The profile's `input.engine` decides; `auto` (the default) is real
Filebeat whenever a build is installed (`make install` builds one)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.inputs import shown_path
from tuner.driver.engine import Capabilities, Engine, Placement
from tuner.driver.filebeat.builds import filebeat_builds
from tuner.driver.result import DriverResult
from tuner.spec.clients.filebeat import KIND, FilebeatProfile, config_of
from tuner.spec.engine_id import EngineId
from tuner.spec.profile import ProfileBase
from tuner.spec.sweep import RunPlan


def _on_real_filebeat(profile: ProfileBase) -> bool:
    engine = config_of(profile).input.engine
    return engine == "real" or (engine == "auto" and bool(filebeat_builds()))


def run_filebeat(plan: RunPlan, placement: Placement) -> DriverResult:
    """A run on real Filebeat or the Sarama emulation, as the profile says."""
    config = config_of(plan.profile)
    engine = config.input.engine
    if engine == "emulated" and not config.input.is_default:
        raise BadInput(
            f"profile {plan.profile.name}: input.* settings need real Filebeat (the Sarama emulation has"
            " no input stage): set input.engine to real or auto, or remove them"
        )
    if _on_real_filebeat(plan.profile):
        from tuner.driver.filebeat.real import run_real

        return run_real(plan, placement).result
    if placement.security:  # the emulation speaks PLAINTEXT only
        raise BadInput(
            f"profile {plan.profile.name}: a secure connection needs real Filebeat (input.engine real"
            " or auto with a Filebeat build installed); the Sarama emulation is PLAINTEXT only"
        )
    from tuner.driver.filebeat.sarama import run_filebeat_load

    return run_filebeat_load(plan, placement)


def check_filebeat(profile: ProfileBase, own_file: Path | None) -> str | None:
    """`filebeat test config`, on the build a run of `profile` starts real Filebeat on, of the team's
    filebeat.yml the profile stands for (`own_file`, as `kbt check filebeat` tests it), else of the
    filebeat.yml the run starts from (its artifact): what kbt's schema takes but Filebeat refuses
    (a bad codec format string, a processor it does not have) is one line before anything runs.
    None on the emulation (it reads no filebeat.yml) or without that build (the run says so)."""
    if not isinstance(profile, FilebeatProfile) or not _on_real_filebeat(profile):
        return None
    from tuner.driver.filebeat.builds import build_for, build_version
    from tuner.driver.filebeat.testconfig import test_config

    try:
        version = build_version(build_for(config_of(profile).filebeat_version))
    except BadInput:
        return None
    if own_file is not None:
        tested, problem = test_config(own_file, version)
        return (
            None if problem is None else f"{shown_path(own_file)}: filebeat {tested} test config: {problem}"
        )
    with tempfile.TemporaryDirectory(prefix="kbt-fbcheck-") as tmp:
        path = Path(tmp) / "filebeat.yml"
        path.write_text(KIND.artifact(profile).text, encoding="utf-8")
        tested, problem = test_config(path, version)
        if problem is None:
            return None
        for shown in {str(path.resolve()), str(path)}:  # the temporary file is no file of the user's
            problem = problem.replace(shown, "filebeat.yml")
    return f"profile {profile.name}: filebeat {tested} test config of the filebeat.yml it runs: {problem}"


# Client kind filebeat's engine. Its capabilities hold for both (real Filebeat counts no produce
# requests; the brokers do), but a secure connection: real Filebeat only, the emulation refuses it.
FILEBEAT_ENGINE = Engine(
    EngineId.FILEBEAT,
    Capabilities(secure=True, holds_load=False, live_trials=True, counts_requests=False, live_exporter=False),
    run_filebeat,
    check_filebeat,
)
