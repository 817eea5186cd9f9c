"""Finite numbers only: every number kbt takes from a user, a file or a server passes here.

Python's float() reads "nan", "inf", "1e308" and digits of any script ("١٢"); none of these is a
rate, a duration or a size anyone means. A number is accepted only when it is written in ASCII,
is finite and lies within +-2**53 (beyond that a float cannot count by one, and no byte count,
rate or duration kbt deals with comes close).
"""

from __future__ import annotations

import math
import re

MAX_MAGNITUDE = float(2**53)
MAX_DURATION_S = 366 * 24 * 3600.0  # a year: longer "durations" (1e35h) are typos
_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$", re.ASCII)


def check_finite(value: float, what: str) -> float:
    """`value` if finite and within MAX_MAGNITUDE; ValueError in the user's words otherwise."""
    where = f"{what}: " if what else ""
    if not math.isfinite(value):
        raise ValueError(f"{where}must be a finite number (got {value})")
    if abs(value) > MAX_MAGNITUDE:
        raise ValueError(f"{where}{value:g} is too large")
    return value


def parse_number(text: str, what: str) -> float:
    """A decimal number written in ASCII digits; ValueError naming `what` otherwise."""
    stripped = text.strip()
    if not _NUMBER.match(stripped):
        raise ValueError(f"{what} {cut_value(text)}: must be a number")
    return check_finite(float(stripped), what)


def parse_int(text: str, what: str) -> int:
    stripped = text.strip()
    if not re.match(r"^[+-]?[0-9]+$", stripped, re.ASCII) or len(stripped) > 17:
        raise ValueError(f"{what} {cut_value(text)}: must be a whole number")
    return int(stripped)


def check_duration(seconds: float, what: str) -> float:
    check_finite(seconds, what)
    if abs(seconds) > MAX_DURATION_S:
        raise ValueError(f"{what + ': ' if what else ''}{seconds:g} s is longer than a year")
    return seconds


def cut_value(text: str, limit: int = 40) -> str:
    shown = text if len(text) <= limit else text[:limit] + "..."
    return repr(shown)
