"""Java's .properties format as java.util.Properties reads and writes it: the one reader and the
one writer of client properties files (`--command-config`, target files, the librdkafka and Java
files kbt renders and its runs start from).

Read: `key=value`, `key: value` or `key value`, `#` and `!` comments, `\\` continuations, `\\`
escapes in keys and values (`\\uXXXX` too), trailing blanks dropped. Written: every character a
reader would take otherwise escaped (a leading blank, a line break, a separator in a key), and
anything past ASCII as `\\uXXXX`, since Kafka's tools and most applications load a file through an
InputStream, which reads ISO-8859-1 (`Properties.store` writes the same).
"""

from __future__ import annotations

import re
from pathlib import Path

from tuner.core.errors import BadInput

# A key ends at the first blank, `=` or `:` that no backslash escapes.
_LINE = re.compile(r"^((?:[^=:\s\\]|\\.)+)(?:\s*[=:\s]\s*(.*))?$", re.S)


MAX_PROPERTIES_BYTES = 1 << 20  # a client properties file is a few hundred bytes


def read_properties(path: Path | str, what: str = "properties file") -> str:
    """The text of a properties file through the bounded reader. A leading byte-order mark is
    refused, not dropped: Java reads it (ISO-8859-1 or UTF-8 alike) as part of the first key, so the
    team's client ignores that setting as an unknown one, while kbt would have run it."""
    from tuner.core.inputs import decode, read_bytes, shown_path

    data = read_bytes(path, what, MAX_PROPERTIES_BYTES)
    if data.startswith(b"\xef\xbb\xbf"):
        raise BadInput(
            f"{shown_path(path)}: starts with a byte-order mark, which Kafka's tools and Java clients read as"
            " part of the first key (that setting is then ignored): save the file as UTF-8 without one"
        )
    return decode(data, shown_path(path))


def parse_properties(text: str, where: str) -> dict[str, str]:
    """A Java .properties text as java.util.Properties reads it, with trailing blanks dropped."""
    return {key: value for key, (value, _) in properties_with_lines(text, where).items()}


def properties_with_lines(text: str, where: str) -> dict[str, tuple[str, int]]:
    """Each property of a .properties text as parse_properties reads it, with the file's line its
    (last) setting starts on, for a message that points at it."""
    props: dict[str, tuple[str, int]] = {}
    logical: list[tuple[int, str]] = []  # (the file's line it starts on, the line continued)
    lines = re.split(r"\r\n|\r|\n", text)  # Java's line ends only (a form feed is a blank)
    pending, start = "", 0
    for number, raw in enumerate(lines, 1):
        line = raw.lstrip()  # trailing blanks stay: a backslash before one escapes it
        if not pending and (not line or line[0] in "#!"):
            continue
        start = start if pending else number
        if _continues(line):
            pending += line[:-1]
            continue
        logical.append((start, pending + line))
        pending = ""
    if pending:
        logical.append((start, pending))
    for number, line in logical:
        match = _LINE.match(line)  # a key alone: an empty value
        if match is None:
            raise BadInput(f"{where}: line {number} is not key=value")
        try:
            key = _unescaped(match.group(1))
            props[key] = (_unescaped(match.group(2) or ""), number)
        except ValueError:
            raise BadInput(
                f"{where}: line {number} has a \\u escape without four hex digits (Java refuses the file:"
                " Malformed \\uxxxx encoding); a backslash before a u is written \\\\u"
            ) from None
    return props


def _continues(line: str) -> bool:
    """An odd number of trailing backslashes: the last one joins the next line (Java's rule)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescaped(value: str) -> str:
    """java.util.Properties' escapes: \\t \\n \\r \\f, \\uXXXX (UTF-16 units: a surrogate pair is one
    character; a \\u without four hex digits is a ValueError, as Java refuses it), any other \\c is c;
    trailing blanks that no backslash escapes are dropped (a value never ends in a blank by accident)."""
    out: list[str] = []
    kept = 0  # length of `out` up to the last character that is not an unescaped blank
    i = 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            nxt = value[i + 1]
            if nxt == "u":  # Java refuses a \u without four hex digits (ValueError)
                if not re.fullmatch(r"[0-9A-Fa-f]{4}", value[i + 2 : i + 6]):
                    raise ValueError("malformed \\uxxxx escape")
                out.append(chr(int(value[i + 2 : i + 6], 16)))
                i += 6
            else:
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
            kept = len(out)
            continue
        if c != "\\":
            out.append(c)
            if not c.isspace():
                kept = len(out)
        i += 1
    return "".join(out[:kept]).encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_WRITTEN = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}


def _escaped(text: str, key: bool) -> str:
    """`text` as a reader takes it back: a backslash and the line-breaking controls as escapes; a
    blank escaped where a reader would drop it (leading, trailing, anywhere in a key), and so are
    `=` and `:` in a key and `#` or `!` starting one; past ASCII as \\uXXXX (UTF-16 units)."""
    out = []
    last = len(text) - 1
    for i, c in enumerate(text):
        if c in _WRITTEN:
            out.append(_WRITTEN[c])
        elif not 0x20 <= ord(c) <= 0x7E:
            units = c.encode("utf-16-be", "surrogatepass")
            out += [f"\\u{int.from_bytes(units[j : j + 2], 'big'):04x}" for j in range(0, len(units), 2)]
        elif (c == " " and (key or i in (0, last))) or (key and (c in "=:" or (i == 0 and c in "#!"))):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def properties_line(key: str, value: str) -> str:
    """One `key=value` line that parse_properties (and java.util.Properties) reads back as given."""
    return f"{_escaped(key, key=True)}={_escaped(value, key=False)}"
