"""Kafka v2 record batch framing (KIP-98, `DefaultRecord` / `DefaultRecordBatch`), as a producer
builds it before compression.

A batch is a 61-byte header followed by the records section; a compressed batch compresses the
records section only and keeps the header as it is. Each record is

    length: varint, attributes: int8, timestampDelta: varlong, offsetDelta: varint,
    keyLength: varint, key: bytes, valueLength: varint, value: bytes, headerCount: varint

with zigzag varints and a null key written as length -1. The probe's records are keyless and
headerless (what Filebeat and most log shippers send) and stamped 1 ms apart.
"""

from __future__ import annotations

from collections.abc import Sequence

TIMESTAMP_STEP_MS = 1


def zigzag_varint(value: int) -> bytes:
    """Kafka's signed varint/varlong: zigzag, then 7 bits per byte, low group first."""
    v = (value << 1) ^ (value >> 63)
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


_SMALL = [zigzag_varint(i) for i in range(1 << 14)]
_NULL_KEY = zigzag_varint(-1)
_NO_HEADERS = zigzag_varint(0)


def _varint(value: int) -> bytes:
    return _SMALL[value] if 0 <= value < len(_SMALL) else zigzag_varint(value)


def encode_record(offset_delta: int, timestamp_delta: int, value: bytes) -> bytes:
    """One keyless record, its length prefix included."""
    body = b"".join(
        (
            b"\x00",  # attributes (unused)
            _varint(timestamp_delta),
            _varint(offset_delta),
            _NULL_KEY,
            _varint(len(value)),
            value,
            _NO_HEADERS,
        )
    )
    return _varint(len(body)) + body


def records_section(values: Sequence[bytes]) -> bytes:
    """The records of one batch of keyless, headerless messages: what the codec compresses."""
    return b"".join(encode_record(i, i * TIMESTAMP_STEP_MS, value) for i, value in enumerate(values))
