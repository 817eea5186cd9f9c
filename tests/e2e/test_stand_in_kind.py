"""The doc is the experiment: docs/architecture.md's worked example of adding a client kind
(confluent-kafka-go, librdkafka underneath) is written, as the doc gives it, into a copy of the
package in a temporary directory, registered as the doc says, and then used the way a user would:
a sweep's dry run lists its runs on the librdkafka engine, and `kbt recommend` models it, searches
its settings as that kind and renders its own file. Nothing in the checkout is changed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.e2e.kbt_process import kbt
from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.core.paths import repo_root

ROOT = repo_root()
SECTION = "### Adding a client kind: a worked example"


def _doc_blocks() -> list[str]:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", doc[doc.index(SECTION) :], re.S)


def _package_with_the_stand_in(tmp_path: Path) -> Path:
    module, union_line = _doc_blocks()[:2]
    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "tuner", pkg / "tuner", ignore=shutil.ignore_patterns("__pycache__"))
    clients = pkg / "tuner" / "spec" / "clients"
    (clients / "confluent_go.py").write_text(module, encoding="utf-8")
    init = clients / "__init__.py"
    text = init.read_text(encoding="utf-8")
    imports = re.search(r"^from tuner\.spec\.clients import (.+)$", text, re.M)
    assert imports is not None, "the registry's import of the kind modules moved: update the doc"
    names = sorted([*imports.group(1).split(", "), "confluent_go"])
    text = text.replace(imports.group(0), f"from tuner.spec.clients import {', '.join(names)}")
    last = re.findall(r"^    \w+\.\w+Profile,\n(?=\])", text, re.M)
    assert last, "the union _Models moved: update the doc"
    text = text.replace(last[-1], last[-1] + union_line, 1)
    init.write_text(text, encoding="utf-8")
    return pkg


def _kbt(pkg: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pkg), "KBT_LAB_DIR": str(cwd / "no-lab")}
    return kbt(*args, cwd=cwd, env=env)


def test_the_worked_example_kind_sweeps_models_searches_and_renders(tmp_path: Path) -> None:
    pkg = _package_with_the_stand_in(tmp_path)
    which = subprocess.run(
        [sys.executable, "-c", "import tuner; print(tuner.__file__)"],
        env={**os.environ, "PYTHONPATH": str(pkg)}, cwd=tmp_path, capture_output=True, text=True,
        timeout=SUBPROCESS_CAP_S,
    )  # fmt: skip
    assert which.stdout.strip().startswith(str(pkg)), which.stdout + which.stderr

    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        f"name: stand-in\nworkload: {ROOT / 'loadtests/workloads/qunar-logs-short.yaml'}\n"
        "profiles:\n  - {name: go-batched, client: confluent-go, linger_ms: 50, compression: zstd}\n",
        encoding="utf-8",
    )
    dry = _kbt(pkg, tmp_path, "sweep", str(spec), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "profile go-batched (confluent-go)" in dry.stdout and "linger.ms=50" in dry.stdout, dry.stdout

    out = tmp_path / "rec"
    results = ROOT / "tests" / "unit" / "data" / "demo-loaded"
    rec = _kbt(pkg, tmp_path, "recommend", "--results", str(results), "--client", "confluent-go",
               "--slo-p99", "1000", "--out", str(out))  # fmt: skip
    assert rec.returncode == 0, rec.stdout + rec.stderr
    (rendered,) = out.glob("*/confluent-go.properties")
    settings = dict(
        line.split("=", 1)
        for line in rendered.read_text(encoding="utf-8").splitlines()
        if "=" in line and line[0] != "#"
    )
    assert int(settings["linger.ms"]) > 0 and settings["compression.type"] in (
        "zstd",
        "lz4",
        "snappy",
        "gzip",
    )
    assert "confluent-go linger" in rec.stdout  # searched as its own kind, not as librdkafka
    # the installed package does not know the kind: it was the copy that ran
    env = {**os.environ, "KBT_LAB_DIR": str(tmp_path / "no-lab")}
    plain = kbt("sweep", str(spec), "--dry-run", cwd=tmp_path, env=env)
    assert plain.returncode != 0 and 'unknown client kind "confluent-go"' in plain.stderr
