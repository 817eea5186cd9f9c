"""Delivery verification for a stress run: read the topics back (most of it from the remote tier by
then) up to the highest acked offsets and find every acked record, by id, per stage.

Acked records come as sequence runs per producer and stage (tally.Tally); a bitmap per
producer marks what was read, so millions of records need a few MB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tuner.driver.payload import ID_SHIFT, SEQ_MASK, id_of
from tuner.driver.read_back import ReadDeadline, consume, verify_consumer
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


def verify_stress(
    bootstrap: str,
    tally: Tally,
    deadline: ReadDeadline | None = None,
    security: Mapping[str, str] | None = None,
) -> StressDelivery:
    """Read every partition up to its highest acked offset and check each acked record is there
    (`security`: the target's librdkafka client security). The read's deadline follows the volume
    and the read rate; records it had not reached by then are unread, not lost."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    tally.flush_acked()
    top: dict[int, int] = {}
    for pid, per in tally.acked.items():
        top[pid] = max((hi for runs in per.values() for _, hi in runs), default=-1)
    seen = {pid: bytearray(hi + 1) for pid, hi in top.items()}
    acked_by_stage: dict[int, int] = {}
    for per in tally.acked.values():
        for stage, runs in per.items():
            acked_by_stage[stage] = acked_by_stage.get(stage, 0) + sum(hi - lo + 1 for lo, hi in runs)
    acked = sum(acked_by_stage.values())
    remaining = {(t, p): o for t, parts in tally.max_offsets.items() for p, o in parts.items() if o >= 0}
    if not remaining:
        return StressDelivery(verified=True, acked=acked, acked_by_stage=acked_by_stage)
    consumer = verify_consumer(bootstrap, security)
    duplicates = 0
    try:
        consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in remaining])
        clock = (deadline or ReadDeadline()).start(acked)
        read = 0
        while remaining and not clock.expired():
            batch = consume(consumer, 2000)
            read += len(batch)
            clock.progress(read)
            for msg in batch:
                ident = id_of(msg.value() or b"")
                if ident is not None:
                    rid = int(ident, 16)
                    bits = seen.get(rid >> ID_SHIFT)
                    seq = rid & SEQ_MASK
                    if bits is not None and seq < len(bits):
                        if bits[seq]:
                            duplicates += 1
                        bits[seq] = 1
                key = (msg.topic() or "", msg.partition() or 0)
                offset = msg.offset()
                if offset is not None and offset >= remaining.get(key, 1 << 62):
                    remaining.pop(key, None)
    finally:
        consumer.close()
    lost_by_stage: dict[int, int] = {}
    found = 0
    for pid, per in tally.acked.items():
        bits = seen[pid]
        for stage, runs in per.items():
            hit = sum(sum(bits[lo : hi + 1]) for lo, hi in runs)
            found += hit
            missing = sum(hi - lo + 1 for lo, hi in runs) - hit
            if missing:
                lost_by_stage[stage] = lost_by_stage.get(stage, 0) + missing
    detail = (
        f"{len(remaining)} partitions not read to their last acked offset within {clock.limit_s:.0f} s:"
        f" {acked - found} acked records unread (not counted lost)"
        if remaining
        else ""
    )
    return StressDelivery(
        verified=not remaining,
        acked=acked,
        consumed=found,
        duplicates=duplicates,
        lost_by_stage=lost_by_stage if not remaining else {},
        acked_by_stage=acked_by_stage,
        detail=detail,
    )
