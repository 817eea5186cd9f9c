"""`--json PATH` ('-': stdout) on every command that reports, in one documented shape.

Each document is an object with the same envelope, `kbt` (the version of kbt that wrote it),
`schema_version` (this module's; raised when a field changes meaning or goes away, never for an
added field) and `command` (e.g. "lab status"), beside the command's own fields
(docs/cli.md#json-output). With `--json -` the human output moves to stderr, so stdout is exactly
one JSON document. A reader of a document kbt wrote (`forecast --diagnosis`) takes it with or
without the envelope (tuner.render.envelope `unwrap`, beside the envelope's fields).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rich.console import Console

from tuner import __version__
from tuner.core.redact import redact
from tuner.core.writes import atomic_write, is_stdout, json_text, stdout_claimed
from tuner.render.fit import PIPE_WIDTH

# 2: `kbt` is the version (it was the command, now `command`); diagnose's and forecast's documents
# carry the envelope; a dry run's topics are {name, partitions} and its runs name their client
SCHEMA_VERSION = 2


def console_for(path: Path | None) -> Console:
    """The human output's console: stderr when the JSON document takes stdout. Logs and pipes get
    `PIPE_WIDTH` columns: text wraps between words there, and tables print as plain lines that fit
    (tuner/render/plain.py)."""
    console = Console(stderr=is_stdout(path) or stdout_claimed())
    if not console.is_terminal:
        console.width = PIPE_WIDTH
    return console


def plain(value: Any) -> Any:
    """Dataclasses, pydantic models and paths as JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: plain(v) for k, v in dataclasses.asdict(value).items()}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def document(command: str, **fields: Any) -> dict[str, Any]:
    head = {"kbt": __version__, "schema_version": SCHEMA_VERSION, "command": command}
    return {**head, **{k: plain(v) for k, v in fields.items() if k not in head}}


def document_text(command: str, **fields: Any) -> str:
    """The document as written: secrets by policy, finite numbers only."""
    return json_text(redact(document(command, **fields)))


def write_json(path: Path | None, command: str, **fields: Any) -> None:
    if path is not None:  # '-': atomic_write prints it
        atomic_write(path, document_text(command, **fields), "JSON document")


def json_file(path: Path | None, text: str) -> dict[Path, str | bytes]:
    """`--json PATH` as one more file of a command's all-or-nothing batch (atomic_write_all prints
    '-' to stdout after the batch is in place)."""
    return {} if path is None else {path: text}
