"""Flags defined once: a long option two commands take has one definition (tuner/cli/options.py).

Two commands whose help text or default for one long option differ fail here unless each form is
a role of that option in the one table; a command that declares such an option with its own
typer.Option fails too, even with the same words, so a copy cannot come back and drift later.
"""

from __future__ import annotations

import ast
import re
import typing
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command

from tuner.cli.app import _register, app, main
from tuner.cli.options import FLAGS, REQUIRED, Flag, option

CLI = Path(__file__).resolve().parents[2] / "tuner" / "cli"


def _leaves(root: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def walk(cmd: Any, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        elif path:
            found[" ".join(path)] = cmd

    walk(root, [])
    return found


def _matches(flag: Flag, name: str, param: Any) -> bool:
    pattern = re.escape(flag.help).replace(re.escape("{what}"), ".+")
    if not re.fullmatch(pattern, param.help or ""):
        return False
    if flag.default is REQUIRED:
        default_ok = bool(param.required)
    else:
        default_ok = not param.required and param.default == flag.default
    return default_ok and param.metavar == flag.metavar and set(param.opts) == {name, *flag.aliases}


def _problems(root: Any) -> list[str]:
    """Each long option taken by two or more commands, checked against its one definition."""
    uses: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    for path, cmd in _leaves(root).items():
        for param in cmd.params:
            for name in getattr(param, "opts", []):
                if name.startswith("--"):
                    uses[name].append((path, param))
    problems = []
    for name, taken in sorted(uses.items()):
        if len(taken) < 2:
            continue
        roles = FLAGS.get(name)
        if roles is None:
            forms = {(p.help, repr(p.default)) for _, p in taken}
            if len(forms) > 1:
                commands = ", ".join(path for path, _ in taken)
                problems.append(f"{name}: {commands} differ in help or default and it has no definition")
            else:
                commands = ", ".join(path for path, _ in taken)
                problems.append(f"{name}: taken by {commands}; define it once in tuner/cli/options.py")
            continue
        for path, param in taken:
            if not any(_matches(flag, name, param) for flag in roles.values()):
                problems.append(
                    f"{name} of `{path}`: help {param.help!r}, default {param.default!r}: none of its roles"
                )
    return problems


def test_every_option_two_commands_take_is_its_one_definition() -> None:
    _register()
    assert _problems(get_command(app)) == []


def test_two_commands_with_one_option_worded_differently_fail() -> None:
    # The check itself can fail: a repeat that drifted, and a repeat of a name with no definition.
    bad = typer.Typer()

    @bad.command()
    def one(
        json_path: Path | None = option("--json", what="one thing"),
        colour: str = typer.Option("red", "--colour", help="Colour."),
    ) -> None: ...

    @bad.command()
    def two(
        json_path: Path | None = typer.Option(None, "--json", help="Write JSON here."),
        colour: str = typer.Option("blue", "--colour", help="Colour."),
    ) -> None: ...

    problems = _problems(get_command(bad))
    assert any(p.startswith("--json of `two`") for p in problems), problems
    assert any(p.startswith("--colour: one, two differ") for p in problems), problems
    assert not any(p.startswith("--json of `one`") for p in problems), problems


def _own_declarations(source: str) -> list[tuple[int, str]]:
    """typer.Option calls naming an option of the table: each a second home."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("typer.Option", "Option"):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and arg.value in FLAGS:
                    found.append((node.lineno, arg.value))
    return found


def test_no_command_declares_an_option_of_the_table_itself() -> None:
    seen = []
    for path in sorted(CLI.glob("*.py")):
        if path.name != "options.py":
            seen += [f"{path.name}:{line}: {name}" for line, name in _own_declarations(path.read_text())]
    assert seen == []
    assert _own_declarations('x = typer.Option(None, "--json", help="Write JSON here.")') == [(1, "--json")]


def test_every_role_of_the_table_is_taken_by_some_command() -> None:
    _register()
    leaves = _leaves(get_command(app))
    for name, roles in FLAGS.items():
        params = [p for cmd in leaves.values() for p in cmd.params if name in getattr(p, "opts", [])]
        for role, flag in roles.items():
            assert any(_matches(flag, name, p) for p in params), (
                f"{name} role {role!r} is taken by no command"
            )


@pytest.mark.parametrize(
    "command",
    [
        ["diagnose", "--prometheus", "http://127.0.0.1:9"],
        ["compare", "--before", "0", "--prometheus", "http://127.0.0.1:9"],
        ["capture", "--out", "captured"],
    ],
    ids=lambda argv: argv[0],
)
def test_one_option_is_checked_alike_on_every_command(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # --request-log: a compressed log, and one log given twice (its requests would count twice), are
    # refused before any cluster is asked, whichever command takes it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.log.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(16))
    (tmp_path / "r.log").write_text("[2026-01-01 00:00:00,000] DEBUG Completed request\n")
    for logs, said in (
        (["r.log.gz"], "kbt: error: r.log.gz: gzip-compressed data, not a request log: unpack it first"),
        (
            ["r.log", "./r.log"],
            "kbt: error: r.log: given twice as a request log: give each broker's log once",
        ),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main([*command, *(a for log in logs for a in ("--request-log", log))])
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.strip() == said
    assert not (tmp_path / "captured").exists()


def _takes(kind: type, annotation: Any) -> bool:
    return annotation is kind or any(_takes(kind, a) for a in typing.get_args(annotation))


def _flags_taking(kind: type) -> list[tuple[str, list[str], Any]]:
    """(command path, its long option or none (an argument), the parameter) of every parameter
    typed `kind` (or a list or optional of it), on every command."""
    _register()
    found = []
    for path, cmd in _leaves(get_command(app)).items():
        for param in cmd.params:
            described = getattr(param, "type_descriptor", None)
            if described is not None and _takes(kind, described.annotation):
                found.append((path, [o for o in param.opts if o.startswith("--")][:1], param))
    return found


def test_every_float_flag_says_nan_and_inf_before_its_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    # `--master-wait nan` said "must be less than or equal to 86400 (got nan)": the bound was met first
    flags = [(path, flag, param) for path, flag, param in _flags_taking(float) if flag]
    bounded = 0
    for path, flag, param in flags:
        bounded += param.min is not None or param.max is not None
        for value in ("nan", "inf", "-inf", "1e999"):
            with pytest.raises(SystemExit) as exit_info:
                main([*path.split(), *flag, value])
            said = capsys.readouterr().err
            assert exit_info.value.code == 2, (path, flag, said)
            assert said == (
                f"kbt: error: Invalid value for '{flag[0]}': '{value}' is not a finite number"
                f" (see 'kbt {path} --help')\n"
            ), said
    assert len(flags) >= 8 and bounded >= 4, (len(flags), bounded)


def test_every_whole_number_flag_says_a_fraction_is_not_a_whole_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `--workers 2.5` said "'2.5' is not a number"
    flags = [(path, flag) for path, flag, _ in _flags_taking(int) if flag]
    for path, flag in flags:
        with pytest.raises(SystemExit) as exit_info:
            main([*path.split(), *flag, "2.5"])
        said = capsys.readouterr().err
        assert exit_info.value.code == 2, (path, flag, said)
        assert said.startswith(f"kbt: error: Invalid value for '{flag[0]}'"), said  # then any alias
        assert said.endswith(f": '2.5' is not a whole number (see 'kbt {path} --help')\n"), said
    assert len(flags) >= 15, len(flags)


def test_every_path_flag_refuses_an_empty_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # '' is read as '.': `render filebeat --out ''` wrote over the working directory's README.md
    monkeypatch.chdir(tmp_path)
    checked = 0
    for path, flag, _ in _flags_taking(Path):
        with pytest.raises(SystemExit) as exit_info:
            main([*path.split(), *flag, ""])
        said = capsys.readouterr().err
        assert exit_info.value.code == 2, (path, said)
        assert "an empty path" in said and said.count("\n") == 1, (path, said)
        checked += 1
    assert checked > 50
    assert not any(tmp_path.iterdir())
