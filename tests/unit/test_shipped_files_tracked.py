"""A clean clone holds every file a shipped spec reads: a path under loadtests/ that a workload, sweep
or stress spec names must be tracked by git, not just present in this checkout (a `*.log` ignore
rule once kept the Loghub samples out, and a user's clone generated lines instead)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tuner.core.paths import repo_root

ROOT = repo_root()
PATH_VALUE = re.compile(r"\bpath:\s*([^\s,}#]+)")


def _tracked() -> set[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    return set(out.stdout.decode().split("\0"))


def test_every_file_a_shipped_spec_names_is_in_the_repository() -> None:
    tracked = _tracked()
    named: dict[str, str] = {}
    for spec in sorted((ROOT / "loadtests").rglob("*.yaml")):
        for match in PATH_VALUE.finditer(spec.read_text(encoding="utf-8")):
            target = (spec.parent / match.group(1)).resolve()
            if target.is_relative_to(ROOT / "loadtests" / "data"):
                named[str(target.relative_to(ROOT))] = str(spec.relative_to(ROOT))
    assert named, "no spec names a data file: the pattern no longer matches how specs name them"
    missing = {path: spec for path, spec in named.items() if path not in tracked}
    assert missing == {}, (
        f"named by a shipped spec but not in the repository (git add; .gitignore?): {missing}"
    )
