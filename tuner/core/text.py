"""Text that reaches a terminal: one line, control characters shown escaped, long values cut.

Inputs and servers can put anything in a value kbt quotes back (an ANSI escape that recolours or
clears the terminal, a line break that fakes a second message, 200 KB of one key): `one_line`
makes any such text safe to print.
"""

from __future__ import annotations

import re

MAX_MESSAGE = 400  # characters of one error line
# C0 controls but tab, DEL, C1 controls, the Unicode line/paragraph separators and bidi
# overrides (which reorder what the terminal shows), and lone surrogates: an undecodable byte of a
# path or an argument (Python keeps byte 0x9b as U+DC9B) that a surrogateescape stream would write
# back raw, and 0x9b alone is an 8-bit CSI to a terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}  # the line breaks escape_controls shows by name


def escape_controls(text: str) -> str:
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(0)) or _code(m.group(0)), text)


def _code(c: str) -> str:
    """How an escaped character is shown: \\xNN (a surrogate standing for an undecodable byte is
    shown as that byte), else \\uNNNN."""
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:
        n -= 0xDC00
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def decoded(text: str) -> str:
    """An argument as text: an undecodable byte the OS handed over (kept by Python as a lone
    surrogate, which no UTF-8 writer can encode) becomes U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    text = _SURROGATE.sub(lambda m: m.group() if 0xDC80 <= ord(m.group()) <= 0xDCFF else "\ufffd", text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def value(text: object, limit: int = 200) -> str:
    """A value from outside (a label, a path, a name a user or a server chose) as kbt prints it
    anywhere, tables and notes included: on one line, controls escaped, cut to `limit`."""
    return cut(escape_controls(str(text)), limit)


def cut(text: str, limit: int) -> str:
    """`text` shortened to about `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    keep = max(1, limit - 30)
    return f"{text[:keep]}... ({len(text) - keep:,} more characters)"


def or_dash(value: float | None, fmt: str = "{:.0f}") -> str:
    """A figure formatted by `fmt` (a str.format template), or "-" for none."""
    return "-" if value is None else fmt.format(value)


def fixed_or_dash(value: float | None, digits: int) -> str:
    """A figure as tables and lines print it: `digits` decimals, thousands separated; "-" for none."""
    return "-" if value is None else f"{value:,.{digits}f}"


# A list a Go client prints from a map, in Go's random map order ("Valid actions: rename, dns, ...").
_GO_MAP_LIST = re.compile(r"(?i)(\bvalid [a-z ]{1,40}: )([\w./-]+(?:, [\w./-]+)+)")


def sorted_lists(text: str) -> str:
    """`text` with each "Valid <things>: a, b, c" list sorted: Filebeat prints its processor
    actions in Go's map order, different at every run, and a line cut at MAX_MESSAGE then named
    different ones; sorted, two runs print the same line."""
    return _GO_MAP_LIST.sub(lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))), text)


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    return cut(escape_controls(text.strip()), limit)


# What a terminal may receive from kbt's own formatting when it writes to a TTY: rich's colours
# (SGR), its cursor hiding and line erasing for live status lines, and carriage returns. Anything
# else (OSC title/clipboard sequences, screen clears, BEL, a CR/LF a value carried) is escaped.
_TTY_ALLOWED = re.compile(r"(\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[[0-9]*[AK]|\x1b\[[0-9]*G|\r)")
_GATE_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def gate(text: str, tty: bool) -> str:
    """`text` as kbt may write it to stdout/stderr: line breaks and tabs kept, and on a terminal
    the sequences kbt's own formatting uses; every other control character shown escaped."""

    def gated(part: str) -> str:
        return _GATE_CONTROL.sub(lambda m: _code(m.group(0)), part)

    if not tty:
        return gated(text)
    # the pattern is one group: the split keeps the allowed sequences, at its odd places
    parts = _TTY_ALLOWED.split(text)
    return "".join(part if i % 2 else gated(part) for i, part in enumerate(parts))


class OutputGate:
    """A text stream (sys.stdout / sys.stderr) whose every write passes `gate`: the one way out for
    text, whichever printer (typer, rich, print) a command uses."""

    def __init__(self, stream: object) -> None:
        self._stream = stream
        isatty = getattr(stream, "isatty", None)
        try:
            self._tty = bool(isatty()) if isatty is not None else False
        except (OSError, ValueError):
            self._tty = False

    def write(self, text: str) -> int:
        self._stream.write(gate(text, self._tty))  # type: ignore[attr-defined]
        return len(text)

    def isatty(self) -> bool:
        return self._tty

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
