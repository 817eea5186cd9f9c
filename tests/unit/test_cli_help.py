"""The terminal help is one line per command and per flag; docs/cli.md keeps the details."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from typer.main import get_command

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.cli.app import _register, app, main
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


def test_every_command_has_a_one_line_summary_and_each_flag_its_first_sentence() -> None:
    for path, cmd in _tree():
        assert cmd.help and "\n" not in cmd.help, path
        assert len(cmd.help) <= 100, f"{path}: {cmd.help!r}"
        for param in cmd.params:
            if param.param_type_name == "option":
                assert param.help, f"{path} {param.opts} has no help"
                assert param.help == first_sentence(full_help(param)), (path, param.opts)


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`kbt ARGV` in this process, stdout a pipe (click's plain layout)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_help_in_a_pipe_fits_100_columns_and_keeps_defaults_whole(capsys: pytest.CaptureFixture[str]) -> None:
    for path, cmd in _tree():
        if getattr(cmd, "hidden", False):
            continue
        code, out, _ = _help([*path.split()[1:], "--help"], capsys)
        assert code == 0 and out, path
        lines = out.splitlines()
        assert max(len(line) for line in lines) <= 100, (path, max(lines, key=len))
        for line in lines:  # a default or a range is never cut across two lines
            assert not re.search(r"\[(default|required)\b[^\]]*$", line), (path, line)


def test_a_flag_keeps_its_default_after_a_colon(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _help(["recommend", "--help"], capsys)
    flat = " ".join(out.split())
    assert "else 0.7; 0 turns it off" in flat  # cut at the first ':' before


def test_help_states_the_exit_codes_the_command_documents(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _help(["diagnose", "--help"], capsys)
    assert "Exit 0 healthy, 10 warning, 11 critical" in " ".join(out.split())
    _, out, _ = _help(["recommend", "--help"], capsys)
    assert "Exits 3 when no setting meets the SLO." in " ".join(out.split())


@pytest.mark.parametrize("group", [[], ["lab"], ["check"], ["render"], ["probe"], ["target"]])
def test_a_group_without_a_command_prints_its_help_and_exits_2(
    group: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _help(group, capsys)
    assert code == 2
    assert out == "" and err.startswith(f"Usage: kbt {' '.join(group)}".rstrip() + " ")
    assert "Commands:" in err


def test_help_loads_no_heavy_library() -> None:
    """`kbt --help` and a command's --help answer at once: the libraries a command needs only when
    it runs (numpy, scipy, the Kafka client, HTTP, locust, plotting, templates) are not imported."""
    heavy = ["numpy", "scipy", "confluent_kafka", "requests", "prometheus_client", "matplotlib",
             "jinja2", "locust", "plotly", "asyncio"]  # fmt: skip
    probe = (
        "import sys\nfrom tuner.cli.app import main\n"
        "for argv in ([], ['sweep'], ['lab', 'up'], ['recommend'], ['forecast'], ['stress'], ['report']):\n"
        "    try:\n        main([*argv, '--help'])\n    except SystemExit:\n        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=SUBPROCESS_CAP_S
    )
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr[-2000:]


def test_help_shows_flags_without_a_value_placeholder() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tuner", "sweep", "--help"],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_CAP_S,
    )
    assert out.returncode == 0, out.stderr
    assert "--resume" in out.stdout and "--dry-run" in out.stdout
    assert "<bool>" not in out.stdout
    assert "<path>" in out.stdout  # flags that take a value keep theirs


def test_first_sentence_skips_abbreviations_and_parentheses() -> None:
    assert first_sentence("Spec, e.g. a.yaml. More.") == "Spec, e.g. a.yaml."
    assert first_sentence("A (x; y) b: c; d. E") == "A (x; y) b: c; d."  # ':' and ';' end none
    assert split_doc("Short.\n\n    Long details\n    here.").details == "Long details here."
