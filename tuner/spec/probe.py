"""Options of `kbt probe compression`: which codecs and levels, which batch sizes, how events are cut.

Pure data and its parsing. Every problem is one `BadInput` line (exit 2), e.g.

    --codecs: unknown codec "zstdd" (did you mean "zstd"?)
    --levels: level 30 is outside 1..22 for zstd
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from tuner.core.errors import BadInput, did_you_mean
from tuner.core.numbers import cut_value, parse_int
from tuner.spec.base import StrictModel
from tuner.spec.clients import KINDS
from tuner.spec.limits import MAX_SEED

Codec = Literal["gzip", "snappy", "lz4", "zstd"]
CODECS: tuple[Codec, ...] = ("gzip", "snappy", "lz4", "zstd")

# Levels the codec libraries accept. gzip: zlib 1..9 (Kafka's compression.gzip.level range);
# lz4: the lz4 frame library 0..16 (3 and up is LZ4HC); zstd: 1..22. snappy has no levels.
LEVEL_RANGES: dict[str, tuple[int, int]] = {"gzip": (1, 9), "lz4": (0, 16), "zstd": (1, 22)}
# The level each codec gets when --levels does not name it: the producer clients' defaults
# (librdkafka/Java gzip 6, librdkafka lz4 0 = fast, zstd 3).
DEFAULT_LEVELS: dict[str, int] = {"gzip": 6, "lz4": 0, "zstd": 3}

# Which client kinds can send each codec: each kind's own `codecs` (tuner/spec/clients/), so a kind
# added to the registry takes part in the probe's advice (Filebeat's Kafka output offers no zstd).
CLIENT_CODECS: dict[str, tuple[Codec, ...]] = {
    name: tuple(c for c in CODECS if c in kind.codecs) for name, kind in KINDS.items()
}

DEFAULT_BATCH_SIZES: tuple[int, ...] = tuple(2**i for i in range(13))  # 1 .. 4096
MAX_BATCH_MESSAGES = 1_000_000  # librdkafka's batch.num.messages ceiling
MAX_EVENT_BYTES = 16 * 1024 * 1024
# Points on one curve: 1 to 10^6 doubling is 21; each point costs a pass over the sample.
MAX_BATCH_SIZES = 64
# Every level of every codec once: 9 gzip + 17 lz4 + 22 zstd + snappy.
MAX_CODEC_LEVELS = 49
DEFAULT_BATCHES = 40


class CodecLevel(StrictModel):
    """One codec at one level (`None` for snappy, which has none)."""

    codec: Codec = Field(description="gzip, snappy, lz4 or zstd.")
    level: int | None = Field(
        default=None,
        ge=0,
        le=max(high for _, high in LEVEL_RANGES.values()),
        description="Compression level; null for snappy.",
    )

    @property
    def label(self) -> str:
        return self.codec if self.level is None else f"{self.codec}-{self.level}"

    def clients(self) -> list[str]:
        """The producer clients that can send this codec."""
        return [client for client, codecs in CLIENT_CODECS.items() if self.codec in codecs]


class ProbeOptions(StrictModel):
    """What to measure. Files are probed one by one; each is a sample of its own."""

    codecs: tuple[CodecLevel, ...] = Field(
        min_length=1, max_length=MAX_CODEC_LEVELS, description="Codec/level pairs measured."
    )
    batch_sizes: tuple[Annotated[int, Field(ge=1, le=MAX_BATCH_MESSAGES)], ...] = Field(
        min_length=1, max_length=MAX_BATCH_SIZES, description="Messages per batch asked for, ascending."
    )
    event_bytes: int | None = Field(
        default=None, gt=0, le=MAX_EVENT_BYTES, description="Lines joined into events of about N bytes."
    )
    batches: int = Field(
        default=DEFAULT_BATCHES, ge=1, le=10_000, description="Batches (random starts) measured per point."
    )
    seed: int = Field(default=1, ge=0, le=MAX_SEED, description="Seed for the start positions.")


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _int(text: str, flag: str) -> int:
    try:
        return parse_int(text, flag)
    except ValueError:
        raise BadInput(f"{flag}: {cut_value(text)} is not a whole number") from None


def parse_codecs(text: str) -> list[Codec]:
    """`gzip,snappy` -> ["gzip", "snappy"], in the given order, without repeats."""
    names = _split(text)
    if not names:
        raise BadInput(f"--codecs: no codec given (choose from {', '.join(CODECS)})")
    out: list[Codec] = []
    for name in names:
        lowered = name.lower()
        if lowered not in CODECS:
            raise BadInput(
                f'--codecs: unknown codec "{name}"{did_you_mean(lowered, CODECS)}'
                f" (choose from {', '.join(CODECS)})"
            )
        codec = next(c for c in CODECS if c == lowered)
        if codec not in out:
            out.append(codec)
    return out


def parse_levels(specs: Sequence[str], codecs: Sequence[Codec]) -> dict[str, list[int]]:
    """`--levels` values: `zstd=1,3,9` names a codec; bare `1,3` applies to every selected codec
    that has levels. Codecs not named keep DEFAULT_LEVELS."""
    levelled = [c for c in codecs if c in LEVEL_RANGES]
    out: dict[str, list[int]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if sep:
            codec = name.strip().lower()
            if codec == "snappy":
                raise BadInput("--levels: snappy has no compression levels")
            if codec not in CODECS:
                raise BadInput(f'--levels: unknown codec "{name.strip()}"{did_you_mean(codec, CODECS)}')
            if codec not in codecs:
                raise BadInput(f"--levels: {codec} is not among --codecs ({', '.join(codecs)})")
            targets = [codec]
        else:
            values = name
            targets = levelled
            if not targets:
                raise BadInput(f"--levels: none of --codecs ({', '.join(codecs)}) has compression levels")
        levels = [_int(v, "--levels") for v in _split(values)]
        if not levels:
            raise BadInput(f"--levels: no level given in {spec!r}")
        for codec in targets:
            low, high = LEVEL_RANGES[codec]
            for level in levels:
                if not low <= level <= high:
                    raise BadInput(f"--levels: level {level} is outside {low}..{high} for {codec}")
            merged = out.setdefault(codec, [])
            merged.extend(lv for lv in levels if lv not in merged)
    return out


def parse_batch_sizes(text: str) -> tuple[int, ...]:
    """`1,2,4,...,4096`: whole numbers >= 1, or a doubling series written with `...`."""
    parts = _split(text)
    if not parts:
        raise BadInput("--batch-sizes: no batch size given")
    sizes: list[int] = []
    for i, part in enumerate(parts):
        if part in ("...", "…"):
            if i == 0 or i == len(parts) - 1:
                raise BadInput("--batch-sizes: '...' needs a size on each side (e.g. 1,2,4,...,4096)")
            continue
        size = _int(part, "--batch-sizes")
        if size < 1:
            raise BadInput(f"--batch-sizes: {size} messages per batch; a batch holds at least 1 message")
        if size > MAX_BATCH_MESSAGES:
            raise BadInput(f"--batch-sizes: {size} messages per batch is above {MAX_BATCH_MESSAGES:,}")
        if i > 0 and parts[i - 1] in ("...", "…"):
            start = sizes[-1]
            step = start // sizes[-2] if len(sizes) >= 2 and sizes[-2] and start % sizes[-2] == 0 else 2
            step = max(step, 2)
            value = start * step
            while value < size:
                sizes.append(value)
                value *= step
        sizes.append(size)
    if len(set(sizes)) > MAX_BATCH_SIZES:
        raise BadInput(
            f"--batch-sizes: {len(set(sizes))} sizes; at most {MAX_BATCH_SIZES} are measured in one probe"
        )
    return tuple(sorted(set(sizes)))


def build_options(
    codecs: str,
    levels: Sequence[str],
    batch_sizes: str | None,
    event_bytes: int | None,
    batches: int,
    seed: int,
) -> ProbeOptions:
    """The CLI's flags -> ProbeOptions, every problem one BadInput line."""
    chosen = parse_codecs(codecs)
    named = parse_levels(levels, chosen)
    pairs = [
        CodecLevel(codec=codec, level=level)
        for codec in chosen
        for level in (named.get(codec, [DEFAULT_LEVELS[codec]]) if codec in LEVEL_RANGES else [None])
    ]
    sizes = parse_batch_sizes(batch_sizes) if batch_sizes is not None else DEFAULT_BATCH_SIZES
    if event_bytes is not None and not 0 < event_bytes <= MAX_EVENT_BYTES:
        raise BadInput(f"--event-bytes: {event_bytes} is outside 1..{MAX_EVENT_BYTES}")
    if not 1 <= batches <= 10_000:
        raise BadInput(f"--batches: {batches} is outside 1..10000")
    if not 0 <= seed <= MAX_SEED:
        raise BadInput(f"--seed: {seed} is outside 0..{MAX_SEED}")
    return ProbeOptions(
        codecs=tuple(pairs), batch_sizes=sizes, event_bytes=event_bytes, batches=batches, seed=seed
    )
