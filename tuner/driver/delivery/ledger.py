"""What a run sent and had acknowledged, in the one form every engine's report is read into.

A record is known by its key, (producer, sequence): the librdkafka and Java engines put
`producer << 40 | sequence` as 16 hex digits at the end of every value, the Sarama engine puts
`"kbt":{"id":"<pod>-<seq>"}` in its event document, and the tailed pods (real Filebeat, the
collector) write `<pod>-<seq>` into every log line. An engine reports what was acked in one of
these forms, each read into a `Ledger` here:
- acked files, one `partition offset id` line per acked record (`Ledger.read_acked_files`);
- range files, the sequences each producer handed to the client less the failed ones, for a closed
  loop that asks for error reports only (`RangeFile`, `Ledger.read_range_files`);
- sequence runs per producer and stage (`Ledger.add_runs`: a stress run's tally), or per pod the
  count of lines written (`Ledger.add_written`).
tuner.driver.delivery.check reads the topics back against a Ledger and judges it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from tuner.core.errors import BadInput
from tuner.core.frozen import Frozen
from tuner.driver.payload import ID_BYTES, ID_MARK, ID_SHIFT, SEQ_MASK, id_of

Key = tuple[int, int]  # (producer, sequence)
EVENT_MARK = b'"kbt":{"id":"'
# A producer's sequences are dense from 0; one beyond this is no record of kbt's (its bitmap would
# not fit in memory).
MAX_SEQUENCE = 1 << 32


def tail_key(value: bytes) -> Key | None:
    """The key at the end of a librdkafka or Java engine record (` kbtid=` and 16 hex digits)."""
    if value[-ID_BYTES:-16] == ID_MARK:  # the engines' own layout: no search (millions per read)
        try:
            rid = int(value[-16:], 16)
        except ValueError:
            return None
        return rid >> ID_SHIFT, rid & SEQ_MASK
    ident = id_of(value)
    return None if ident is None else key_of_id(ident)


def event_key(value: bytes) -> Key | None:
    """The key in a Sarama engine event document (`"kbt":{"id":"<pod>-<seq>"}` at its end)."""
    at = value.rfind(EVENT_MARK)
    end = value.find(b'"', at + len(EVENT_MARK)) if at >= 0 else -1
    return key_of_id(value[at + len(EVENT_MARK) : end].decode("ascii", "replace")) if end > 0 else None


def key_of_id(ident: str) -> Key | None:
    """The key an id names: 16 hex digits (producer << 40 | sequence) or `pod-seq`."""
    try:
        if "-" in ident:
            pod, _, seq = ident.partition("-")
            return int(pod), int(seq)
        if len(ident) != 16:
            return None
        rid = int(ident, 16)
    except ValueError:
        return None
    return rid >> ID_SHIFT, rid & SEQ_MASK


class RangeFile(Frozen):
    """One process's records of one topic: producer p sent sequences k, k + n, k + 2n, ... below
    produced[p] to this topic (k = the topic's index, n = the number of topics)."""

    topic_index: int
    topics: int
    produced: dict[int, int] = Field(default_factory=dict)  # producer -> sequences handed to produce()
    failed: list[int] = Field(default_factory=list)  # record ids reported failed (this topic's)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.model_dump()), encoding="utf-8")  # producer ids as JSON keys: text

    @classmethod
    def read(cls, path: Path) -> RangeFile:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


@dataclass
class Ledger:
    """Per producer, one byte per sequence (1: acked); the last acked offset of each partition when
    the engine logged offsets (else `topics` are read to their ends); the sequence runs of each
    group (a stress stage) when the engine reported them."""

    topics: list[str]
    acked: dict[int, bytearray] = field(default_factory=dict)
    last_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    groups: list[tuple[int, int, int, int]] = field(default_factory=list)  # (group, producer, lo, hi)
    # Records counted in `acked` whose ack is not known (still queued when a drain timed out): one
    # that is missing is not lost.
    unknown: int = 0

    def add(self, producer: int, lo: int, end: int, step: int = 1) -> None:
        """Sequences lo, lo + step, ... below `end` acked."""
        if end <= lo:
            return
        if lo < 0 or end > MAX_SEQUENCE:
            raise BadInput(f"a delivery report names sequence {end - 1} of producer {producer}: not kbt's")
        marks = self.acked.setdefault(producer, bytearray())
        if end > len(marks):
            marks.extend(bytes(end - len(marks)))
        marks[lo:end:step] = b"\x01" * len(range(lo, end, step))

    def drop(self, producer: int, seq: int) -> None:
        """A sequence reported failed: not acked."""
        marks = self.acked.get(producer)
        if marks is not None and 0 <= seq < len(marks):
            marks[seq] = 0

    def add_runs(self, group: int, producer: int, runs: Iterable[Iterable[int]]) -> None:
        """Inclusive [lo, hi] runs of sequences acked in `group`."""
        for lo, hi in runs:
            self.add(producer, lo, hi + 1)
            self.groups.append((group, producer, lo, hi))

    def add_written(self, written: dict[int, int]) -> None:
        """Per pod, the lines written (every written line is owed to the topic)."""
        for pod, n in written.items():
            self.add(pod, 0, n)

    def offset(self, topic: str, partition: int, offset: int) -> None:
        """An acked record's offset: the read goes at least that far."""
        if offset >= 0 and offset > self.last_offsets.get((topic, partition), -1):
            self.last_offsets[(topic, partition)] = offset

    @property
    def total(self) -> int:
        return sum(len(m) - m.count(0) for m in self.acked.values())

    def read_acked_files(self, topic: str, paths: Iterable[Path]) -> Ledger:
        """The acked records of `topic`, from `partition offset id` lines (a file not written: none)."""
        for path in paths:
            if not path.is_file():
                continue
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    parts = line.split()
                    key = key_of_id(parts[2]) if len(parts) == 3 else None
                    if key is not None:
                        self.add(key[0], key[1], key[1] + 1)
                        self.offset(topic, int(parts[0]), int(parts[1]))
        return self

    def read_range_files(self, paths: Iterable[Path]) -> Ledger:
        """The records each process handed to the client for a topic, less the failed ones (no
        offsets: the topics are then read to their ends)."""
        for path in paths:
            if path.is_file():
                ranges = RangeFile.read(path)
                for producer, n in ranges.produced.items():
                    self.add(producer, ranges.topic_index, n, step=max(1, ranges.topics))
                for rid in ranges.failed:
                    self.drop(rid >> ID_SHIFT, rid & SEQ_MASK)
        return self
