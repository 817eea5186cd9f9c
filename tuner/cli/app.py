"""The `kbt` command: a thin typer app. Each sub-module registers one stage's commands.

Errors: any KbtError becomes one line on stderr and its ExitStatus; usage errors exit 2;
Ctrl-C exits 130. No traceback reaches the user unless KBT_DEBUG=1.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from functools import cache
from typing import Any

import rich.console
import typer

try:  # typer >= 0.20 vendors click
    from typer._click import exceptions as click_exc
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as click_exc  # type: ignore[no-redef]

from tuner.cli import flags, signals
from tuner.cli.streams import flush_stdout, guard, say, silence
from tuner.core.client_log import command_log, kept_in, summary
from tuner.core.errors import ExitStatus, KbtError
from tuner.core.redact import scrub
from tuner.core.text import OutputGate, one_line

app = typer.Typer(
    name="kbt",
    help="kafka-batch-tuner: measure and tune Kafka producer batching against broker network-thread"
    " pressure.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    epilog="Each command's details: docs/cli.md.",
)


def _version(value: bool) -> None:
    if value:
        from tuner.cli.components import component_lines

        for line in component_lines():
            typer.echo(line)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print the versions of kbt and the components it runs.",
    ),
) -> None:
    """kafka-batch-tuner."""


@cache  # once per process: typer appends, so a second call would list every command twice
def _register() -> None:
    from tuner.cli import (
        capture,
        chaos,
        check,
        compare,
        diagnose,
        forecast,
        lab,
        probe,
        recommend,
        render,
        report,
        stress,
        stress_worker,
        sweep,
        target,
    )

    # In the order the pipeline runs (help lists the commands, then the groups): each command is
    # named by its function, each group by its module.
    commands = (
        sweep.sweep,
        chaos.chaos,
        stress.stress,
        stress_worker.stress_worker,
        recommend.recommend,
        report.report,
        diagnose.diagnose,
        capture.capture,
        compare.compare,
        forecast.forecast,
    )
    for command in commands:
        app.command(name=command.__name__.replace("_", "-"))(command)
    for group in (lab, check, render, probe, target):
        app.add_typer(group.app, name=group.__name__.rsplit(".", 1)[-1])


def fail(message: str, status: ExitStatus) -> None:
    say(f"kbt: error: {one_line(scrub(message))}\n")
    sys.exit(int(status))


def os_error(exc: OSError) -> tuple[str, ExitStatus]:
    """The line and exit code of an OSError no module turned into a KbtError: its words and file, or,
    with none, what kind it was. A bare TimeoutError (a future's result, a socket's wait) said
    "kbt: error: " and nothing, exit 4: it is a wait that got no answer."""
    if isinstance(exc, TimeoutError) and not str(exc):
        return "timed out waiting for an answer", ExitStatus.UNREACHABLE
    if exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}", ExitStatus.ENVIRONMENT
    return str(exc) or type(exc).__name__, ExitStatus.ENVIRONMENT


def _debug_traceback() -> None:
    """KBT_DEBUG=1: the traceback, through the same scrubber as every other output (a secret in
    an exception's message or a URL in a frame is [redacted] there too)."""
    if os.environ.get("KBT_DEBUG") == "1":
        sys.stderr.write(scrub(traceback.format_exc()))


def _broken_pipe() -> None:
    """The reader of stdout went away (`kbt ... | head -c1`): nothing more to say to it. Exit 141
    (128 + SIGPIPE, what a shell reports for a writer killed by the signal), never 1, which means a
    failed run; stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    silence("stdout")
    os._exit(int(ExitStatus.BROKEN_PIPE))


def _gate_output() -> None:
    guard()  # a full disk or a closed descriptor: one line, not the interpreter's exit 120
    if os.environ.get("KBT_DEBUG") != "1":
        # a library's warning is lines of its own naming its source file (matplotlib's "constrained_layout
        # not applied" on a hostile series file): never the one-line contract's
        warnings.simplefilter("ignore")
    # The one way out for text: every write to stdout/stderr passes the control-character gate.
    sys.stdout = OutputGate(sys.stdout)
    sys.stderr = OutputGate(sys.stderr)
    # rich's documented hook for EPIPE (its default raises SystemExit(1), a failed run's code)
    rich.console.Console.on_broken_pipe = lambda self: _broken_pipe()  # type: ignore[method-assign]


def _run(command: Any, argv: list[str] | None) -> Any:
    log = command_log()  # librdkafka's lines outside a run (a run keeps its own beside its record)
    try:
        with kept_in(log):
            return command.main(args=argv, prog_name="kbt", standalone_mode=False)
    finally:
        if (logged := summary(log)) is not None:
            say(logged + "\n")
        flush_stdout()  # a full disk is seen here, as one line, not at the interpreter's exit


def main(argv: list[str] | None = None) -> None:
    flags.install()
    signals.install()
    _gate_output()
    try:
        _register()  # inside: a Ctrl-C while the commands import is one line too
        from typer.main import get_command

        from tuner.cli.help_shape import shape
        from tuner.cli.outputs import install

        command = install(shape(get_command(app)))
        if not sys.stdout.isatty():
            from tuner.cli.help_shape import plain_help

            plain_help(command)
        code = _run(command, argv)
        if code == ExitStatus.INTERRUPTED:  # typer turns a KeyboardInterrupt into a silent Exit(130)
            raise KeyboardInterrupt
        if isinstance(code, int) and code != 0:  # typer.Exit(n) is returned, not raised, here
            sys.exit(code)
    except BrokenPipeError:
        _broken_pipe()
    except SystemExit as exc:
        # click turns EPIPE into exit 1 after wrapping stdout in its PacifyFlushWrapper
        if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _broken_pipe()
        raise
    except KbtError as exc:
        _debug_traceback()
        fail(exc.message, exc.status)
    except click_exc.NoArgsIsHelpError as exc:
        # `kbt lab` names a group, not a command: its help, as a usage error (stderr, exit 2), so a
        # script that forgot the subcommand does not pass
        sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
        sys.exit(int(ExitStatus.BAD_INPUT))
    except click_exc.UsageError as exc:
        ctx = exc.ctx
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        fail(f"{exc.format_message()}{hint}", ExitStatus.BAD_INPUT)
    except (typer.Abort, KeyboardInterrupt):
        signals.quiet()
        fail("interrupted", ExitStatus.INTERRUPTED)
    except typer.Exit as exc:
        if exc.exit_code == ExitStatus.INTERRUPTED:
            signals.quiet()
            fail("interrupted", ExitStatus.INTERRUPTED)
        sys.exit(exc.exit_code)
    except click_exc.ClickException as exc:
        fail(exc.format_message(), ExitStatus.BAD_INPUT)
    except OSError as exc:
        _debug_traceback()
        fail(*os_error(exc))
    sys.exit(int(ExitStatus.OK))
