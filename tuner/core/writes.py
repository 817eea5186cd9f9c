"""The one atomic writer: every file kbt writes (run records, probe records, recommendation.json,
--json/--plot outputs, rendered profiles, lab state) goes through here.

- only a regular file or a new path is written: a device (`--json /dev/full` run as root would
  replace the device node), a FIFO, a directory or a socket is refused with one line;
- a parent that is not a directory is named as such (not "File exists");
- the bytes go to a temporary file beside the target, fsync'd, then renamed over it (or linked,
  when an existing file must not be replaced): a reader sees the old file or the new one, and a
  failed write leaves nothing behind;
- several files written together (`atomic_write_all`) are all checked and staged first, then
  renamed into place: a failure part-way leaves none of them, and a rename that fails after others
  succeeded puts the replaced files back (each was kept as a hard link until the last rename);
- JSON is written with finite numbers only (a non-finite float becomes null: JSON has no NaN);
- `-` is stdout, for every output: the files of a batch are placed first, then stdout gets its
  text; a symbolic link is written through to the file it names (the link stays), and one that
  names nothing is refused;
- a command's outputs are judged together before it reads or writes anything (`check_outputs`):
  two at one file, two on stdout, an output at one of the command's input files, a file path
  ending in '/', a dangling link or a path that cannot be written are exit 2 with a line naming
  the flag.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tuner.core.errors import BadInput, EnvironmentProblem, ExitStatus
from tuner.core.inputs import file_kind, is_file, shown_path

STDOUT = "-"
_stdout: list[bool] = [False]  # claimed by a declared output of this process's command


def is_stdout(path: Path | str | None) -> bool:
    return path is not None and str(path) == STDOUT


def stdout_claimed() -> bool:
    """Does an output of this command go to stdout? Its human output then goes to stderr."""
    return _stdout[0]


def through(path: Path) -> Path:
    """`path`, or the file a symbolic link at `path` names (writes go through a link, never replace
    it). BadInput for a link that names nothing or loops."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        target = os.readlink(path)
        raise BadInput(
            f"{shown_path(path)}: a symbolic link to {shown_path(target)}, which does not exist (kbt writes"
            " through a link to its file)"
        ) from None


@dataclass(frozen=True)
class Output:
    """One output flag of a command as given: its flag, its value as typed (a trailing '/' is
    gone once it is a Path), and whether it names a file or a directory."""

    flag: str
    value: str | None
    kind: Literal["file", "directory"] = "file"


def check_outputs(outputs: Sequence[Output], inputs: Sequence[Path] = ()) -> None:
    """Judge a command's outputs together before it does anything: BadInput (exit 2) naming the
    flag for two outputs on stdout or at one file, an output at one of the files in `inputs` (it
    would replace what the command reads: `check filebeat f.yml --json f.yml`), a directory given
    for a file ('out/', or an existing directory), a dangling link, or a path that cannot be
    written. Marks stdout claimed."""
    on_stdout = [o for o in outputs if o.value is not None and is_stdout(o.value)]
    if len(on_stdout) > 1:
        flags = " and ".join(f"{o.flag} -" for o in on_stdout)
        raise BadInput(f"{flags}: both to stdout; give one of them a file")
    read = {os.path.realpath(p) for p in inputs if is_file(p)}
    seen: dict[str, Output] = {}
    for out in outputs:
        if out.value is None or is_stdout(out.value):
            continue
        if out.kind == "directory":
            _judged_directory(out)  # its files are checked again where they are written
            real = os.path.realpath(out.value)
        else:
            real = _judged(out)
        if real in read:
            raise BadInput(
                f"{out.flag} {shown_path(out.value or '')}: is an input of this command too; give the"
                " output its own path"
            )
        other = seen.get(real)
        if other is not None:
            what = "path" if "directory" in (out.kind, other.kind) else "file"
            raise BadInput(
                f"{other.flag} {shown_path(other.value or '')} and {out.flag} {shown_path(out.value)}:"
                f" one {what} for two outputs; give each its own"
            )
        seen[real] = out
    for out in on_stdout:
        if out.kind == "directory":
            raise BadInput(f"{out.flag} -: names a directory, which cannot be stdout")
    _stdout[0] = bool(on_stdout)


def _judged(out: Output) -> str:
    """The real path an output file will be written at; BadInput naming its flag when it cannot."""
    value = out.value or ""
    if value.endswith(("/", os.sep)) or value in (".", ".."):
        raise BadInput(f"{out.flag} {shown_path(value)}: names a directory; give a file path")
    path = Path(value)
    try:
        target = through(path)
        if target.is_dir():
            raise BadInput(f"{shown_path(value)}: is a directory; give a file path")
        check_target(target)
    except (BadInput, EnvironmentProblem) as exc:
        raise BadInput(f"{out.flag} {exc.message}", ExitStatus.BAD_INPUT) from None
    return os.path.realpath(target)


def _judged_directory(out: Output) -> None:
    """BadInput naming the flag when a directory output is a file, or sits under one."""
    path = Path(out.value or "")
    for candidate in (path, *path.absolute().parents):
        try:
            st = os.stat(through(candidate) if candidate == path else candidate)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise BadInput(f"{out.flag} {shown_path(path)}: {exc.strerror or exc}") from None
        if not stat.S_ISDIR(st.st_mode):
            where = "is" if candidate == path else f"is under {shown_path(candidate)}, which is"
            raise BadInput(f"{out.flag} {shown_path(path)}: {where} not a directory")
        return


def _to_stdout(data: str | bytes) -> None:
    if isinstance(data, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(data)
        sys.stdout.flush()


def check_target(path: Path | str, what: str = "file") -> None:
    """Raise BadInput unless `path` is a regular file or a new path whose nearest existing
    ancestor is a directory."""
    path = Path(path)
    for candidate in (path, *path.absolute().parents):  # the path, else its nearest existing ancestor
        try:
            st = os.stat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise EnvironmentProblem(f"cannot write {shown_path(path)}: {exc.strerror or exc}") from None
        if candidate is path and not stat.S_ISREG(st.st_mode):
            raise BadInput(
                f"{shown_path(path)}: is {file_kind(st.st_mode)}; kbt writes a {what} only to a regular file"
                " or a new path"
            )
        if candidate is not path and not stat.S_ISDIR(st.st_mode):
            raise BadInput(f"{shown_path(path)}: {shown_path(candidate)} is not a directory")
        return


def atomic_write(path: Path | str, data: str | bytes, what: str = "file", *, replace: bool = True) -> Path:
    """Write `data` to `path` atomically. `replace=False`: fail if `path` exists (FileExistsError
    passes through for the caller to word)."""
    if is_stdout(path):
        _to_stdout(data)
        return Path(STDOUT)
    path = through(Path(path))
    check_target(path, what)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _stage(path, data)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if the target exists
            os.unlink(tmp)
        tmp = None
    except FileExistsError:
        raise
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write {shown_path(path)}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return path


def _stage(path: Path, data: str | bytes) -> str:
    """`data` in a new temporary file beside `path`, fsync'd, with the permissions `path` will
    have; returns its name (the caller renames it into place or removes it)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _make_dirs(directory: Path) -> list[Path]:
    """mkdir -p, returning the directories it created, outermost first."""
    missing = [d for d in (directory, *directory.parents) if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))


def atomic_write_all(files: Mapping[Path, str | bytes], what: str = "file") -> list[Path]:
    """Several files, all or nothing (a render or a report that writes more than one file): every
    target is checked before anything is written, every file is staged beside its target, and only
    when all are staged are they renamed into place. A failure before that leaves no new file and
    no directory it made."""
    printed = [data for path, data in files.items() if is_stdout(path)]
    targets = [(through(Path(path)), data) for path, data in files.items() if not is_stdout(path)]
    for path, _ in targets:
        check_target(path, what)
    made: list[Path] = []
    staged: list[tuple[str, Path]] = []
    kept: dict[Path, str] = {}  # target -> a hard link to the file it replaces, for the undo
    placed: list[Path] = []
    done = False
    current = targets[0][0] if targets else Path()
    try:
        for current, data in targets:
            made += _make_dirs(current.parent)
            staged.append((_stage(current, data), current))
        for _, current in staged:
            if current.exists():
                kept[current] = _keep(current)
        for tmp, current in staged:
            os.replace(tmp, current)
            placed.append(current)
        done = True
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write {shown_path(current)}: {exc.strerror or exc}") from None
    finally:
        if not done:
            _undo(placed, kept)
            for tmp, _ in staged:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            for directory in reversed(made):
                with contextlib.suppress(OSError):
                    directory.rmdir()
        for link in kept.values():  # after the undo used them, or once all are in place
            with contextlib.suppress(OSError):
                os.unlink(link)
    for data in printed:  # stdout last: what it shows is in place
        _to_stdout(data)
    return [path for path, _ in targets]


def _keep(path: Path) -> str:
    """A hard link to the file at `path` under a fresh name beside it (no bytes copied), so a
    rename that fails after this one can put the old file back."""
    for attempt in range(100):
        link = str(path.parent / f".{path.name[:40]}.{os.getpid()}.{attempt}.old")
        try:
            os.link(path, link)
            return link
        except FileExistsError:
            continue
    raise FileExistsError(path)


def _undo(placed: list[Path], kept: Mapping[Path, str]) -> None:
    """Put back what the renames so far replaced, and remove the files they created: a failure
    part-way through the renames leaves every target as it was."""
    for path in reversed(placed):
        with contextlib.suppress(OSError):
            if path in kept:
                os.replace(kept[path], path)
            else:
                os.unlink(path)


def finite(value: Any) -> Any:
    """A copy of JSON-like data with every non-finite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def json_text(data: Any, indent: int | None = 2) -> str:
    return json.dumps(finite(data), indent=indent, allow_nan=False) + "\n"


def atomic_write_json(path: Path | str, data: Any, what: str = "file", **kwargs: Any) -> Path:
    return atomic_write(path, json_text(data), what, **kwargs)
