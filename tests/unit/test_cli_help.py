"""The terminal help is one line per command and per flag; docs/cli.md keeps the details."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from typer.main import get_command

from tuner.cli.app import _register, app
from tuner.cli.help_shape import first_sentence, full_help, shape, split_doc


def _tree() -> list[tuple[str, Any]]:
    _register()
    out: list[tuple[str, Any]] = []

    def walk(cmd: Any, path: str) -> None:
        out.append((path, cmd))
        for name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
            walk(sub, f"{path} {name}")

    walk(shape(get_command(app)), "kbt")
    return out


def test_every_command_and_flag_has_one_line_help() -> None:
    for path, cmd in _tree():
        assert cmd.help and "\n" not in cmd.help, path
        assert len(cmd.help) <= 100, f"{path}: {cmd.help!r}"
        for param in cmd.params:
            if param.param_type_name == "option":
                assert param.help, f"{path} {param.opts} has no help"
                assert len(param.help) <= 100, f"{path} {param.opts}: {param.help!r}"
                assert full_help(param).startswith(param.help.rstrip(".")), (path, param.opts)


def test_help_shows_flags_without_a_value_placeholder() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tuner", "sweep", "--help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "--resume" in out.stdout and "--dry-run" in out.stdout
    assert "<bool>" not in out.stdout
    assert "<path>" in out.stdout  # flags that take a value keep theirs


def test_first_sentence_skips_abbreviations_and_parentheses() -> None:
    assert first_sentence("Spec, e.g. a.yaml. More.") == "Spec, e.g. a.yaml."
    assert first_sentence("A (x; y) b: c") == "A (x; y) b"
    assert split_doc("Short.\n\n    Long details\n    here.").details == "Long details here."
