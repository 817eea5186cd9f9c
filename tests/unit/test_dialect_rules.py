"""exporters/prometheus/dialects: the recording rules that map each metric dialect onto kbt's names
are current (generated from tuner/measure/dialects.py), pass `promtool check rules`, and their
promtool unit tests pass and can fail."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.unit.caps import SUBPROCESS_CAP_S, needs_promtool
from tuner.core.paths import repo_root
from tuner.render.dialect_rules import render_all

DIR = repo_root() / "exporters" / "prometheus" / "dialects"


def _promtool(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["promtool", *args], capture_output=True, text=True, cwd=cwd, timeout=SUBPROCESS_CAP_S
    )


def test_rules_are_generated_and_current() -> None:
    for rel, content in render_all().items():
        assert (repo_root() / rel).read_text() == content, f"stale {rel}: run make generate"
    assert sorted(p.name for p in DIR.glob("*.rules.yml")) == [
        "confluent.rules.yml",
        "exporter-default.rules.yml",  # msk is the same naming: one file
        "strimzi-reporter.rules.yml",
        "strimzi.rules.yml",
        "upstream.rules.yml",
    ]


@needs_promtool
def test_promtool_checks_and_tests_pass() -> None:
    check = _promtool(DIR, "check", "rules", *(p.name for p in sorted(DIR.glob("*.rules.yml"))))
    assert check.returncode == 0 and "FAILED" not in check.stdout, check.stdout + check.stderr
    for tests in ("dialects_test.yml", "pods_test.yml"):
        test = _promtool(DIR, "test", "rules", tests)
        assert test.returncode == 0 and "SUCCESS" in test.stdout, test.stdout + test.stderr


@needs_promtool
def test_promtool_tests_bite(tmp_path: Path) -> None:
    """With the Strimzi network-idle series misnamed, the unit tests fail."""
    for p in DIR.iterdir():
        shutil.copy(p, tmp_path / p.name)
    strimzi = tmp_path / "strimzi.rules.yml"
    strimzi.write_text(
        strimzi.read_text().replace("networkprocessoravgidle_percent", "networkprocessoravgidle")
    )
    result = _promtool(tmp_path, "test", "rules", "dialects_test.yml")
    assert result.returncode != 0 and "FAILED" in result.stdout + result.stderr


@needs_promtool
def test_pod_tests_bite(tmp_path: Path) -> None:
    """With the pod labels no longer naming a broker, the pods' series average together: the one
    saturated pod (0.2 among 0.9s) fires nothing and the pod tests fail."""
    (tmp_path / "dialects").mkdir()
    for p in DIR.iterdir():
        shutil.copy(p, tmp_path / "dialects" / p.name)
    pods = '"kubernetes_pod_name", "pod", "strimzi_io_pod_name", "node_name", '
    for rules in (tmp_path / "dialects" / "strimzi-reporter.rules.yml", tmp_path / "kafka-broker.rules.yml"):
        text = (DIR.parent / rules.name).read_text() if rules.parent == tmp_path else rules.read_text()
        assert pods in text
        rules.write_text(text.replace(pods, ""))
    result = _promtool(tmp_path / "dialects", "test", "rules", "pods_test.yml")
    assert result.returncode != 0 and "KafkaNetworkThreadsSaturated" in result.stdout + result.stderr
