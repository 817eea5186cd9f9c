"""The input boundary: every file kbt reads (specs, profiles, Filebeat profiles, records, probe
files, lab state, cost models) comes through here, so each bad file is one clear BadInput line.

- only regular files within a size cap: a directory, a FIFO (which would block), a device
  (/dev/zero would be read until memory runs out) or a socket is refused before it is read;
- text is UTF-8; a file with NUL bytes is called binary, other undecodable text is named as
  "not UTF-8" with the byte and line (Latin-1 text is not binary);
- YAML: nesting depth, values and alias expansion are counted on the parser's events *before*
  anything is built (an alias bomb or a 500-deep document never reaches the recursive composer),
  and a YAML file is at most 1 MiB (ruamel's pure-Python reading is slow: time stays bounded);
- JSON: NaN/Infinity and overflowing numbers rejected, nesting capped, RecursionError never escapes;
- every number in a parsed document is finite; the top level has the type the caller expects.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import warnings
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from tuner.core.errors import BadInput
from tuner.core.numbers import MAX_MAGNITUDE
from tuner.core.redact import register_input_secrets
from tuner.core.text import cut

MiB = 1 << 20
MAX_INPUT_BYTES = 64 * MiB  # specs, profiles, records, state: far below this
MAX_DEPTH = 64  # deepest nesting a spec, record or answer may have
MAX_NODES = 1_000_000  # nodes after alias expansion
# YAML is what people write (specs, profiles, targets, a team's Filebeat or collector config: a few
# KB) and ruamel reads it at tens of microseconds an event: a 64 MiB file, or 1 MiB of `[1,1,...]`,
# took minutes before any limit above was reached
MAX_YAML_BYTES = MiB
MAX_YAML_EVENTS = 100_000  # values as written (an alias once); MAX_NODES bounds them expanded

GoYaml = Literal["v2", "v3"]  # which Go YAML reader a client reads its file with


def shown_path(path: Path | str) -> str:
    """The path as the user would type it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        rel = str(path)
    return cut(rel if not rel.startswith("..") else str(path), 200)


def is_file(path: Path | str) -> bool:
    """Whether `path` names a regular file; False for a name the OS refuses (too long, a bad
    component), where Path.is_file() raises instead."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def exists(path: Path | str) -> bool:
    """Path.exists() for a user's path: False for a name the OS refuses, never an exception."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False


def not_a_file(path: Path | str) -> str | None:
    """How a user would call what is at `path` when it is there but not a regular file (a
    directory, a FIFO, a device); None for a regular file or nothing there."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _size(n: int) -> str:
    if n >= MiB:  # a tenth below 10 MiB: a file just past a 1 MiB cap is not "1 MiB"
        return f"{n / MiB:.1f} MiB".replace(".0 ", " ") if n < 10 * MiB else f"{n / MiB:.0f} MiB"
    return f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} bytes"


def file_kind(mode: int) -> str:
    """How a user would call a file that is not a regular file."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _stat(path: Path | str, what: str) -> os.stat_result:
    """os.stat, or BadInput naming `path` as the `what` it should have been."""
    shown = shown_path(path)
    try:
        return os.stat(path)
    except (FileNotFoundError, ValueError):  # ValueError: a NUL in the name (from a document)
        raise BadInput(f"{shown}: no such {what}") from None
    except NotADirectoryError:
        raise BadInput(f"{shown}: no such {what} (a parent is not a directory)") from None
    except OSError as exc:
        raise BadInput(f"{shown}: cannot read: {exc.strerror or 'error'}") from None


def check_directory(path: Path | str, what: str = "directory") -> None:
    """Raise BadInput unless `path` is a directory (a file given for one is named as a file)."""
    mode = _stat(path, what).st_mode
    if not stat.S_ISDIR(mode):
        kind = "a file" if stat.S_ISREG(mode) else file_kind(mode)
        raise BadInput(f"{shown_path(path)}: is {kind}, not a {what}")


def check_regular(path: Path | str, what: str = "file", max_bytes: int | None = MAX_INPUT_BYTES) -> int:
    """Raise BadInput unless `path` is a readable regular file within `max_bytes`; its size."""
    shown = shown_path(path)
    st = _stat(path, what)
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{shown}: is {file_kind(st.st_mode)}, not a {what}")
    if max_bytes is not None and st.st_size > max_bytes:
        raise BadInput(
            f"{shown}: {_size(st.st_size)} is more than the {_size(max_bytes)} kbt reads for a {what}"
        )
    return st.st_size


def _open_regular(path: Path | str, what: str, max_bytes: int | None) -> int:
    """A read-only descriptor of a regular file (checked before and after opening); BadInput otherwise."""
    check_regular(path, what, max_bytes)
    shown = shown_path(path)
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since the check, open does not block.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise BadInput(f"{shown}: cannot read: {exc.strerror or 'error'}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise BadInput(f"{shown}: cannot read: {exc.strerror or 'error'}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise BadInput(f"{shown}: is {file_kind(mode)}, not a {what}")
    return fd


def read_bytes(path: Path | str, what: str = "file", max_bytes: int | None = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (checked again while reading: a file that
    grows or a /proc file that reports size 0 cannot exceed the cap)."""
    shown = shown_path(path)
    fd = _open_regular(path, what, max_bytes)
    try:
        st = os.fstat(fd)
        limit = (max_bytes if max_bytes is not None else st.st_size) + 1
        chunks: list[bytes] = []
        total = 0
        while total < limit and (chunk := os.read(fd, min(limit - total, 4 * MiB))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise BadInput(f"{shown}: cannot read: {exc.strerror or 'error'}") from None
    finally:
        os.close(fd)
    if max_bytes is not None and total > max_bytes:
        raise BadInput(f"{shown}: more than the {_size(max_bytes)} kbt reads for a {what}")
    return b"".join(chunks)


# Magic numbers of what a log may be saved as but kbt reads only unpacked: gzip, bzip2, xz, zstd, zip.
_PACKED = {
    b"\x1f\x8b\x08": "gzip", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd", b"PK\x03\x04": "zip",
}  # fmt: skip


def read_lines(
    path: Path | str, what: str = "file", max_line_bytes: int = MiB
) -> Generator[bytes | None, None, None]:
    """The lines of a regular text file of any size, streamed (a broker's log); None in place of a
    line longer than `max_line_bytes`, which is read past in bounded pieces. BadInput when it cannot
    be read, or when it starts as compressed or binary data (a NUL byte in its first 64 KiB)."""
    shown = shown_path(path)
    fd = _open_regular(path, what, None)
    try:
        with io.BufferedReader(io.FileIO(fd, "rb", closefd=False), buffer_size=65536) as f:
            head = f.peek(65536)[:65536]
            for magic, name in (*_PACKED.items(), (b"BZh", "bzip2")):
                if head.startswith(magic) and (name != "bzip2" or re.match(rb"BZh[1-9]1AY&SY", head)):
                    raise BadInput(f"{shown}: {name}-compressed data, not a {what}: unpack it first")
            if b"\x00" in head:
                raise BadInput(f"{shown}: binary data, not a {what} (a NUL byte at offset {head.index(0)})")
            while line := f.readline(max_line_bytes):
                if len(line) >= max_line_bytes and not line.endswith(b"\n"):
                    while (piece := f.readline(max_line_bytes)) and not piece.endswith(b"\n"):
                        pass
                    yield None
                    continue
                yield line
    except OSError as exc:
        raise BadInput(f"{shown}: cannot read: {exc.strerror or 'error'}") from None
    finally:
        os.close(fd)


def decode(data: bytes, shown: str) -> str:
    """UTF-8 text (a leading BOM dropped), or one line saying why the bytes are not."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Notepad's "Unicode", PowerShell's `>`
        raise BadInput(f"{shown}: UTF-16 text, not UTF-8: save the file as UTF-8")
    if b"\x00" in data[:65536]:
        raise BadInput(f"{shown}: binary data, not text (a NUL byte at offset {data.index(0)})")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInput(
            f"{shown}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start});"
            " save the file as UTF-8"
        ) from None


def read_text(path: Path | str, what: str = "file", max_bytes: int | None = MAX_INPUT_BYTES) -> str:
    return decode(read_bytes(path, what, max_bytes), shown_path(path))


# ---- YAML ---------------------------------------------------------------------------------------


def _yaml_limits(text: str, shown: str) -> None:
    """Walk the parser's events (no tree is built) counting nesting depth and the node count the
    document would have once every alias is expanded."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        CollectionStartEvent,
        ScalarEvent,
    )

    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, depth below it)
    stack: list[list[Any]] = [[None, 0, 0]]  # [anchor, nodes, depth below]
    for count, event in enumerate(YAML(typ="rt").parse(text)):
        if count > MAX_YAML_EVENTS:
            line = event.start_mark.line + 1 if event.start_mark else 0
            raise BadInput(f"{shown}:{line}: more than {MAX_YAML_EVENTS:,} values: not a file kbt reads")
        if isinstance(event, CollectionStartEvent):
            stack.append([event.anchor, 1, 0])
            if len(stack) - 1 > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise BadInput(f"{shown}:{line}: nested more than {MAX_DEPTH} levels deep")
            continue
        if isinstance(event, CollectionEndEvent):
            anchor, nodes, depth = stack.pop()
            added, below = nodes, depth + 1
            if anchor is not None:
                sizes[anchor] = (added, below)
        elif isinstance(event, ScalarEvent):
            added, below = 1, 0
            if event.anchor is not None:
                sizes[event.anchor] = (1, 0)
        elif isinstance(event, AliasEvent):
            added, below = sizes.get(event.anchor, (1, 0))
        else:
            continue
        top = stack[-1]
        top[1] += added
        top[2] = max(top[2], below)
        if top[1] > MAX_NODES or len(stack) - 1 + below > MAX_DEPTH:
            line = event.start_mark.line + 1 if event.start_mark else 0
            what = f"{MAX_NODES:,} values" if top[1] > MAX_NODES else f"{MAX_DEPTH} levels"
            raise BadInput(f"{shown}:{line}: aliases expand to more than {what}")


def _yaml_problem(exc: Exception, text: str) -> str:
    """ruamel's complaint in kbt's words; a duplicate key is named without its values (ruamel
    quotes both, and either may be a pasted secret), with the line it was first given on."""
    from ruamel.yaml.constructor import DuplicateKeyError

    problem = str(getattr(exc, "problem", None) or str(exc).splitlines()[0])
    if isinstance(exc, DuplicateKeyError):
        key = re.match(r'found duplicate key "(.{0,200}?)" with value', problem, re.S)
        first = _first_given(text, exc, key.group(1)) if key else None
        where = f" (first given on line {first})" if first is not None else ""
        name = f'"{key.group(1)}" ' if key else ""
        return f"the key {name}is given twice{where}; give each key once"
    if problem == "but found another document":
        return "a second document (after ---): kbt reads one document a file"
    return problem


def _first_given(text: str, exc: Exception, key: str) -> int | None:
    """The line of `key`'s first entry in the mapping ruamel found it twice in (its context_mark
    is where that mapping starts, not where the key was first given)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, Node

    start = getattr(getattr(exc, "context_mark", None), "index", None)
    nodes: list[Node] = [YAML(typ="rt").compose(text)]
    while nodes:
        node = nodes.pop()
        if isinstance(node, MappingNode) and node.start_mark.index == start:
            return next((k.start_mark.line + 1 for k, _ in node.value if k.value == key), None)
        if isinstance(node, MappingNode):
            nodes += [n for pair in node.value for n in pair]
        elif isinstance(node, Node) and isinstance(node.value, list):
            nodes += node.value
    return None


def parse_yaml(text: str, shown: str, go_yaml: GoYaml | None = None) -> Any:
    """Parse YAML keeping line numbers (ruamel round-trip) within the limits above; every float
    finite. One-line BadInput on any problem. The text's secrets are registered with the scrubber
    first, so no message (ruamel's, a validator's) can print one. `go_yaml`: plain scalars typed as
    that Go reader types them (v2: Filebeat's, v3: the collector's; tuner/core/go_yaml.py), not as
    YAML 1.2."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from tuner.core.go_yaml import GoYamlConstructor, GoYamlV2Resolver, GoYamlV3Resolver, non_text_key

    register_input_secrets(text)
    if len(text) > MAX_YAML_BYTES:  # text read by a caller's own bound (characters: at least as many bytes)
        raise BadInput(f"{shown}: more than the {_size(MAX_YAML_BYTES)} kbt reads for a YAML file")
    try:
        _yaml_limits(text, shown)
        # ruamel warns (an anchor defined twice) on stderr as lines of its own that quote the
        # input: the document is read as YAML says (the later anchor wins), the warning dropped
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yaml = YAML(typ="rt")
            if go_yaml is not None:
                yaml.Resolver = GoYamlV2Resolver if go_yaml == "v2" else GoYamlV3Resolver
                yaml.Constructor = GoYamlConstructor
            data = yaml.load(text)
    except BadInput:
        raise
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise BadInput(f"{shown}{line}: not valid YAML: {cut(_yaml_problem(exc, text), 200)}") from None
    except RecursionError:
        raise BadInput(f"{shown}: nested too deeply") from None
    except Exception as exc:  # ruamel raises plain ValueError/TypeError on some scalars (2026-02-30)
        reason = str(exc) or type(exc).__name__
        if "integer string conversion" in reason:  # Python's own limit, and its advice to lift it
            reason = "a number with too many digits"
        raise BadInput(f"{shown}: not valid YAML: {cut(reason, 200)}") from None
    check_tree(data, shown)
    if go_yaml == "v2" and (bad := non_text_key(data)) is not None:
        key_line, read = bad
        at = f":{key_line}" if key_line is not None else ""
        raise BadInput(f"{shown}{at}: a key Filebeat reads as {read}, not text, which it refuses: quote it")
    return data


def read_yaml(path: Path | str, what: str = "file", go_yaml: GoYaml | None = None) -> Any:
    return parse_yaml(read_text(path, what, MAX_YAML_BYTES), shown_path(path), go_yaml)


# ---- JSON ---------------------------------------------------------------------------------------


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number kbt accepts")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{cut(text, 40)} is out of range")
    return value


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _json_values_at_most(text: str | bytes, shown: str) -> None:
    """Count the values a JSON text would build *before* building it: every value but the first
    follows a `,` or an opening bracket, so outside strings those characters bound the count (a
    60 MB `[{},{},...]` under the size cap would otherwise become gigabytes of objects)."""
    raw = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if raw.count(",") + raw.count("[") + raw.count("{") <= MAX_NODES:
        return  # the common case: no string needs looking at
    bare = _JSON_STRING.sub('""', raw)  # commas and brackets inside strings are not values
    if bare.count(",") + bare.count("[") + bare.count("{") > MAX_NODES:
        raise BadInput(f"{shown}: more than {MAX_NODES:,} values: not an input kbt reads")


def parse_json(text: str | bytes, shown: str) -> Any:
    """Parse JSON: finite numbers only, at most MAX_DEPTH deep, at most MAX_NODES values (counted
    before the tree is built). One-line BadInput on any problem."""
    _json_values_at_most(text, shown)
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{shown}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise BadInput(f"{shown}: not valid JSON: nested more than {MAX_DEPTH} levels deep") from None
    except UnicodeDecodeError:
        raise BadInput(f"{shown}: not valid JSON: not UTF-8 text") from None
    except ValueError as exc:  # a constant, an overflowing float, an int beyond the digit limit
        reason = str(exc)
        if "digit" in reason:
            reason = "a number with too many digits"
        raise BadInput(f"{shown}: not valid JSON: {cut(reason, 120)}") from None
    check_tree(data, shown)
    return data


def parse_json_line(data: bytes, shown: str, max_values: int) -> Any:
    """One JSON line of a log (a broker's request log), bounded in time as well as memory: its
    values are counted before it is parsed (a 1 MB array of numbers is refused, not built: parsing
    and walking it took 1.6 s a line), then C's parser alone builds it; finite numbers, no constants.
    BadInput on any problem."""
    values = data.count(b",") + data.count(b"[") + data.count(b"{")
    if values > max_values:
        raise BadInput(f"{shown}: more than {max_values:,} values")
    try:
        return json.loads(data, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise BadInput(f"{shown}: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise BadInput(f"{shown}: not valid JSON ({type(exc).__name__})") from None


def read_json(path: Path | str, what: str = "file") -> Any:
    return parse_json(read_text(path, what), shown_path(path))


# ---- shape checks -------------------------------------------------------------------------------


def check_tree(data: Any, shown: str) -> None:
    """Raise BadInput when `data` nests deeper than MAX_DEPTH, has more than MAX_NODES values
    (aliases counted each time they appear) or holds a non-finite float. Iterative: no recursion."""
    stack: list[tuple[Any, int, str]] = [(data, 0, "")]
    seen = 0
    while stack:
        node, depth, where = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise BadInput(f"{shown}: more than {MAX_NODES:,} values: not an input kbt reads")
        if depth > MAX_DEPTH:
            raise BadInput(f"{shown}: {where or 'document'}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, int | float) and not isinstance(node, bool):
            if not math.isfinite(node):
                raise BadInput(f"{shown}: {where or 'value'}: must be a finite number (got {node})")
            if abs(node) > MAX_MAGNITUDE:
                raise BadInput(f"{shown}: {where or 'value'}: {float(node):g} is too large")
        if isinstance(node, Mapping):
            for key, value in node.items():
                name = cut(str(key), 60)
                stack.append((value, depth + 1, f"{where}.{name}" if where else name))
        elif isinstance(node, Sequence) and not isinstance(node, str | bytes):
            stack += [(value, depth + 1, f"{where}[{i}]") for i, value in enumerate(node)]


def type_name(value: Any) -> str:
    """How a user would call the JSON/YAML type of `value`."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, Sequence):
        return "a list"
    return re.sub(r"(?<!^)([A-Z])", r" \1", type(value).__name__).lower()


def key_text(key: Any) -> str:
    """A parsed YAML key as text, written as YAML writes it: `~` is "null" and `true` is "true"
    (not Python's "None" and "True"), a list or mapping key in flow style ("[a, b]", not a tuple)."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, Mapping):
        return "{" + ", ".join(f"{key_text(k)}: {key_text(v)}" for k, v in key.items()) + "}"
    if isinstance(key, Sequence) and not isinstance(key, str | bytes):
        return "[" + ", ".join(key_text(k) for k in key) + "]"
    return str(key)


def plain_data(data: Any) -> Any:
    """ruamel's round-trip containers and scalar subclasses as plain dict/list/str/int/float
    (iteratively bounded by the limits `parse_yaml` already checked)."""
    if isinstance(data, Mapping):
        return {key_text(k): plain_data(v) for k, v in data.items()}
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        return [plain_data(v) for v in data]
    # bool first: a bool is an int
    return next((kind(data) for kind in (bool, int, float, str) if isinstance(data, kind)), data)
