"""The probe frames records exactly as a Kafka v2 record batch and its compressed batches are ones a
Kafka client reads back: checked against kafka-python's own record-batch builder and reader."""

from __future__ import annotations

import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from tuner.measure.codecs import bind
from tuner.measure.record_batch import records_section, zigzag_varint
from tuner.spec.limits import BATCH_HEADER_BYTES
from tuner.spec.probe import CODECS, DEFAULT_LEVELS, CodecLevel

VALUES = [b"", b"x", b"2015-10-18 18:01:47,978 INFO [main] MRAppMaster: Created", b"y" * 300, b"z" * 20_000]
KAFKA_CODEC_ID = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def test_records_section_matches_kafka_builder() -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=10**7,
    )  # fmt: skip
    for i, value in enumerate(VALUES):
        builder.append(i, timestamp=1_000 + i, key=None, value=value, headers=[])
    batch = bytes(builder.build())
    assert batch[BATCH_HEADER_BYTES:] == records_section(VALUES)
    assert len(batch) == BATCH_HEADER_BYTES + len(records_section(VALUES))


@pytest.mark.parametrize("value", [0, 1, -1, 63, 64, -65, 300, 2**31 - 1, -(2**31), 2**40])
def test_zigzag_varint_matches_kafka(value: int) -> None:
    from kafka.record.util import encode_varint

    out = bytearray()
    encode_varint(value, out.append)
    assert zigzag_varint(value) == bytes(out)


def _batch(codec: str, compressed: bytes, count: int) -> bytes:
    """A v2 batch around a compressed records section, with a real CRC-32C."""
    last = count - 1
    tail = struct.pack(">hiqqqhii", KAFKA_CODEC_ID[codec], last, 1_000, 1_000 + last, -1, -1, -1, count)
    tail += compressed
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(tail), -1, 2, calc_crc32c(tail)) + tail


@pytest.mark.parametrize("codec", CODECS)
def test_compressed_batch_reads_back_in_a_kafka_client(codec: str) -> None:
    spec = CodecLevel(codec=codec, level=DEFAULT_LEVELS.get(codec))  # type: ignore[arg-type]
    bound = bind(spec)
    section = records_section(VALUES)
    compressed = bound.compress(section)
    batch = DefaultRecordBatch(bytearray(_batch(codec, compressed, len(VALUES))))
    assert batch.validate_crc()
    assert batch.compression_type == KAFKA_CODEC_ID[codec]
    records = list(batch)
    assert [r.value for r in records] == VALUES
    assert [r.offset for r in records] == list(range(len(VALUES)))
    assert bound.decompress(compressed) == section


def test_levels_change_the_output() -> None:
    section = records_section([b"INFO request %d took %d ms" % (i, i % 7) for i in range(2000)])
    fast = bind(CodecLevel(codec="zstd", level=1)).compress(section)
    slow = bind(CodecLevel(codec="zstd", level=19)).compress(section)
    assert len(slow) < len(fast)
    gz1 = bind(CodecLevel(codec="gzip", level=1)).compress(section)
    gz9 = bind(CodecLevel(codec="gzip", level=9)).compress(section)
    assert len(gz9) < len(gz1)
