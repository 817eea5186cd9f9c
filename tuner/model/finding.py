"""What a diagnosis says of a broker: a finding (its kind, severity, one sentence with the evidence in
it, advice, the numbers), the three statuses and their order, and the formatting the sentences share."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tuner.core.errors import ExitStatus
from tuner.core.frozen import Frozen
from tuner.core.units import Entries, Figure, Text

Status = Literal["healthy", "warning", "critical"]
Kind = Literal[
    "request_queue_full",
    "small_requests",
    "network_bytes",
    "handler_threads",
    "cpu_or_pauses",
    "disk_flush",
    "large_fetches",
    "unexplained_idle",
    "meter_warmup",
    "no_data",
]
RANK: dict[Status, int] = {"healthy": 0, "warning": 1, "critical": 2}
EXIT: dict[Status, ExitStatus] = {
    "healthy": ExitStatus.OK,
    "warning": ExitStatus.WARNING,
    "critical": ExitStatus.CRITICAL,
}
CAUSE_LABEL: dict[Kind, str] = {
    "request_queue_full": "request queue full",
    "small_requests": "small requests",
    "network_bytes": "network bytes",
    "handler_threads": "handler threads",
    "cpu_or_pauses": "CPU or GC pauses",
    "disk_flush": "disk flush",
    "large_fetches": "large fetches",
    "unexplained_idle": "low idle without the traffic to explain it",
    "meter_warmup": "idle meter warm-up",
    "no_data": "no data",
}


class Finding(Frozen):
    kind: Kind
    severity: Status
    summary: Text  # one line, with the evidence in it
    advice: Text = ""
    evidence: Annotated[dict[Text, Figure], Entries] = Field(default_factory=dict)


def worst(*statuses: Status) -> Status:
    return max(statuses, key=lambda s: RANK[s])


def fmt_bytes(n: float) -> str:
    for unit, size in (("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def fmt(value: float | None, digits: int = 2) -> str:
    """A figure in a sentence; "?" when it was not measured."""
    return "?" if value is None else f"{value:.{digits}f}"
