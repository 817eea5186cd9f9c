"""`kbt render ...`: write generated client configuration files."""

from __future__ import annotations

from pathlib import Path

import typer

from tuner.cli.options import option
from tuner.core.errors import ExitStatus
from tuner.core.paths import repo_root
from tuner.core.writes import atomic_write_all

app = typer.Typer(help="Write generated client configuration files.", no_args_is_help=True)


@app.command()
def filebeat(
    out: Path | None = option("--out", "render"),
    check: bool = typer.Option(
        False, "--check", help="Write nothing; exit 1 when a file is missing or stale."
    ),
) -> None:
    """Render the Filebeat profiles and their load-test twins from their definitions.

    Render filebeat-profiles/*.yml (Filebeat output.kafka + queue.mem fragments) and their
    loadtests/profiles/filebeat-*.yaml twins from the profile definitions, each checked by the schema."""
    from tuner.render.filebeat_profiles import PROFILE_DIR, render_all

    root = repo_root()
    rendered: dict[Path, str] = {}
    for rel, content in sorted(render_all().items()):
        path = root / rel
        if out is not None:
            if not rel.startswith(PROFILE_DIR + "/"):
                continue
            path = out / Path(rel).name
        rendered[path] = content
    changed = {path: content for path, content in rendered.items() if _current(path) != content}
    if check:
        for path in changed:
            typer.echo(f"stale: {path} (run 'kbt render filebeat')", err=True)
        if changed:
            raise typer.Exit(int(ExitStatus.FAILURE))
        return
    _validate(rendered)  # every definition checked before any file is written
    atomic_write_all(changed, "rendered file")
    for path in changed:
        typer.echo(f"wrote {path}")
    if not changed:  # silence would read as "did nothing"
        typer.echo(f"{len(rendered)} files up to date")


def _validate(files: dict[Path, str]) -> None:
    """The schema's one-line BadInput if a rendered Filebeat profile is wrong, read from a scratch
    copy: nothing is written where the user asked until every file passes."""
    import tempfile

    from tuner.core.errors import BadInput
    from tuner.core.inputs import shown_path
    from tuner.spec.filebeat_load import load_filebeat

    with tempfile.TemporaryDirectory(prefix="kbt-render-") as scratch:
        for path, content in files.items():
            if path.suffix == ".yml":
                copy = Path(scratch) / path.name
                copy.write_text(content, encoding="utf-8")
                try:
                    load_filebeat(copy)
                except BadInput as exc:  # named as the file it would have been
                    raise BadInput(str(exc).replace(shown_path(copy), shown_path(path))) from None


def _current(path: Path) -> str | None:
    """A rendered file's text through the bounded reader, or None when there is none to compare."""
    from tuner.core.errors import BadInput
    from tuner.core.inputs import read_text

    try:
        return read_text(path, "rendered file") if path.is_file() else None
    except BadInput:
        return None
