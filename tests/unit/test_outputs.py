"""Outputs declared once (tuner/cli/outputs.py) and judged together before a command runs
(tuner/core/writes.py): one file for two flags, two on stdout, a directory for a file, a dangling
link or an unwritable path is exit 2 naming the flag, before anything is written; '-' is stdout
for every output; a link is written through to its file. Generated paths, not a list of cases."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.main import get_command

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.cli.app import _register, app, main
from tuner.cli.outputs import OUTPUTS
from tuner.core.errors import BadInput
from tuner.core.writes import Output, atomic_write, atomic_write_all, check_outputs

# option names that look like an output: each one a command has must be declared in OUTPUTS
OUTPUT_LIKE = ("--json", "--out", "--save-model", "--markdown", "--plot", "--png-dir")


def _commands() -> dict[str, Any]:
    _register()
    found: dict[str, Any] = {}

    def walk(cmd: Any, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs is None:
            found[" ".join(path)] = cmd
        for name, sub in (subs or {}).items():
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return found


def test_every_output_flag_of_every_command_is_declared() -> None:
    commands = _commands()
    for path, cmd in commands.items():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        looks = {o for o in opts if o in OUTPUT_LIKE}
        assert looks <= set(OUTPUTS.get(path, {})), (
            f"kbt {path}: declare {sorted(looks)} in tuner/cli/outputs.py"
        )
    for path, flags in OUTPUTS.items():
        assert path in commands, path
        opts = {o for p in commands[path].params for o in getattr(p, "opts", [])}
        assert set(flags) <= opts, (path, set(flags) - opts)


NAMES = st.sampled_from(["a.json", "b.json", "out", "m.json", "sub/c.json"])
FLAGS = ("--json", "--save-model", "--markdown")


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.one_of(NAMES, st.just("-"), NAMES.map(lambda n: n + "/")), min_size=2, max_size=3))
def test_outputs_are_refused_together_or_accepted(names: list[str], tmp_path_factory: Any) -> None:
    root = tmp_path_factory.mktemp("outs")
    outputs = [
        Output(flag, f"{root}/{n}" if n != "-" else "-") for flag, n in zip(FLAGS, names, strict=False)
    ]
    files = [n for n in names if n != "-"]
    bad = names.count("-") > 1 or any(n.endswith("/") for n in files) or len(set(files)) < len(files)
    if bad:
        with pytest.raises(BadInput) as exc:
            check_outputs(outputs)
        assert exc.value.message.startswith(FLAGS)  # the line names a flag
    else:
        check_outputs(outputs)
    assert sorted(p.name for p in root.iterdir()) == []  # judged, nothing written


def test_a_link_is_written_through_and_a_dangling_one_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    atomic_write(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    atomic_write_all({link: "newer"})
    assert link.is_symlink() and real.read_text() == "newer"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "missing" / "x.json")
    with pytest.raises(BadInput, match=r"^--out .*symbolic link"):
        check_outputs([Output("--out", str(dangling))])
    with pytest.raises(BadInput):
        atomic_write(dangling, "x")
    assert not (tmp_path / "missing").exists()


def test_a_link_and_its_file_are_one_output(tmp_path: Path) -> None:
    real = tmp_path / "m.json"
    real.write_text("{}")
    (tmp_path / "link.json").symlink_to(real)
    with pytest.raises(BadInput, match="one file for two outputs"):
        check_outputs([Output("--save-model", str(real)), Output("--json", str(tmp_path / "link.json"))])


def test_dash_is_stdout_for_every_writer(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    atomic_write("-", "text\n")
    atomic_write_all({Path("-"): b"bytes\n", tmp_path / "f": "file"})
    out, _ = capsysbinary.readouterr()
    assert out == b"text\nbytes\n" and (tmp_path / "f").read_text() == "file"
    assert not Path("-").exists()


def test_a_command_refuses_two_outputs_at_one_path_before_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["forecast", "--results", "no-such-dir", "--save-model", "m.json", "--json", "m.json"])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2
    assert (
        err
        == "kbt: error: --save-model m.json and --json m.json: one file for two outputs; give each its own\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["check", "filebeat", "in.yml", "--json", "in.yml"],
        ["check", "librdkafka", "in.yml", "--json", "./link.yml"],
        ["probe", "compression", "in.yml", "--markdown", "in.yml"],
        ["forecast", "--diagnosis", "in.yml", "--cost-model", "in.yml", "--save-model", "in.yml"],
        ["report", "--results", ".", "--recommendation", "in.yml", "--out", "link.yml"],
        [
            "compare",
            "--before",
            "0",
            "--prometheus",
            "http://127.0.0.1:9",
            "--request-log",
            "in.yml",
            "--json",
            "in.yml",
        ],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_an_output_at_an_input_file_is_refused_before_it_is_read(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `check filebeat f.yml --json f.yml` replaced the user's config with the check's JSON
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.yml").write_text("mine\n")
    (tmp_path / "link.yml").symlink_to("in.yml")
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.endswith(": is an input of this command too; give the output its own path\n"), err
    assert (tmp_path / "in.yml").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", "link.yml"]


@pytest.mark.parametrize(
    ("png_dir", "said"),
    [
        ("-", "--png-dir -: names a directory, which cannot be stdout"),  # it made a directory "-"
        ("r.html", "--out r.html and --png-dir r.html: one path for two outputs; give each its own"),
    ],
)
def test_a_directory_output_is_judged_with_the_files(
    png_dir: str,
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--results", "no-such-dir", "--out", "r.html", "--png-dir", png_dir])
    assert exit_info.value.code == 2 and capsys.readouterr().err == f"kbt: error: {said}\n"
    assert list(tmp_path.iterdir()) == []


def _kbt(args: list[str], **streams: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tuner", *args], text=True, timeout=SUBPROCESS_CAP_S, **streams
    )


@pytest.mark.parametrize(
    "args", [["--help"], ["--version"], ["lab", "status", "--lab-dir", "/nonexistent/lab"]]
)
def test_a_full_stdout_is_one_line_and_exit_4(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        out = _kbt(args, stdout=full, stderr=subprocess.PIPE)
    assert out.returncode == 4, out.stderr
    assert out.stderr == "kbt: error: cannot write to stdout: No space left on device\n"


def test_a_closed_stdout_or_stderr_is_no_traceback() -> None:
    closed_out = _kbt(["--help"], stdout=None, stderr=subprocess.PIPE, pass_fds=(), close_fds=True,
                      preexec_fn=lambda: os.close(1))  # fmt: skip
    assert closed_out.returncode == 4
    assert closed_out.stderr == "kbt: error: cannot write to stdout: stdout is closed\n"
    closed_err = _kbt(["lab"], stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2))
    assert closed_err.returncode == 2 and closed_err.stdout == ""  # the usage went nowhere, quietly
