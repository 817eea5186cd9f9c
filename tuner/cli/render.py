"""`kbt render ...`: write generated client configuration files."""

from __future__ import annotations

from pathlib import Path

import typer

from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root
from tuner.core.writes import atomic_write

app = typer.Typer(help="Write generated client configuration files.", no_args_is_help=True)


@app.command()
def filebeat(
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Directory for the Filebeat profiles (default: filebeat-profiles/ in the checkout).",
    ),
    check: bool = typer.Option(
        False, "--check", help="Write nothing; exit 1 when a file is missing or stale."
    ),
) -> None:
    """Render the Filebeat profiles and their load-test twins from their definitions.

    Render filebeat-profiles/*.yml (Filebeat output.kafka + queue.mem fragments) and their
    loadtests/profiles/filebeat-*.yaml twins from the profile definitions, each checked by the schema."""
    from tuner.render.filebeat_profiles import PROFILE_DIR, render_all
    from tuner.spec.filebeat_load import load_filebeat

    root = repo_root()
    stale: list[str] = []
    for rel, content in sorted(render_all().items()):
        path = root / rel
        if out is not None:
            if not rel.startswith(PROFILE_DIR + "/"):
                continue
            path = out / Path(rel).name
        if check:
            if _current(path) != content:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if _current(path) != content:
            atomic_write(path, content, "rendered file")
            typer.echo(f"wrote {path}")
        if path.suffix == ".yml":
            load_filebeat(path)  # the schema's one-line BadInput if a definition is wrong
    if stale:
        for name in stale:
            typer.echo(f"stale: {name} (run 'kbt render filebeat')", err=True)
        raise typer.Exit(int(ExitStatus.FAILURE))


def _current(path: Path) -> str | None:
    """A rendered file's text through the bounded reader, or None when there is none to compare."""
    from tuner.core.errors import BadInput
    from tuner.core.inputs import read_text

    try:
        return read_text(path, "rendered file") if path.is_file() else None
    except BadInput:
        return None
