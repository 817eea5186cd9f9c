"""Every name a script in scripts/ imports from kbt exists: scripts are not under mypy, and a
module moved or a function renamed once left `make bench-driver` failing at its first line."""

from __future__ import annotations

import ast
import importlib

import pytest

from tuner.core.paths import repo_root

SCRIPTS = sorted((repo_root() / "scripts").glob("*.py"))


def _kbt_imports(path: object) -> list[tuple[str, str]]:
    tree = ast.parse((repo_root() / "scripts" / str(path)).read_text(encoding="utf-8"))
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tuner"
        for alias in node.names
    ]


@pytest.mark.parametrize("script", [p.name for p in SCRIPTS])
def test_every_kbt_name_a_script_imports_exists(script: str) -> None:
    for module, name in _kbt_imports(script):
        loaded = importlib.import_module(module)
        if not hasattr(loaded, name):
            importlib.import_module(f"{module}.{name}")  # a submodule; raises when it is neither


def test_the_scripts_are_found() -> None:
    assert len(SCRIPTS) > 10 and any(_kbt_imports(p.name) for p in SCRIPTS)
