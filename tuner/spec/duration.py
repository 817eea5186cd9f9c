"""Duration: one typed value for a time setting, from the spec to the rendered file.

Parsed once from what Filebeat (Go's time.ParseDuration) accepts: "850ms", "1s", "1m30s", "0", or
a number of seconds; held as whole nanoseconds (no float drift between forms); read as `.ms` /
`.seconds` by the model and engines; written back as Filebeat writes it (`str(d)`: "850ms", "2s",
"1m30s"). In pydantic models it validates from any of those forms and serialises to JSON as text.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from tuner.core.numbers import check_duration, cut_value, parse_number

_UNITS = (("h", 3600 * 10**9), ("m", 60 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1))
_NS = {**dict(_UNITS), "µs": 10**3, "μs": 10**3}
# One term: a number with one unambiguous split ("11" is 11, never 1 then 1: the old
# `[0-9]*\.?[0-9]+` could split a run of digits two ways, so "11s"*40+"x" backtracked 2**40 times),
# then its unit. Terms are matched one after another from where the last ended (linear time).
_TERM = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)", re.ASCII)
MAX_DURATION_TEXT = 64  # "1h2m3s4ms5us6ns" is 15 characters; longer text is not a duration
# The longest time a spec, threshold or gate may name: a week (a run, lag or latency longer than
# that is a typo; parsing alone allows a year, tuner.core.numbers.MAX_DURATION_S).
MAX_SPEC_SECONDS = 7 * 24 * 3600.0
MAX_SPEC_MS = MAX_SPEC_SECONDS * 1000


def _terms(text: str) -> list[tuple[str, str]] | None:
    """The (number, unit) terms of a Go duration, or None when `text` is not one."""
    if not text or len(text) > MAX_DURATION_TEXT:
        return None
    terms, pos = [], 0
    while pos < len(text):
        match = _TERM.match(text, pos)
        if match is None:
            return None
        terms.append((match.group(1), match.group(2)))
        pos = match.end()
    return terms


class Duration:
    """A non-negative duration (Filebeat's options are never negative) in nanoseconds."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        if ns < 0:
            raise ValueError(f"must not be negative (got {ns} ns)")
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __lt__(self, other: Duration) -> bool:
        return self.ns < other.ns

    def __hash__(self) -> int:
        return self.ns

    def __repr__(self) -> str:
        return f"Duration({self})"

    @classmethod
    def parse(cls, value: Any) -> Duration:
        """From a Go duration string, a number of seconds, or a Duration."""
        if isinstance(value, Duration):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls(round(check_duration(float(value), "") * 10**9))
        text = value.strip().removeprefix("+") if isinstance(value, str) else ""
        if text.startswith("-"):
            raise ValueError(f"must not be negative (got {value!r})")
        terms = _terms(text) if text != "0" else []
        if terms is None:
            raise ValueError(f"must be a duration like 500ms, 1s or 2m (got {cut_value(str(value))})")
        ns = sum(parse_number(n, "duration") * _NS[unit] for n, unit in terms)
        return cls(round(check_duration(ns / 10**9, "") * 10**9))

    @classmethod
    def field(cls, value: Any) -> Duration:
        """A duration a spec names: parsed, and at most MAX_SPEC_SECONDS (a flag's duration is only
        held to parse's year)."""
        parsed = cls.parse(value)
        if parsed.seconds > MAX_SPEC_SECONDS:
            raise ValueError(f"must be at most {Duration(round(MAX_SPEC_SECONDS * 10**9))} (got {parsed})")
        return parsed

    @classmethod
    def of_ms(cls, ms: float) -> Duration:
        return cls(round(ms * 10**6))

    @property
    def seconds(self) -> float:
        return self.ns / 10**9

    @property
    def ms(self) -> float:
        return self.ns / 10**6

    def __add__(self, other: Duration) -> Duration:
        return Duration(self.ns + other.ns)

    def __str__(self) -> str:
        """Largest units first ("1m30s"); below a second one term in the coarsest exact unit."""
        if self.ns < 10**9:
            unit, size = next(((u, s) for u, s in _UNITS[3:] if self.ns % s == 0), ("s", 10**9))
            return f"{self.ns // size}{unit}" if self.ns else "0s"
        terms, rest = [], self.ns
        for unit, size in _UNITS:
            whole, rest = divmod(rest, size)
            terms += [f"{whole}{unit}"] if whole else []
        return "".join(terms)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.field, serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json")
        )


def positive(value: Duration) -> Duration:
    """For options the collector requires above zero."""
    if value.ns <= 0:
        raise ValueError(f"must be greater than 0 (got {value})")
    return value
