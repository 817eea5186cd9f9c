"""Per-stage consumer figures for `kbt stress`, split by stage half.

Each stage is measured in two halves (0 = first, 1 = second) because lagging readers may read in
the second half only (`lagging_readers: split`): the real-time groups' end-to-end latency in half 0
is "without lagging readers", in half 1 "with". Records are attributed to the stage (and half) in
which they were *consumed*. Latencies in HdrHistograms, as in the producers' tally (tally.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tuner.driver.latency_hist import Latency
from tuner.driver.summed import Summed


@dataclass
class HalfTally(Summed):
    maxima = ("lag_max",)
    records: int = 0
    bytes: int = 0
    e2e: Latency = field(default_factory=Latency)  # real-time: now - record timestamp
    age_s_sum: float = 0.0  # lagging: how old the records read were
    lag_sum: float = 0.0  # consumer lag samples (records behind the high watermark)
    lag_samples: int = 0
    lag_max: float = 0.0
    rewinds: int = 0
    active_s: float = 0.0  # seconds the group was reading (lagging groups pause)

    @property
    def mean_age_s(self) -> float | None:
        return self.age_s_sum / self.records if self.records else None

    @property
    def mean_lag(self) -> float | None:
        return self.lag_sum / self.lag_samples if self.lag_samples else None


@dataclass
class GroupTally:
    """(stage index, half) -> HalfTally for one consumer group."""

    halves: dict[tuple[int, int], HalfTally] = field(default_factory=dict)

    def half(self, stage: int, half: int) -> HalfTally:
        if (stage, half) not in self.halves:
            self.halves[(stage, half)] = HalfTally()
        return self.halves[(stage, half)]

    def merge(self, other: GroupTally) -> None:
        for (stage, half), tally in other.halves.items():
            self.half(stage, half).merge(tally)

    def stage(self, stage: int) -> HalfTally:
        """Both halves of a stage together."""
        total = HalfTally()
        for half in (0, 1):
            if (stage, half) in self.halves:
                total.merge(self.halves[(stage, half)])
        return total

    def take_delta(self) -> dict[str, Any]:
        wire = self.to_wire()
        self.halves.clear()
        return wire

    def to_wire(self) -> dict[str, Any]:
        return {f"{s}:{h}": t.to_wire() for (s, h), t in sorted(self.halves.items())}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> GroupTally:
        out = cls()
        for key, value in data.items():
            stage, _, half = key.partition(":")
            out.half(int(stage), int(half)).merge(HalfTally.from_wire(value))
        return out
