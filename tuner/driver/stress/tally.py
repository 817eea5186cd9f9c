"""Per-stage producer accounting for `kbt stress`, shared by locust workers and the master.

A worker tallies what its producers did in each stage (records sent / acked / failed, bytes,
delivery latency buckets, produce requests from librdkafka statistics) and which record sequence
numbers were acked; every report ships only what changed since the last one (`take_delta`), as
plain data locust can send over its RPC. The master merges the deltas (`merge_wire`).

A record belongs to the stage of its *intended* send time, so a step whose records are acked late
still owns their latency. The send lag (intended send time -> the produce() call) tells how far the
load generator itself fell behind its schedule: that part of the latency is the generator's, not
the brokers'. Latencies go into HdrHistograms (latency_hist.Latency), so merging is exact and
cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tuner.driver.latency_hist import Latency
from tuner.driver.summed import Summed


def ranges_of(values: Iterable[int]) -> list[list[int]]:
    """Sorted distinct ints as inclusive [lo, hi] runs (one pass over sorted ints: a worker's report
    carries every sequence it saw acked, so no list per value)."""
    out: list[list[int]] = []
    for v in sorted(set(values)):
        if out and v == out[-1][1] + 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return out


def merge_ranges(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    runs = sorted([list(r) for r in a] + [list(r) for r in b])
    out: list[list[int]] = []
    for lo, hi in runs:
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


@dataclass
class StageTally(Summed):
    maxima = ("last_due",)
    sent: int = 0
    acked: int = 0
    failed: int = 0
    bytes_acked: int = 0
    latency: Latency = field(default_factory=Latency)  # intended send time -> ack
    send_lag: Latency = field(default_factory=Latency)  # intended send time -> produce()
    last_due: float = 0.0  # epoch s: the latest intended send time of a record sent (0: none)
    requests: dict[str, int] = field(default_factory=dict)  # broker node id -> produce requests
    batches: int = 0
    batch_records: int = 0
    batch_bytes: int = 0

    @property
    def unacked(self) -> int:
        return max(0, self.sent - self.acked - self.failed)

    def p_ms(self, q: float, unacked_high: bool = False) -> float | None:
        return self.latency.percentile_ms(q, self.unacked if unacked_high else 0)


@dataclass
class Tally:
    """Stage index -> StageTally, plus the acked sequence runs per producer and stage and the
    highest acked offset per topic partition (what delivery verification reads up to)."""

    stages: dict[int, StageTally] = field(default_factory=dict)
    acked: dict[int, dict[int, list[list[int]]]] = field(default_factory=dict)  # pid -> stage -> runs
    max_offsets: dict[str, dict[int, int]] = field(default_factory=dict)  # topic -> partition -> offset
    _pending: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # (pid, stage) -> seqs

    def stage(self, index: int) -> StageTally:
        if index not in self.stages:
            self.stages[index] = StageTally()
        return self.stages[index]

    def record_ack(self, pid: int, stage: int, seq: int, topic: str, partition: int, offset: int) -> None:
        self._pending.setdefault((pid, stage), []).append(seq)
        parts = self.max_offsets.setdefault(topic, {})
        if offset > parts.get(partition, -1):
            parts[partition] = offset

    def flush_acked(self) -> None:
        for (pid, stage), seqs in self._pending.items():
            per = self.acked.setdefault(pid, {})
            per[stage] = merge_ranges(per.get(stage, []), ranges_of(seqs))
        self._pending.clear()

    def merge(self, other: Tally) -> None:
        other.flush_acked()
        self.flush_acked()
        for index, tally in other.stages.items():
            self.stage(index).merge(tally)
        for pid, per in other.acked.items():
            mine = self.acked.setdefault(pid, {})
            for stage, runs in per.items():
                mine[stage] = merge_ranges(mine.get(stage, []), runs)
        for topic, parts in other.max_offsets.items():
            mine_parts = self.max_offsets.setdefault(topic, {})
            for partition, offset in parts.items():
                mine_parts[partition] = max(mine_parts.get(partition, -1), offset)

    def take_delta(self) -> dict[str, Any]:
        """Everything tallied since the last call, as wire data; the tally starts again empty."""
        wire = self.to_wire()  # pending acks flushed first
        self.stages.clear()
        self.acked.clear()
        self.max_offsets.clear()
        return wire

    def to_wire(self) -> dict[str, Any]:
        self.flush_acked()
        return {
            "stages": {str(i): t.to_wire() for i, t in sorted(self.stages.items())},
            "acked": {
                str(pid): {str(s): runs for s, runs in sorted(per.items())}
                for pid, per in sorted(self.acked.items())
            },
            "max_offsets": {
                t: {str(p): o for p, o in parts.items()} for t, parts in self.max_offsets.items()
            },
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Tally:
        tally = cls()
        tally.merge_wire(data)
        return tally

    def merge_wire(self, data: dict[str, Any]) -> None:
        other = Tally(
            stages={int(i): StageTally.from_wire(t) for i, t in data.get("stages", {}).items()},
            acked={
                int(pid): {int(s): [list(map(int, r)) for r in runs] for s, runs in per.items()}
                for pid, per in data.get("acked", {}).items()
            },
            max_offsets={
                str(t): {int(p): int(o) for p, o in parts.items()}
                for t, parts in data.get("max_offsets", {}).items()
            },
        )
        self.merge(other)
