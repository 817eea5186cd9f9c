"""exporters/prometheus: `promtool check rules` and `promtool test rules` pass, and the unit tests
cover every alert both firing and not firing; recordings come from the PromQL catalog."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.unit.caps import SUBPROCESS_CAP_S, needs_promtool
from tuner.core.paths import repo_root
from tuner.measure.promql import promql
from tuner.render.dashboards.alert_rules import RECORDINGS, RULES_PATH, WINDOW, rules_yaml

RULES_DIR = repo_root() / "exporters" / "prometheus"
RULE_FILES = sorted(RULES_DIR.glob("*.rules.yml"))
TEST_FILES = sorted(RULES_DIR.glob("*_test.yml"))


def _load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["promtool", *args], capture_output=True, text=True, cwd=RULES_DIR, timeout=SUBPROCESS_CAP_S
    )


def test_files_exist_and_rules_are_generated() -> None:
    assert [p.name for p in RULE_FILES] == ["kafka-broker.rules.yml"]
    assert TEST_FILES, "no promtool unit tests (*_test.yml)"
    assert (repo_root() / RULES_PATH).read_text() == rules_yaml(), "stale: run make generate"


@needs_promtool
def test_promtool_check_rules() -> None:
    result = _promtool("check", "rules", *(str(p) for p in RULE_FILES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@needs_promtool
def test_promtool_unit_tests_pass() -> None:
    result = _promtool("test", "rules", *(p.name for p in TEST_FILES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout and "FAILED" not in result.stdout


@needs_promtool
def test_promtool_unit_tests_can_fail(tmp_path: Path) -> None:
    """The unit tests bite: with the critical network threshold moved, they fail."""
    text = (RULES_DIR / "kafka-broker.rules.yml").read_text()
    broken = text.replace(
        "kafka_network_processor_avg_idle_ratio:avg < 0.3", "kafka_network_processor_avg_idle_ratio:avg < 0.1"
    )
    assert broken != text
    (tmp_path / "kafka-broker.rules.yml").write_text(broken)
    for test in TEST_FILES:
        shutil.copy(test, tmp_path / test.name)
    result = subprocess.run(
        ["promtool", "test", "rules", *(p.name for p in TEST_FILES)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=SUBPROCESS_CAP_S,
    )
    assert result.returncode != 0 and "KafkaNetworkThreadsSaturated" in result.stdout + result.stderr


def _alerts() -> set[str]:
    return {r["alert"] for f in RULE_FILES for g in _load(f)["groups"] for r in g["rules"] if "alert" in r}


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    firing: set[str] = set()
    silent: set[str] = set()
    for path in TEST_FILES:
        for group in _load(path)["tests"]:
            for case in group.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else silent).add(case["alertname"])
    alerts = _alerts()
    assert alerts == {
        "KafkaNetworkThreadsSaturated",
        "KafkaNetworkThreadsBusy",
        "KafkaRequestQueueNearLimit",
        "KafkaProduceP999AboveSLO",
        "KafkaTinyProduceRequests",
        "KafkaRemoteCopyLagGrowing",
        "KafkaLogFlushTimeSpike",
    }
    assert alerts - firing == set(), "alerts never tested firing"
    assert alerts - silent == set(), "alerts never tested not firing"


def test_alerts_have_severity_and_annotations() -> None:
    for f in RULE_FILES:
        for group in _load(f)["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
                    assert {"summary", "description", "runbook"} <= set(rule["annotations"]), rule["alert"]
                    assert rule["for"], rule["alert"]


def test_recordings_are_catalog_queries_grouped_by_cluster_and_broker() -> None:
    [recording, _alerting] = _load(RULES_DIR / "kafka-broker.rules.yml")["groups"]
    by_name = {r["record"]: r["expr"] for r in recording["rules"]}
    for record, query in RECORDINGS.items():
        catalog = promql(query, WINDOW)
        expr = by_name[record]
        assert "by (broker)" not in expr
        assert catalog.count("by (broker)") == expr.count("by (cluster, broker)(")
        # Each aggregation groups by pod labels too and takes the broker from them where a series
        # has no broker label (issue 44): the catalog's selectors are inside, unchanged.
        selectors = re.findall(r"\bkafka_[a-z_]+(?:\{[^}]*\})?(?:\[[^]]*\])?", catalog)
        assert selectors, catalog
        for selector in selectors:
            assert selector in expr, (record, selector)
        assert "kubernetes_pod_name" in expr, record
