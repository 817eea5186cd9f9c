"""A read-back cut short by its deadline is unverified with its unread count, never a loss (issue:
a 120 s read-back of 14.1 M acked records called the 4.2 M it had not reached "lost"). Real lab,
real client: the records are produced and acked, then read back once with the deadline that follows
the volume and once with a deadline shorter than that read took."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from tuner.driver.delivery.check import verify
from tuner.driver.delivery.ledger import Ledger, RangeFile, tail_key
from tuner.driver.delivery.read import ReadDeadline
from tuner.driver.payload import ID_SHIFT, id_of, with_id

pytestmark = pytest.mark.integration

RECORDS = 60_000
PRODUCER = 3


CUT_S = 0.005  # far shorter than any read of RECORDS: a consumer's first fetch alone takes longer


def _short(took_s: float) -> ReadDeadline:
    """A deadline shorter than the read: a quarter of what the whole read took, at most CUT_S (a
    second read of the same topic can be several times faster than the first: cached, warmed up)."""
    limit = min(took_s / 4, CUT_S)
    return ReadDeadline(min_s=limit, floor_per_s=1e12, stall_s=limit, max_s=limit)


def _produce(bootstrap: str, topic: str, tmp_path: Path) -> tuple[Path, Path]:
    """RECORDS acked records whose value ends with the engine's id (producer << 40 | sequence):
    the range file and the acked file (`partition offset id`) the engines write."""
    acked: list[str] = []

    def report(err: Any, msg: Any) -> None:
        assert err is None, err
        acked.append(f"{msg.partition()} {msg.offset()} {id_of(msg.value())}")

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"})
    for seq in range(RECORDS):
        rid = PRODUCER << ID_SHIFT | seq
        while True:
            try:
                producer.produce(topic, with_id(b"x" * 100, rid), on_delivery=report)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert len(acked) == RECORDS
    ranges, acked_file = tmp_path / "ranges.json", tmp_path / "acked.txt"
    RangeFile(topic_index=0, topics=1, produced={PRODUCER: RECORDS}).write(ranges)
    acked_file.write_text("\n".join(acked) + "\n")
    return ranges, acked_file


def test_a_read_back_cut_short_is_unverified_with_its_unread_count_never_lost(
    lab: Any, make_topic: Any, tmp_path: Path
) -> None:
    topic = make_topic(partitions=3, replication=1)
    ranges, acked_file = _produce(lab.bootstrap_servers, topic, tmp_path)

    # The deadline that follows the volume and the read rate reaches a verdict.
    def ranges_read(deadline: ReadDeadline | None = None) -> Any:
        ledger = Ledger(topics=[topic]).read_range_files([ranges])
        return verify(lab.bootstrap_servers, ledger, tail_key, deadline).result()

    def acked_read(deadline: ReadDeadline | None = None) -> Any:
        ledger = Ledger(topics=[topic]).read_acked_files(topic, [acked_file])
        return verify(lab.bootstrap_servers, ledger, tail_key, deadline).result()

    whole = ranges_read()
    assert whole.verified and (whole.lost, whole.unread, whole.consumed) == (0, 0, RECORDS)
    whole_acked = acked_read()
    assert whole_acked.verified and (whole_acked.lost, whole_acked.unread) == (0, 0)
    assert whole_acked.consumed == RECORDS

    # The same topic again with a deadline a quarter of what the whole read took.
    assert whole.read_back_s is not None and whole_acked.read_back_s is not None
    cut = ranges_read(_short(whole.read_back_s))
    assert not cut.verified
    assert cut.lost == 0 and cut.unread > 0
    assert cut.consumed + cut.unread == cut.acked == RECORDS
    assert cut.read_back_limit_s == pytest.approx(min(whole.read_back_s / 4, CUT_S), abs=1e-3)

    short = _short(whole_acked.read_back_s)
    cut_acked = acked_read(short)
    assert not cut_acked.verified and cut_acked.lost == 0 and cut_acked.unread > 0
    assert cut_acked.consumed + cut_acked.unread == RECORDS
