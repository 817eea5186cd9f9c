"""The CLI stays thin: no function in tuner/cli/ is longer than 60 lines (signature and docstring
included). Preflight belongs in tuner/runner/, dry-run and report text in tuner/render/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "tuner" / "cli"
MAX_LINES = 60


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in `source` longer than `limit` lines."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_no_cli_function_is_longer_than_60_lines(path: Path) -> None:
    found = long_functions(path.read_text())
    assert found == [], f"{path.name}: {found}: move preflight to tuner/runner, text to tuner/render"


def test_the_walk_finds_a_long_function_and_a_nested_one() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))  # 61 lines with the def
    nested = "class C:\n    def m(self) -> None:\n" + "\n".join(
        f"        y{i} = {i}" for i in range(MAX_LINES)
    )
    short = "def g() -> None:\n" + "\n".join(f"    z{i} = {i}" for i in range(MAX_LINES - 1))
    assert long_functions(f"def f() -> None:\n{body}\n") == [("f", MAX_LINES + 1)]
    assert long_functions(nested) == [("m", MAX_LINES + 1)]
    assert long_functions(short) == []
