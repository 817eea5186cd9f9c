"""The four Kafka codecs, framed the way Kafka producers write them, from the libraries themselves.

- gzip: zlib's DEFLATE in a gzip container (wbits 31), as Java's GZIPOutputStream and librdkafka write.
- snappy: python-snappy's raw snappy block (librdkafka and Sarama; the Java producer wraps the same
  blocks in xerial framing, 32 KB chunks).
- lz4: the LZ4 frame format with independent 64 KB blocks and no checksums, as Kafka's
  KafkaLZ4BlockOutputStream and librdkafka write it (KIP-57).
- zstd: a zstandard frame.

The callables are the library functions themselves (bound methods or functools.partial, both
C-level), so calling them costs what calling the library costs.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import lz4.frame
import snappy
import zstandard

from tuner.spec.probe import CodecLevel

Transform = Callable[[bytes], bytes]


@dataclass(frozen=True)
class BoundCodec:
    spec: CodecLevel
    compress: Transform
    decompress: Transform


def bind(spec: CodecLevel) -> BoundCodec:
    """The compress/decompress pair for one codec at one level."""
    level = spec.level
    if spec.codec == "gzip":
        return BoundCodec(
            spec,
            functools.partial(zlib.compress, level=6 if level is None else level, wbits=31),
            functools.partial(zlib.decompress, wbits=31),
        )
    if spec.codec == "snappy":
        return BoundCodec(spec, snappy.compress, snappy.uncompress)
    if spec.codec == "lz4":
        return BoundCodec(
            spec,
            functools.partial(
                lz4.frame.compress,
                compression_level=0 if level is None else level,
                block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                block_linked=False,
                content_checksum=False,
                block_checksum=False,
                store_size=False,
            ),
            lz4.frame.decompress,
        )
    if spec.codec == "zstd":
        compressor = zstandard.ZstdCompressor(level=3 if level is None else level)
        return BoundCodec(spec, compressor.compress, zstandard.ZstdDecompressor().decompress)
    raise ValueError(f"unknown codec {spec.codec}")  # pragma: no cover - CodecLevel forbids it


def library_versions() -> dict[str, str]:
    """The codec libraries measured, for the probe record."""
    out = {"zlib": zlib.ZLIB_RUNTIME_VERSION}
    for dist in ("python-snappy", "lz4", "zstandard"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover - installed with kbt
            out[dist] = "unknown"
    return out
