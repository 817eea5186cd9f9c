"""The stress section of a run record: one record per stage of a `kbt stress` run.

The record's `client`, `delivery` and `broker` describe the stage like a sweep run (the stage's
window, its producers, its records); `stress` adds what only a stress test has: the stage on the
timeline, the gates and their verdict, the consumer groups (each stage half apart: without and
with lagging readers under `lagging_readers: split`) and the remote tier.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import (
    ByteRate,
    Count,
    Entries,
    Epoch,
    Figure,
    Millis,
    Rate,
    Seconds,
    Tally,
    TallyInt,
    Text,
)
from tuner.spec.stress_spec import Stage

Verdict = Literal["held", "failed", "not judged", "aborted", "interrupted"]
GateName = Literal["network_idle", "request_queue", "p99", "e2e_p99", "failed", "lost", "verified"]


class GateCheck(Frozen):
    gate: GateName
    limit: Figure | None = None
    value: Figure | None = None  # None: no data (detail says why)
    passed: bool
    detail: Text = ""


class ConsumerHalf(Frozen):
    """One consumer group over one part of a stage."""

    seconds: Seconds = 0.0
    records: TallyInt = 0
    records_per_s: Rate = 0.0
    e2e_p50_ms: Millis | None = None  # real-time groups: record timestamp -> consumed
    e2e_p99_ms: Millis | None = None
    mean_age_s: Seconds | None = None  # lagging groups: how old the records they read were
    lag_mean: Tally | None = None  # records behind the high watermark (librdkafka statistics)
    lag_max: Tally | None = None
    rewinds: Count = 0
    active_s: Seconds = 0.0  # lagging groups: seconds spent reading
    lagging_readers: bool = False  # were the lagging groups reading during this part


class ConsumerStage(Frozen):
    group: Text
    mode: Literal["realtime", "lagging"]
    whole: ConsumerHalf
    first_half: ConsumerHalf
    second_half: ConsumerHalf


class RemoteTier(Frozen):
    """Tiered storage traffic of the run's topics (broker kafka_server_remote_* series)."""

    fetch_requests_per_s: Rate | None = None
    fetch_bytes_per_s: ByteRate | None = None
    copy_bytes_per_s: ByteRate | None = None
    first_half_fetch_requests_per_s: Rate | None = None
    second_half_fetch_requests_per_s: Rate | None = None


class StressStep(Frozen):
    stress: Text  # the stress spec's name
    profile_label: Text  # current, recommended, ...
    stage: Stage
    t0: Epoch  # the run's timeline origin (epoch s)
    start: Epoch  # epoch s: the stage's window (the judged part starts after settle_s)
    end: Epoch
    judged_from: Epoch
    baseline_msgs_per_s: Rate
    offered_msgs_per_s: Rate  # at the stage start (the ramp down moves)
    verdict: Verdict
    gates: Annotated[list[GateCheck], Entries] = Field(default_factory=list)
    consumers: Annotated[list[ConsumerStage], Entries] = Field(default_factory=list)
    remote: RemoteTier | None = None
    locust_workers: Count = 1

    @property
    def held(self) -> bool:
        return self.verdict == "held"

    def realtime_e2e_p99_ms(self, with_lagging: bool) -> float | None:
        """Worst real-time group's p99 in the stage part without (or with) lagging readers. A stage
        run through a kind's engine has no halves (and no lagging readers): its whole stage."""
        values = []
        for c in self.consumers:
            if c.mode != "realtime":
                continue
            halves = (c.first_half, c.second_half)
            parts = halves if any(h.records for h in halves) else (c.whole,)
            for part in parts:
                if part.lagging_readers == with_lagging and part.e2e_p99_ms is not None:
                    values.append(part.e2e_p99_ms)
        return max(values) if values else None
