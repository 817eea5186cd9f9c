"""`kbt probe compression` options: codecs, levels and batch sizes parse, or fail with one clear line."""

from __future__ import annotations

import pytest

from tuner.core.errors import BadInput
from tuner.spec.probe import (
    DEFAULT_BATCH_SIZES,
    build_options,
    parse_batch_sizes,
    parse_codecs,
    parse_levels,
)


def test_defaults_cover_four_codecs_at_client_default_levels() -> None:
    options = build_options("gzip,snappy,lz4,zstd", [], None, None, 40, 1)
    assert [c.label for c in options.codecs] == ["gzip-6", "snappy", "lz4-0", "zstd-3"]
    assert options.batch_sizes == DEFAULT_BATCH_SIZES == tuple(2**i for i in range(13))


def test_levels_per_codec_and_for_all() -> None:
    options = build_options("gzip,zstd,snappy", ["zstd=1,3,9", "gzip=4"], "1,8", None, 10, 1)
    assert [c.label for c in options.codecs] == ["gzip-4", "zstd-1", "zstd-3", "zstd-9", "snappy"]
    assert parse_levels(["2"], ["gzip", "zstd", "snappy"]) == {"gzip": [2], "zstd": [2]}


def test_doubling_series() -> None:
    assert parse_batch_sizes("1,2,4,...,64") == (1, 2, 4, 8, 16, 32, 64)
    assert parse_batch_sizes("1,...,8") == (1, 2, 4, 8)
    assert parse_batch_sizes("1,10,...,1000") == (1, 10, 100, 1000)
    assert parse_batch_sizes("64, 16,16") == (16, 64)


def test_codecs_keep_order_and_drop_repeats() -> None:
    assert parse_codecs("ZSTD,gzip,zstd") == ["zstd", "gzip"]


@pytest.mark.parametrize(
    ("codecs", "levels", "sizes", "expected"),
    [
        ("gzip,brotli", [], None, 'unknown codec "brotli"'),
        ("zstdd", [], None, 'unknown codec "zstdd" (did you mean "zstd"?)'),
        ("", [], None, "no codec given"),
        ("zstd", ["zstd=30"], None, "level 30 is outside 1..22 for zstd"),
        ("gzip", ["0"], None, "level 0 is outside 1..9 for gzip"),
        ("lz4", ["lz4=17"], None, "level 17 is outside 0..16 for lz4"),
        ("snappy", ["snappy=1"], None, "snappy has no compression levels"),
        ("snappy", ["3"], None, "none of --codecs (snappy) has compression levels"),
        ("gzip", ["zstd=3"], None, "zstd is not among --codecs"),
        ("gzip", ["gzip=fast"], None, "'fast' is not a whole number"),
        ("gzip", [], "0", "0 messages per batch; a batch holds at least 1 message"),
        ("gzip", [], "1,-4", "-4 messages per batch"),
        ("gzip", [], "1,x", "'x' is not a whole number"),
        ("gzip", [], "...,4", "'...' needs a size on each side"),
        ("gzip", [], "2000000", "above 1,000,000"),
    ],
)
def test_bad_options_are_one_line(codecs: str, levels: list[str], sizes: str | None, expected: str) -> None:
    with pytest.raises(BadInput) as err:
        build_options(codecs, levels, sizes, None, 40, 1)
    assert expected in err.value.message
    assert "\n" not in err.value.message


def test_bad_counts() -> None:
    with pytest.raises(BadInput, match="--event-bytes"):
        build_options("gzip", [], None, 0, 40, 1)
    with pytest.raises(BadInput, match="--batches"):
        build_options("gzip", [], None, None, 0, 1)
