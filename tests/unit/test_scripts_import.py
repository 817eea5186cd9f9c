"""Every name a script in scripts/ or a benchmark in bench/ imports from kbt exists: a module moved
or a function renamed once left `make bench-driver` failing at its first line (bench/ is under mypy
now, scripts/ too; this also runs where mypy does not)."""

from __future__ import annotations

import ast
import importlib

import pytest

from tuner.core.paths import repo_root

SCRIPTS = sorted(
    p.relative_to(repo_root()) for folder in ("scripts", "bench") for p in (repo_root() / folder).glob("*.py")
)


def _kbt_imports(path: object) -> list[tuple[str, str]]:
    tree = ast.parse((repo_root() / str(path)).read_text(encoding="utf-8"))
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tuner"
        for alias in node.names
    ]


@pytest.mark.parametrize("script", [str(p) for p in SCRIPTS])
def test_every_kbt_name_a_script_imports_exists(script: str) -> None:
    for module, name in _kbt_imports(script):
        loaded = importlib.import_module(module)
        if not hasattr(loaded, name):
            importlib.import_module(f"{module}.{name}")  # a submodule; raises when it is neither


def test_the_scripts_are_found() -> None:
    assert len(SCRIPTS) > 10 and any(_kbt_imports(p) for p in SCRIPTS)
