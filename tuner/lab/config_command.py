"""Kafka's own ConfigCommand (kafka-configs) from the lab's jars, for the settings confluent-kafka
cannot change (client quotas, broker loggers)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

from tuner.core.errors import EnvironmentProblem
from tuner.lab.node_config import classpath

CONFIG_COMMAND_TIMEOUT_S = 60.0


def run_config_command(bootstrap: str, *change: str) -> None:
    """Run `kafka-configs --bootstrap-server B --alter` with `change` (the entity and its configs);
    EnvironmentProblem when it fails or does not answer in time."""
    java = shutil.which("java")
    if java is None:
        raise EnvironmentProblem("java is not on PATH (kbt lab needs it)")
    argv = [java, "-Xmx128m", "-cp", classpath(), "kafka.admin.ConfigCommand"]
    argv += ["--bootstrap-server", bootstrap, "--alter", *change]
    try:
        # In a directory of its own: the tool's logging may write files where it runs, never into
        # the user's working directory. Ctrl-C or SIGTERM kills it (subprocess.run on any exception).
        with tempfile.TemporaryDirectory(prefix="kbt-configs-") as cwd:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=CONFIG_COMMAND_TIMEOUT_S, check=False, cwd=cwd
            )
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(
            f"kafka-configs did not answer in {CONFIG_COMMAND_TIMEOUT_S:.0f} s ({bootstrap})"
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1][:300]
        raise EnvironmentProblem(f"kafka-configs failed ({bootstrap}): {last}")
