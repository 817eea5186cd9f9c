"""Duration: one typed value for a time setting, from the spec to the rendered file.

Parsed once from what Filebeat (Go's time.ParseDuration) accepts: "850ms", "1s", "1m30s", "0",
or a plain number of seconds. Held as whole nanoseconds, so no float drifts between forms; read
as `.seconds` / `.ms` by the model and engines, and written back as Filebeat writes it
(`str(d)`: "850ms", "2s", "1m30s"). In pydantic models it validates from any accepted form and
serialises to that text.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

_NS = {
    "ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
    "h": 3600 * 10**9,
}  # fmt: skip
_TERM = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_WRITE = (("h", 3600 * 10**9), ("m", 60 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1))


class Duration:
    """A non-negative duration in nanoseconds (Filebeat's options are never negative)."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        if ns < 0:
            raise ValueError(f"must not be negative (got {ns} ns)")
        self.ns = ns

    @classmethod
    def parse(cls, value: Any) -> Duration:
        """From a Go duration string, a number of seconds, or a Duration."""
        if isinstance(value, Duration):
            return value
        bad = ValueError(f"must be a duration like 500ms, 1s or 2m (got {value!r})")
        if isinstance(value, bool):
            raise bad
        if isinstance(value, int | float):
            if value < 0:
                raise ValueError(f"must not be negative (got {value})")
            return cls(round(value * 10**9))
        if not isinstance(value, str) or not value.strip():
            raise bad
        text = value.strip()
        if text.startswith("-"):
            raise ValueError(f"must not be negative (got {value!r})")
        rest = text.removeprefix("+")
        if rest == "0":
            return cls(0)
        total = 0.0
        pos = 0
        while pos < len(rest):
            match = _TERM.match(rest, pos)
            if match is None:
                raise bad
            total += float(match.group(1)) * _NS[match.group(2)]
            pos = match.end()
        return cls(round(total))

    @classmethod
    def of_ms(cls, ms: float) -> Duration:
        return cls(round(ms * 10**6))

    @property
    def seconds(self) -> float:
        return self.ns / 10**9

    @property
    def ms(self) -> float:
        return self.ns / 10**6

    def __str__(self) -> str:
        """Go's form with the fewest terms, largest unit first: "850ms", "2s", "1m30s", "0s"."""
        if self.ns == 0:
            return "0s"
        out, rest = [], self.ns
        for unit, size in _WRITE:
            whole, rest = divmod(rest, size)
            if whole:
                out.append(f"{whole}{unit}")
        # Below a second, one term in the coarsest exact unit (1500us, not 1ms500us).
        if self.ns < 10**9 and len(out) > 1:
            unit, size = next((u, s) for u, s in _WRITE[3:] if self.ns % s == 0)
            return f"{self.ns // size}{unit}"
        return "".join(out)

    def __repr__(self) -> str:
        return f"Duration({self})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(self.ns)

    def __lt__(self, other: Duration) -> bool:
        return self.ns < other.ns

    def __add__(self, other: Duration) -> Duration:
        return Duration(self.ns + other.ns)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.parse,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json"),
            json_schema_input_schema=core_schema.union_schema(
                [core_schema.str_schema(), core_schema.float_schema()]
            ),
        )


def positive(value: Duration) -> Duration:
    """For options libbeat requires above zero (timeouts, backoff)."""
    if value.ns <= 0:
        raise ValueError(f"must be greater than 0 (got {value})")
    return value
