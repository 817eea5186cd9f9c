"""Every command's output flags, declared once, and judged together before the command runs.

A command that writes files names its output flags here. Before its body runs (so before it reads
an input, starts a lab or measures anything), `check` hands the values as typed to
tuner.core.writes.check_outputs: two outputs at one file (`--save-model m.json --json m.json`), an
output at one of the command's input files (`check filebeat f.yml --json f.yml`), two on stdout,
`--json out/`, a dangling symbolic link or a path that cannot be written is exit 2 with a line
naming the flag; `-` is stdout for every one of them (the human output then goes to stderr).
tests/unit/test_outputs.py holds every option named like an output to this table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from tuner.core.writes import Output, check_outputs

FILE: Literal["file"] = "file"
DIRECTORY: Literal["directory"] = "directory"

# command path (without "kbt") -> output flag -> what it names
OUTPUTS: dict[str, dict[str, Literal["file", "directory"]]] = {
    "capture": {"--out": DIRECTORY, "--json": FILE},
    "chaos": {"--json": FILE, "--markdown": FILE},
    "check filebeat": {"--json": FILE},
    "check java": {"--json": FILE},
    "check librdkafka": {"--json": FILE},
    "check otelcol": {"--json": FILE},
    "compare": {"--json": FILE},
    "diagnose": {"--json": FILE},
    "forecast": {"--json": FILE, "--save-model": FILE},
    "lab status": {"--json": FILE},
    "probe compression": {"--json": FILE, "--plot": FILE, "--markdown": FILE},
    "recommend": {"--json": FILE, "--out": DIRECTORY},
    "render filebeat": {"--out": DIRECTORY},
    "report": {"--json": FILE, "--out": FILE, "--png-dir": DIRECTORY},
    "stress": {"--json": FILE},
    "sweep": {"--json": FILE},
    "target check": {"--json": FILE},
    "target health": {"--json": FILE},
}


def _flags(ctx: Any) -> dict[str, Literal["file", "directory"]]:
    return OUTPUTS.get(" ".join(ctx.command_path.split()[1:]), {})


def declared(ctx: Any) -> list[Output]:
    """The outputs of the command `ctx` runs, with their values as typed."""
    flags = _flags(ctx)
    raw = ctx.meta.get("kbt_raw", {})
    found: list[Output] = []
    for param in ctx.command.params:
        kind = next((flags[o] for o in param.opts if o in flags), None)
        if kind is None:
            continue
        value = raw.get(param.name, ctx.params.get(param.name))
        if value is not None and not isinstance(value, str):
            value = str(value)
        flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        found.append(Output(flag, value, kind))
    return found


def inputs(ctx: Any) -> list[Path]:
    """The paths the command's other flags and arguments name: what an output must not replace."""
    outputs = _flags(ctx)
    values = [ctx.params.get(p.name) for p in ctx.command.params if not any(o in outputs for o in p.opts)]
    return [
        item for v in values for item in (v if isinstance(v, list | tuple) else [v]) if isinstance(item, Path)
    ]


def install(cmd: Any) -> Any:
    """Wrap every command of the tree so its declared outputs are checked before it runs."""
    commands = getattr(cmd, "commands", None)
    if commands is not None:
        for sub in commands.values():
            install(sub)
        return cmd
    if getattr(cmd, "kbt_outputs", False):
        return cmd
    original = cmd.invoke

    def invoke(ctx: Any) -> Any:
        check_outputs(declared(ctx), inputs(ctx))
        return original(ctx)

    cmd.invoke = invoke
    cmd.kbt_outputs = True
    return cmd
