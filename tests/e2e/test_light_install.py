"""The README's light start: a team with only a cluster and its Prometheus runs `make install-light`
(kbt alone in a venv: no Java, Go or Kafka build) and `kbt diagnose --target FILE`. Run on a clean
clone, then diagnose with nothing of the full install in reach: a PATH without java, go or Kafka's
scripts, and an empty home and kbt cache (no Kafka jars, no engines). The cluster is the e2e tier's
runbook lab, read as a team's cluster is: through a target file. The venv's build and its checks are
tests/e2e/light_install.py's (CI builds it beside the integration tier: test_light_install_build.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.light_install import build_light_venv, built_venv, light_dir
from tuner.lab import load_state

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FULL_INSTALL_ONLY = ("java", "go", "kafka-topics.sh", "filebeat", "otelcol-contrib", "prometheus")


@pytest.fixture(scope="module")
def light_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv test_light_install_build.py built and checked beside the integration tier (CI), else
    one built and checked here."""
    root = light_dir()
    built = built_venv(root) if root is not None else None
    return built or build_light_venv(tmp_path_factory.mktemp("light"))


def test_a_light_install_diagnoses_a_cluster_with_no_java_go_or_kafka(
    light_venv: Path, runbook_lab_dir: Path, tmp_path: Path
) -> None:
    state = load_state(runbook_lab_dir)
    target = tmp_path / "cluster.yaml"
    target.write_text(
        f"name: our-cluster\nbootstrap_servers: [{state.bootstrap_servers}]\n"
        f'prometheus: {{url: "{state.prometheus_url}"}}\n'
    )
    bare_path = tmp_path / "bin"  # an empty PATH: only what the venv's own scripts name
    bare_path.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": str(bare_path), "HOME": str(home), "LANG": "C.UTF-8", "KBT_CACHE": str(home / "kbt")}
    assert all(shutil.which(tool, path=env["PATH"]) is None for tool in FULL_INSTALL_ONLY)
    kbt = str(light_venv / "bin" / "kbt")
    done = subprocess.run(
        [kbt, "diagnose", "--target", str(target), "--window", "60s", "--json", "-"],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 10, 11), done.stderr
    diagnosis = json.loads(done.stdout)
    assert diagnosis["kbt"] and diagnosis["command"] == "diagnose"
    assert {b["broker"] for b in diagnosis["brokers"]} == {str(n) for n in state.config.node_ids}
    assert diagnosis["status"] in ("healthy", "warning", "critical")
    assert not (home / "kbt").exists() or not any((home / "kbt").rglob("*.jar"))
