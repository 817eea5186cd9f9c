"""Finite numbers only: every number kbt takes from a user, a file or a server passes here.

Python's float() reads "nan", "inf", "1e308" and digits of any script ("١٢"); none of these is a
rate, a duration or a size anyone means. A number is accepted only when it is written in ASCII,
is finite and lies within +-2**53 (beyond that a float cannot count by one, and no byte count,
rate or duration kbt deals with comes close).
"""

from __future__ import annotations

import math
import re
import types
import typing

from tuner.core.envref import is_reference

MAX_MAGNITUDE = float(2**53)
MAX_DURATION_S = 366 * 24 * 3600.0  # a year: longer "durations" (1e35h) are typos
NUMBER = _NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$", re.ASCII)


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


ECHO_CHARS = 40  # of a value an error message echoes


def cut_text(text: str) -> str:
    """`text`'s first ECHO_CHARS characters, "..." when there were more."""
    return text if len(text) <= ECHO_CHARS else text[:ECHO_CHARS] + "..."


def cut_value(text: str) -> str:
    return repr(cut_text(text))


# ---- the one grammar for numbers in documents, flags and model fields ---------------------------


def document_number(value: object, what: str, *, whole: bool = False) -> float:
    """A number from a parsed document or a server's answer: a real number (not a boolean), or a
    string in the ASCII grammar (Prometheus sends sample values as strings); finite and bounded."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: must be a number, not {'true' if value else 'false'}")
    if isinstance(value, int | float):
        number = check_finite(float(value), what)
    elif isinstance(value, str):
        number = parse_number(value, what)
    else:
        raise ValueError(f"{what}: must be a number (got {type(value).__name__})")
    if whole and number != int(number):
        raise ValueError(f"{what}: must be a whole number (got {number:g})")
    return number


def sample_value(text: object, what: str = "value") -> float:
    """A Prometheus sample value: the ASCII grammar, or its own spellings of NaN/Inf (which are
    kept as such: a ratio of 0/0 is NaN on the server and callers skip it)."""
    if isinstance(text, str) and text in ("NaN", "+Inf", "-Inf"):
        return float(text)
    if not isinstance(text, str):
        raise ValueError(f"{what}: must be a number in a string (got {type(text).__name__})")
    stripped = text.strip()
    if not _NUMBER.match(stripped):
        raise ValueError(f"{what} {cut_value(text)}: must be a number")
    return float(stripped)


def _numeric_kind(annotation: object) -> type | None:
    """int or float when a pydantic field holds only a number (or None), else None."""
    if annotation in (int, float):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _numeric_kind(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        kinds = {_numeric_kind(a) for a in typing.get_args(annotation) if a is not type(None)}
        if len(kinds) == 1:
            return kinds.pop()
    return None


def model_number(value: object, annotation: object) -> object:
    """The before-check every kbt model runs on every field (core.frozen): a field that holds a
    number refuses booleans and reads strings only through the ASCII grammar; anything else passes
    on to the field's own validation (which applies its documented range)."""
    kind = _numeric_kind(annotation)
    if kind is None or value is None:
        return value
    if isinstance(value, bool):
        raise ValueError(f"must be a number, not {'true' if value else 'false'}")
    if isinstance(value, str):
        stripped = value.strip()
        words = "a whole number such as 12" if kind is int else "a number such as 12 or 0.5"
        if not _NUMBER.match(stripped):
            raise ValueError(f"must be {words}, in ASCII digits (got {cut_value(value)})")
        number = check_finite(float(stripped), "")
        if kind is int:
            if number != int(number):
                raise ValueError(f"must be {words} (got {cut_value(value)})")
            return int(number)
        return number
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite number (got {value})")
    return value


# Kafka's config keys whose values are whole numbers by name: times, sizes, counts. Each is an int,
# a long or a short in the Java client's ConfigDef (and the broker's, for a topic's configs); a
# client with a table of its own types (librdkafka) is judged by that table instead.
_KAFKA_WHOLE = re.compile(
    r"\.(ms|bytes|kbytes|memory|size|messages|count|num|max|replicas|retries|connection)$", re.ASCII
)
# What the reading client takes for a key: "integer" only a whole number (the Java client's ints,
# longs and shorts); "named integer" a whole number or a word of its own (librdkafka's integers:
# acks takes "all"), so a number written there is whole; "float" any number; None no number.
NumberType = typing.Literal["integer", "named integer", "float"] | None


def kafka_number_type(key: str) -> NumberType:
    """ "integer" when Kafka's Java client (or a broker's topic config) takes only a whole number
    for `key`, else None."""
    return "integer" if _KAFKA_WHOLE.search(key.strip().lower()) else None


def check_config_value(key: str, value: str, number: NumberType) -> str:
    """A raw client/topic config value, as the client that reads it takes `key` (`number`: "integer",
    "float", or None when it takes no number there; Kafka's rule by name is kafka_number_type): a whole number
    is ASCII digits, at least -1, within the magnitude bound; a float a finite number in the
    grammar; any value that looks like a number but is not one in the grammar ("1e400", "inf",
    Unicode digits) is refused. A `${VAR}` reference passes. Returns `value`."""
    text = value.strip()
    if is_reference(text):
        return value
    if number == "named integer":
        number = "integer" if _looks_numeric(text) else None  # a word is the client's to judge
    if number == "integer":
        if not re.fullmatch(r"[+-]?[0-9]+", text, re.ASCII):
            raise ValueError(f'"{key}": must be a whole number in ASCII digits (got {cut_value(value)})')
        # the sign and size said as such: "-5" or 2**63 was "must be a whole number in ASCII digits"
        if len(text.lstrip("+-")) > 16:
            raise ValueError(f'"{key}": {cut_value(value)} is too large')
        if int(text) < -1:
            raise ValueError(f'"{key}": must be -1 or more (got {cut_value(value)})')
        return value
    if number == "float":
        try:
            parse_number(text, "")
        except ValueError:
            raise ValueError(f'"{key}": must be a number in ASCII digits (got {cut_value(value)})') from None
        return value
    try:
        float(text)  # what a careless reader would take for a number
    except ValueError:
        return value
    try:
        parse_number(text, "")
    except ValueError:
        raise ValueError(f'"{key}": {cut_value(value)} is not a finite number in ASCII digits') from None
    return value


def _looks_numeric(text: str) -> bool:
    """Written as a number ("0.5", "1e3", ".5", "0x10", "inf"), not as a word ("all", "five")."""
    if re.match(r"[+-]?\.?[0-9]", text, re.ASCII):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True
