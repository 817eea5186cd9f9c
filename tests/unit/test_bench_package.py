"""The benchmarks in bench/ (issue 40): each imports, answers `python -m bench.<name> --help` (run as
`-m` runs it, in this process: no lab, no network) with what it measures and the docs/benchmarks.md
section it feeds, and bench/README.md lists every one with its command. tuner never imports bench."""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import runpy
import sys

import pytest

from tuner.core.paths import repo_root

BENCH = repo_root() / "bench"
MODULES = sorted(p.stem for p in BENCH.glob("*.py") if not p.stem.startswith("_"))


def test_the_benchmarks_are_found() -> None:
    assert len(MODULES) >= 20 and "pressure" in MODULES and "truth" in MODULES


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.filterwarnings("ignore:.*found in sys.modules after import of package:RuntimeWarning")
def test_a_benchmark_answers_help(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    importlib.import_module(f"bench.{name}")
    monkeypatch.setattr(sys, "argv", [str(BENCH / f"{name}.py"), "--help"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        runpy.run_module(f"bench.{name}", run_name="__main__", alter_sys=True)
    assert exit_.value.code in (0, None)
    text = out.getvalue()
    assert f"python -m bench.{name}" in text  # the usage line names the command
    assert "Feeds docs/benchmarks.md: " in text


@pytest.mark.parametrize("name", MODULES)
def test_the_readme_lists_every_benchmark(name: str) -> None:
    assert f"python -m bench.{name}" in (BENCH / "README.md").read_text(encoding="utf-8")


def test_tuner_never_imports_bench() -> None:
    for path in (repo_root() / "tuner").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            assert not any(n == "bench" or n.startswith("bench.") for n in names), path
