"""Text that reaches a terminal: one line, control characters shown escaped, long values cut.

Inputs and servers can put anything in a value kbt quotes back (an ANSI escape that recolours or
clears the terminal, a line break that fakes a second message, 200 KB of one key): `one_line`
makes any such text safe to print.
"""

from __future__ import annotations

import re

MAX_MESSAGE = 400  # characters of one error line
# C0 controls but tab, DEL, C1 controls, and the Unicode line/paragraph separators and bidi
# overrides (which reorder what the terminal shows).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    def _esc(match: re.Match[str]) -> str:
        c = match.group(0)
        named = {"\n": "\\n", "\r": "\\r"}.get(c)
        return named or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _CONTROL.sub(_esc, text)


def cut(text: str, limit: int) -> str:
    """`text` shortened to about `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    keep = max(1, limit - 30)
    return f"{text[:keep]}... ({len(text) - keep:,} more characters)"


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    return cut(escape_controls(text.strip()), limit)
