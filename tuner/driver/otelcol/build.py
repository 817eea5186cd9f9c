"""The collector kbt builds (`make install`: loadtests/otelcol-engine into `<cache>/bin`)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tuner.core.errors import EnvironmentProblem
from tuner.core.paths import cache_dir

NAME = "otelcol-engine"
# `validate` answers in under a second, or 2 s on a loaded machine; its time grows with some values
# (sending_queue.num_consumers 2147483648 kept it busy for 30 s, then "ok"): a check stays short
VALIDATE_TIMEOUT_S = 20.0


def collector_binary() -> Path | None:
    """The built collector, or None when `make install` has not built it."""
    path = cache_dir() / "bin" / NAME
    return path if path.is_file() and os.access(path, os.X_OK) else None


def require_collector() -> Path:
    path = collector_binary()
    if path is None:
        raise EnvironmentProblem(
            f"no OpenTelemetry Collector build at {cache_dir() / 'bin' / NAME}: run 'make install'"
        )
    return path


def collector_version(binary: Path) -> str:
    """The collector release the binary reports (`otelcol-engine --version`)."""
    out = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=VALIDATE_TIMEOUT_S, check=False
    )
    return out.stdout.strip().split()[-1] if out.returncode == 0 and out.stdout.strip() else "unknown"


_GO_LOG_TIME = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? ")


def validate(binary: Path, configs: list[Path], env: dict[str, str] | None = None) -> str | None:
    """The collector's own `validate` of config files merged in order: None when it accepts them,
    else its last line of complaint."""
    args = [a for path in configs for a in ("--config", str(path))]
    try:
        out = subprocess.run(
            [str(binary), "validate", *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VALIDATE_TIMEOUT_S,
            check=False,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        return f"the collector did not answer within {VALIDATE_TIMEOUT_S:g} s"
    except OSError as exc:
        return f"the collector could not run: {exc.strerror or exc}"
    if out.returncode == 0:
        return None
    lines = [ln for ln in (out.stderr + out.stdout).splitlines() if ln.strip()]
    # Go's log prefixes its line with the time it was written (2026/11/30 23:51:01): not the complaint
    return _GO_LOG_TIME.sub("", lines[-1]) if lines else f"exit status {out.returncode}"
