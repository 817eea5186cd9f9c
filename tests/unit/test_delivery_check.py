"""The one delivery checker's judging, without a broker: what a read saw (Marks) against what was
acked (Ledger), for every form an engine reports in. The read-back itself runs against real
brokers in the integration tier (test_read_back_deadline.py and every engine's tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.driver.delivery.check import Marks, judge
from tuner.driver.delivery.ledger import MAX_SEQUENCE, Ledger, event_key, key_of_id, tail_key
from tuner.driver.payload import ID_SHIFT, with_id


def test_every_engine_s_record_names_its_key() -> None:
    assert tail_key(with_id(b"x" * 64, 7 << ID_SHIFT | 12)) == (7, 12)  # librdkafka and Java
    assert event_key(b'{"message":"a","kbt":{"id":"3-41"}}') == (3, 41)  # the Sarama engine
    assert key_of_id("0000070000000009") == (7, 9) and key_of_id("2-5") == (2, 5)
    for bad in ("", "xyz", "12", "a-b", "-"):
        assert key_of_id(bad) is None
    assert tail_key(b"no id here") is None and event_key(b'{"kbt":{"id":"') is None


def test_marks_count_duplicates_order_and_foreign_records() -> None:
    marks = Marks()
    for partition, key in [(0, (1, 0)), (0, (1, 2)), (1, (1, 1)), (0, (2, 0))]:
        assert marks.see(partition, key)
    assert not marks.see(0, (1, 2))  # a second copy
    assert (marks.distinct, marks.duplicates, marks.out_of_order) == (4, 1, 0)  # partitions interleave
    assert marks.see(0, (2, 5)) and marks.see(0, (2, 3))  # 3 after 5 in one partition
    assert marks.out_of_order == 1
    assert not marks.see(0, None) and not marks.see(0, (9, MAX_SEQUENCE))
    assert marks.foreign == 2


def test_order_is_per_partition_of_each_topic() -> None:
    """A producer's sequences alternate between the run's topics: partition 0 of one topic read
    after partition 0 of the other is not disorder."""
    marks = Marks()
    for seq in (0, 2, 4):
        marks.see(("a", 0), (1, seq))
    for seq in (1, 3, 5):
        marks.see(("b", 0), (1, seq))
    assert marks.out_of_order == 0
    marks.see(("b", 0), (1, 2))  # a first copy? no: read from topic a, a duplicate
    marks.see(("a", 0), (1, 0))
    assert (marks.duplicates, marks.out_of_order) == (2, 0)
    assert marks.see(("b", 0), (1, 7))
    assert marks.see(("b", 0), (1, 6)) and marks.out_of_order == 1  # 6 after 7 in one partition


def test_marks_see_second_copies_as_duplicates_only() -> None:
    marks = Marks()
    assert marks.see(1, (1, 1)) and marks.see(0, (1, 3))
    assert not marks.see(0, (1, 1))  # read before, from partition 1: a duplicate, not disorder
    assert (marks.duplicates, marks.out_of_order) == (1, 0)


def test_a_read_that_reached_its_end_counts_the_missing_as_lost() -> None:
    ledger = Ledger(topics=["t"])
    ledger.add(1, 0, 10)
    ledger.drop(1, 4)  # reported failed: not owed
    marks = Marks()
    for seq in (0, 1, 2, 3, 5, 6, 4):
        marks.see(0, (1, seq))
    verdict = judge(ledger, marks, reached_end=True)
    result = verdict.result(failed=1)
    assert (result.acked, result.consumed, result.lost, result.unread) == (9, 6, 3, 0)
    assert result.verified and result.failed == 1 and result.out_of_order == 1
    cut = judge(ledger, marks, reached_end=False, short=2).result()
    assert not cut.verified and (cut.lost, cut.unread) == (0, 3)  # unread, never lost


def test_records_whose_ack_is_unknown_are_never_lost() -> None:
    ledger = Ledger(topics=["a", "b"], unknown=2)
    ledger.add(0, 0, 6, step=2)  # topic a's sequences of a two-topic run
    ledger.add(0, 1, 6, step=2)  # topic b's
    marks = Marks()
    for seq in range(4):
        marks.see(0, (0, seq))
    verdict = judge(ledger, marks, reached_end=False)
    assert verdict.complete and verdict.result().lost == 0  # two missing, two unknown: whole
    assert verdict.result(indeterminate=2).acked == 4


def test_groups_report_what_each_stage_lost() -> None:
    ledger = Ledger(topics=["t"])
    ledger.add_runs(0, 5, [[0, 9]])
    ledger.add_runs(1, 5, [[10, 14], [20, 24]])
    marks = Marks()
    for seq in [*range(10), *range(10, 13), *range(20, 25)]:
        marks.see(0, (5, seq))
    verdict = judge(ledger, marks, reached_end=True)
    assert verdict.acked_by_group == {0: 10, 1: 10} and verdict.missing_by_group == {1: 2}


def test_tailed_pods_owe_every_written_line() -> None:
    ledger = Ledger(topics=["logs"])
    ledger.add_written({0: 3, 1: 2})
    marks = Marks()
    for key in [(0, 0), (0, 1), (0, 2), (1, 0), (7, 0)]:  # pod 7 wrote nothing here
        marks.see(0, key)
    result = judge(ledger, marks, reached_end=True).result()
    assert (result.acked, result.consumed, result.lost) == (5, 4, 1)


def test_a_report_naming_an_impossible_sequence_is_refused(tmp_path: Path) -> None:
    (tmp_path / "acked.txt").write_text(f"0 1 {(3 << ID_SHIFT) | (MAX_SEQUENCE + 1):016x}\n")
    with pytest.raises(BadInput, match="sequence"):
        Ledger(topics=["t"]).read_acked_files("t", [tmp_path / "acked.txt"])


@given(
    acked=st.sets(st.tuples(st.integers(0, 3), st.integers(0, 200)), max_size=80),
    read=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4), st.integers(0, 220)), max_size=160),
    reached=st.booleans(),
)
def test_the_verdict_adds_up_for_any_read(
    acked: set[tuple[int, int]], read: list[tuple[int, int, int]], reached: bool
) -> None:
    ledger = Ledger(topics=["t"])
    for producer, seq in acked:
        ledger.add(producer, seq, seq + 1)
    marks = Marks()
    for partition, producer, seq in read:
        marks.see(partition, (producer, seq))
    found = len(acked & {(p, s) for _, p, s in read})
    result = judge(ledger, marks, reached_end=reached).result()
    assert result.acked == len(acked) and result.consumed == found
    assert result.lost + result.unread == len(acked) - found
    assert result.verified == (reached or found == len(acked))
    assert result.duplicates == len(read) - len({(p, s) for _, p, s in read})
