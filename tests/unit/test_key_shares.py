"""Keys that land on a topic's partitions in given shares (TopicSpec.key_shares): the clients'
hashes (tuner.driver.key_shares; checked against librdkafka 2.16's own partitioners on a lab,
docs/benchmarks.md), the key table, the engines' use of it (the librdkafka engine's draws, the
corpus the Java engine cycles), the spec field's checks, and `kbt capture` writing the shares."""

from __future__ import annotations

import json
import random
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.capture_records import RDKAFKA, capture_record, client_row
from tuner.core.errors import BadInput
from tuner.driver.corpus import write_corpus
from tuner.driver.key_shares import KeyTable, fnv1a, murmur2, partitioner
from tuner.driver.payload import Payloads, key_tables
from tuner.model.capture import shape
from tuner.spec.loader import load_workload
from tuner.spec.workload import TopicSpec, WorkloadSpec
from tuner.store.capture import CaptureRecord


def _signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def test_murmur2_is_kafkas() -> None:
    # org.apache.kafka.common.utils.UtilsTest.testMurmur2
    cases = {
        b"21": -973932308,
        b"foobar": -790332482,
        b"a-little-bit-long-string": -985981536,
        b"a-little-bit-longer-string": -1486304829,
        b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
        b"abc": 479470107,
    }
    assert {k: _signed(murmur2(k)) for k in cases} == cases


def test_fnv1a_and_crc32_vectors() -> None:
    assert fnv1a(b"") == 0x811C9DC5 and fnv1a(b"a") == 0xE40C292C and fnv1a(b"foobar") == 0xBF9CF968
    assert partitioner("consistent_random") is partitioner("consistent")
    crc = partitioner("consistent_random")
    assert crc is not None and crc(b"123456789", 1 << 31) == 0xCBF43926 % (1 << 31)
    assert partitioner("random") is None


_PARTITIONERS = ("consistent_random", "murmur2", "fnv1a")


@settings(max_examples=60)
@given(
    shares=st.lists(st.sampled_from([0.0, 0.01, 0.5, 1.0, 3.0, 7.5]), min_size=1, max_size=24).filter(
        lambda s: sum(s) > 0
    ),
    cardinality=st.integers(1, 2000),
    name=st.sampled_from(_PARTITIONERS),
    count=st.integers(1, 600),
)
def test_a_table_puts_each_partition_in_its_share(
    shares: list[float], cardinality: int, name: str, count: int
) -> None:
    partition_of = partitioner(name)
    assert partition_of is not None
    table = KeyTable.build(shares, cardinality, partition_of)
    total = sum(shares)
    for p, (share, keys) in enumerate(zip(shares, table.by_partition, strict=True)):
        assert all(partition_of(k, len(shares)) == p for k in keys)
        assert bool(keys) == (share > 0)
        assert table.shares[p] == pytest.approx(share / total)
    assert len(set(table.keys)) == len(table.keys)
    assert len(table.keys) <= cardinality + len(shares)  # about the cardinality, one per partition at least
    allotted = Counter(partition_of(k, len(shares)) for k in table.allotted(count, random.Random(1)))
    assert sum(allotted.values()) == count
    for p, share in enumerate(shares):  # the largest remainder: within one record of the exact count
        assert abs(allotted.get(p, 0) - count * share / total) < 1


def test_draws_follow_the_shares() -> None:
    shares = [0.05, 0.3, 0.0, 0.15, 0.5]
    partition_of = partitioner("consistent_random")
    assert partition_of is not None
    table = KeyTable.build(shares, 500, partition_of)
    rng = random.Random(7)
    seen = Counter(partition_of(table.draw(rng), 5) for _ in range(40_000))
    for p, share in enumerate(shares):
        assert seen.get(p, 0) / 40_000 == pytest.approx(share, abs=0.01)


def _workload(**topic: Any) -> WorkloadSpec:
    return WorkloadSpec.model_validate(
        {
            "name": "w",
            "topics": [{"name": "a", "partitions": 3, **topic}, {"name": "b", "partitions": 2}],
            "rate_per_producer": 10,
            "message": {"kind": "generated", "bytes": 100},
            "keys": {"kind": "random", "cardinality": 50},
            "duration_s": 10,
        }
    )


def test_the_librdkafka_engine_draws_each_topics_keys() -> None:
    workload = _workload(key_shares=[0.0, 0.0, 1.0])
    crc = partitioner("consistent_random")
    assert crc is not None
    payloads = Payloads.for_workload(workload, seed=1, tables=key_tables(workload, crc))
    event = payloads.pool[0]
    first = {crc(payloads.key_for(event, 0) or b"", 3) for _ in range(200)}
    assert first == {2}
    second = {payloads.key_for(event, 1) for _ in range(400)}  # no shares: uniform over 50 keys
    assert len(second) > 40
    assert key_tables(workload, None) == []  # a partitioner that ignores keys: nothing to steer


def test_the_corpus_carries_keys_in_the_shares(tmp_path: Path) -> None:
    workload = _workload(key_shares=[1, 1, 2])
    murmur = partitioner("murmur2")
    assert murmur is not None
    (table, _) = key_tables(workload, murmur, lambda i: b"key-%d" % i)
    assert table is not None and all(k.startswith(b"key-") for k in table.keys)
    path = tmp_path / "corpus.jsonl"
    entries = write_corpus(workload, path, seed=1, keys=table)
    keys = [json.loads(line)["key"].encode() for line in path.read_text().splitlines()]
    assert len(keys) == entries
    counts = Counter(murmur(k, 3) for k in keys)
    assert [counts[p] for p in range(3)] == pytest.approx([entries / 4, entries / 4, entries / 2], abs=1)


_WORKLOAD = """\
name: w
topics: [{{name: t, partitions: 3{extra}}}]
rate_per_producer: 10
message: {{kind: generated, bytes: 100}}
keys: {keys}
duration_s: 10
"""


@pytest.mark.parametrize(
    ("extra", "keys", "shown"),
    [
        (
            ", key_shares: [1, 2]",
            "random",
            "key_shares: 2 share(s) for 3 partition(s); give one per partition",
        ),
        (", key_shares: [0, 0, 0]", "random", "key_shares: all zero; at least one partition takes records"),
        (
            ", key_shares: [1, -1, 1]",
            "random",
            "topics[0].key_shares[1]: must be greater than or equal to 0 (got -1)",
        ),
        (", key_shares: [1, 1, 1]", "none", "topics[0].key_shares needs keys: random"),
    ],
)
def test_bad_key_shares_are_one_line(tmp_path: Path, extra: str, keys: str, shown: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(_WORKLOAD.format(extra=extra, keys=keys))
    with pytest.raises(BadInput) as caught:
        load_workload(path)
    assert "\n" not in caught.value.message
    assert shown in caught.value.message


def test_a_topic_without_key_shares_dumps_as_before() -> None:
    assert "key_shares" not in TopicSpec(name="t", partitions=2).model_dump(mode="json")


def _capture(keyed: bool, partition_records: list[int]) -> CaptureRecord:
    client = client_row("svc-1", RDKAFKA, "1", 1000, "orders", connections=0)
    sample = {
        "topic": "orders",
        "value_bytes": [300] * 100,
        "key_bytes": [3] * 100 if keyed else [],
        "keyless": 0 if keyed else 100,
        "distinct_keys": 80 if keyed else 0,
    }
    topic = {
        "name": "orders",
        "partitions": len(partition_records),
        "replication_factor": 3,
        "leaders": [1, 2, 3, 1][: len(partition_records)],
        "records": sum(partition_records),
        "partition_records": partition_records,
    }
    return capture_record([client], [topic], [sample], broker_ids=[1, 2, 3])


def test_capture_writes_a_keyed_topics_shares() -> None:
    (group,) = shape(_capture(True, [1000, 3000, 0, 6000])).groups
    topic = group.workload["topics"][0]
    assert topic["key_shares"] == [0.1, 0.3, 0.0, 0.6]
    assert group.workload["keys"] == {"kind": "random", "cardinality": 80}
    WorkloadSpec.model_validate(group.workload)  # loads as a spec


def test_capture_leaves_a_keyless_topic_to_its_partitioner() -> None:
    (group,) = shape(_capture(False, [1000, 3000, 0, 6000])).groups
    assert "key_shares" not in group.workload["topics"][0]


def test_crc32_matches_zlib() -> None:
    crc = partitioner("consistent")
    assert crc is not None
    assert all(crc(str(i).encode(), 12) == zlib.crc32(str(i).encode()) % 12 for i in range(100))
