"""Filebeat (Go) durations: a Go duration string ("500ms", "1s", "1m30s") or a number of seconds."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator

_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_DURATION = re.compile(r"^([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(value: Any) -> float:
    """A Filebeat duration in seconds: a Go duration string or a plain number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"must be a duration like 500ms, 1s or 2m (got {value})")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a duration like 500ms, 1s or 2m (got {value!r})")
    text = value.strip()
    sign = -1.0 if text.startswith("-") else 1.0
    rest = text.lstrip("+-")
    if rest == "0":
        return 0.0
    total = 0.0
    while rest:
        match = _GO_DURATION.match(rest)
        if match is None:
            raise ValueError(f"must be a duration like 500ms, 1s or 2m (got {value!r})")
        total += float(match.group(1)) * _UNIT_S[match.group(2)]
        rest = rest[match.end() :]
    return sign * total


def format_duration(seconds: float) -> str:
    """The shortest Go duration string for `seconds` (whole ms or s when possible)."""
    if seconds == 0:
        return "0s"
    ms = seconds * 1000
    if abs(ms - round(ms)) < 1e-9:
        whole = round(ms)
        if whole % 60_000 == 0 and whole >= 60_000:
            return f"{whole // 60_000}m"
        if whole % 1000 == 0:
            return f"{whole // 1000}s"
        return f"{whole}ms"
    return f"{round(seconds * 1e6)}us"


Duration = Annotated[float, BeforeValidator(parse_duration)]
