"""`filebeat test config` on a file, with an installed real Filebeat build.

Filebeat validates values the way it will use them (kbt's schema catches misspelled keys, which
Filebeat accepts silently). `${VAR}` references that are not set are given placeholders, so a
profile with the engine's `${KAFKA_HOSTS}` / `${KAFKA_TOPIC}` checks as it will run.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

from tuner.driver.filebeat.builds import build_version, filebeat_binary

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.]*)")
_HAS_INPUTS = re.compile(r"^\s*(filebeat\.(inputs|modules|config)|inputs\s*:)", re.MULTILINE)
TIMEOUT_S = 60.0


def test_config(path: Path, version: str | None = None) -> tuple[str, str | None]:
    """(version used, None when Filebeat accepts the file, else its one-line complaint)."""
    binary = filebeat_binary(version)
    text = path.read_text(encoding="utf-8", errors="replace")
    env = dict(os.environ)
    for name in _REFERENCE.findall(text):
        env.setdefault(name, "127.0.0.1:9092" if "HOST" in name.upper() else "kbt-placeholder")
    with tempfile.TemporaryDirectory(prefix="kbt-fbtest-") as home:
        args = ["-c", str(path.resolve())]
        if not _HAS_INPUTS.search(text):
            # A profile fragment (output.kafka + queue.mem): Filebeat refuses a config without inputs,
            # so a stub input is merged in as a second -c file.
            stub = Path(home) / "kbt-stub-input.yml"
            stub.write_text(
                f'filebeat.inputs: [{{type: log, paths: ["{home}/none.log"]}}]\n', encoding="utf-8"
            )
            args += ["-c", str(stub)]
        try:
            proc = subprocess.run(
                [
                    str(binary),
                    "test",
                    "config",
                    *args,
                    "--strict.perms=false",
                    "--path.home",
                    home,
                    "--path.data",
                    home,
                    "--path.logs",
                    home,
                    # A file's own logging.files.path / path.* would make `test config` create
                    # directories beside the user's file: -E overrides every one into the temp home.
                    *("-E", f"logging.files.path={home}", "-E", "logging.to_files=false"),
                    *("-E", f"path.data={home}", "-E", f"path.logs={home}", "-E", f"path.home={home}"),
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return build_version(binary), f"filebeat test config gave no answer in {TIMEOUT_S:g} s"
    if proc.returncode == 0:
        return build_version(binary), None
    lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    lines = [ln for ln in lines if "fetching V2 controller" not in ln]  # a cgroup notice, not the config
    return build_version(binary), (lines[-1] if lines else f"exit status {proc.returncode}")
