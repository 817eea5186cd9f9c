"""Delivery verification for a stress run on locust: the tally's acked sequence runs per producer
and stage, read into a Ledger and judged by the one checker (tuner.driver.delivery.check) after the
topics are read back (most of it from the remote tier by then) up to the highest acked offsets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tuner.driver.delivery.check import verify
from tuner.driver.delivery.ledger import Ledger, tail_key
from tuner.driver.stress.tally import Tally


@dataclass
class StressDelivery:
    verified: bool
    acked: int = 0
    consumed: int = 0  # acked records found
    duplicates: int = 0
    lost_by_stage: dict[int, int] = field(default_factory=dict)
    acked_by_stage: dict[int, int] = field(default_factory=dict)
    detail: str = ""

    @property
    def lost(self) -> int:
        return sum(self.lost_by_stage.values())


def verify_stress(bootstrap: str, tally: Tally, security: Mapping[str, str] | None = None) -> StressDelivery:
    """Every acked record looked for, by stage (`security`: the target's librdkafka client
    security). Records the read had not reached by its deadline are unread, not lost."""
    tally.flush_acked()
    ledger = Ledger(topics=sorted(tally.max_offsets))
    for pid, per in tally.acked.items():
        for stage, runs in per.items():
            ledger.add_runs(stage, pid, runs)
    for topic, parts in tally.max_offsets.items():
        for partition, offset in parts.items():
            ledger.offset(topic, partition, offset)
    verdict = verify(bootstrap, ledger, tail_key, security=security)
    return StressDelivery(
        verified=verdict.complete,
        acked=verdict.acked,
        consumed=verdict.found,
        duplicates=verdict.duplicates,
        lost_by_stage=verdict.missing_by_group if verdict.complete else {},
        acked_by_stage=verdict.acked_by_group,
        detail=""
        if verdict.complete
        else f"{verdict.short} partitions not read to their last acked offset within"
        f" {verdict.limit_s or 0:.0f} s: {verdict.missing} acked records unread (not counted lost)",
    )
