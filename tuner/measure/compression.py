"""The compression probe's measurement: ratio, batch bytes and CPU per MB for each codec/level and
messages per batch, on one log sample.

`batches` random start positions are drawn once per sample; for a batch size of n messages, each
start gives the batch of the n consecutive messages from there (wrapping around the sample's end).
A batch size is measured only when the sample holds at least MIN_DISJOINT_BATCHES disjoint batches of
it: batches that each cover a large share of a small sample all contain its most (or least)
compressible stretch, and their spread would be an illusion; larger sizes are listed as skipped.
Every size uses the same starts, so a larger batch extends a smaller one and the curves are compared
on the same text, and every codec compresses the very same batches.

Each batch is framed as a Kafka v2 record batch: the codec compresses the records section; the
61-byte header stays uncompressed and counts in both the uncompressed and the compressed batch
bytes. ratio = uncompressed batch bytes / compressed batch bytes.

CPU time is the measuring thread's own CPU time (not wall clock, so other processes on the machine
do not inflate it), summed over passes over the same batches until at least `min_cpu_s` is spent,
per MB (10^6 bytes) of uncompressed records. Each compressed batch is decompressed and checked
against its input once.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tuner.core.errors import BadInput
from tuner.core.probe_figures import ProbePoint, Quantiles
from tuner.measure.codecs import BoundCodec, Transform, bind
from tuner.measure.log_sample import LogSample
from tuner.measure.record_batch import records_section
from tuner.spec.limits import BATCH_HEADER_BYTES
from tuner.spec.probe import CodecLevel, ProbeOptions

MIN_CPU_S = 0.02
MIN_DISJOINT_BATCHES = 4
MB = 1_000_000


def spread(values: Sequence[float]) -> Quantiles:
    """10th percentile, median and 90th percentile of the batches measured at one point."""
    if len(values) == 1:
        return Quantiles(p10=values[0], p50=values[0], p90=values[0])
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return Quantiles(p10=deciles[0], p50=statistics.median(values), p90=deciles[-1])


@dataclass(frozen=True)
class CurveMeasurement:
    codec: CodecLevel
    points: list[ProbePoint]


@dataclass(frozen=True)
class SampleMeasurement:
    sample: LogSample
    curves: list[CurveMeasurement]
    skipped_batch_sizes: list[int]  # the sample holds fewer than MIN_DISJOINT_BATCHES of them


def batch_starts(sample: LogSample, count: int, seed: int) -> list[int]:
    """`count` start positions, distinct while the sample has enough messages."""
    rng = random.Random(f"{seed}:{sample.sha256}")
    total = len(sample.messages)
    if count <= total:
        return rng.sample(range(total), count)
    return [rng.randrange(total) for _ in range(count)]


def batches_of(sample: LogSample, n: int, starts: Sequence[int]) -> list[bytes]:
    """The records section of the n consecutive messages from each start (n <= message count)."""
    msgs = sample.messages
    doubled = msgs + msgs[: n - 1] if n > 1 else msgs
    return [records_section(doubled[s : s + n]) for s in starts]


def timed_passes(fn: Transform, inputs: Sequence[bytes], min_cpu_s: float = MIN_CPU_S) -> tuple[float, int]:
    """Thread CPU seconds for passes of `fn` over `inputs` until at least `min_cpu_s`; (seconds, passes)."""
    clock = time.thread_time_ns
    spent = passes = 0
    while True:
        start = clock()
        for data in inputs:
            fn(data)
        spent += clock() - start
        passes += 1
        if spent >= min_cpu_s * 1e9:
            return spent / 1e9, passes


def measure_point(
    codec: BoundCodec, sections: Sequence[bytes], n: int, min_cpu_s: float = MIN_CPU_S
) -> ProbePoint:
    compressed = [codec.compress(s) for s in sections]
    for original, packed in zip(sections, compressed, strict=True):
        if codec.decompress(packed) != original:  # pragma: no cover - a broken codec library
            raise RuntimeError(f"{codec.spec.label}: decompressed batch differs from its input")
    raw_mb = sum(len(s) for s in sections) / MB
    c_s, c_passes = timed_passes(codec.compress, sections, min_cpu_s)
    d_s, d_passes = timed_passes(codec.decompress, compressed, min_cpu_s)
    raw = [BATCH_HEADER_BYTES + len(s) for s in sections]
    sizes = [BATCH_HEADER_BYTES + len(c) for c in compressed]
    return ProbePoint(
        batch_messages=n,
        batches=len(sections),
        uncompressed_batch_bytes=spread(raw),
        compressed_batch_bytes=spread(sizes),
        ratio=spread([r / p for r, p in zip(raw, sizes, strict=True)]),
        compress_cpu_ms_per_mb=1000 * c_s / (raw_mb * c_passes),
        decompress_cpu_ms_per_mb=1000 * d_s / (raw_mb * d_passes),
    )


def probe_sample(
    sample: LogSample,
    options: ProbeOptions,
    on_point: Callable[[str], None] | None = None,
    min_cpu_s: float = MIN_CPU_S,
) -> SampleMeasurement:
    """Every codec/level x batch size on one sample. `on_point(label)` after each measured point."""
    codecs = [bind(c) for c in options.codecs]
    sizes = measurable_sizes(sample, options)
    skipped = [n for n in options.batch_sizes if n not in sizes]
    points: dict[str, list[ProbePoint]] = {c.spec.label: [] for c in codecs}
    starts = batch_starts(sample, options.batches, options.seed)
    for n in sizes:
        sections = batches_of(sample, n, starts)
        for codec in codecs:
            points[codec.spec.label].append(measure_point(codec, sections, n, min_cpu_s))
            if on_point is not None:
                on_point(f"{sample.name} {codec.spec.label} x{n}")
    curves = [CurveMeasurement(c.spec, points[c.spec.label]) for c in codecs]
    return SampleMeasurement(sample=sample, curves=curves, skipped_batch_sizes=skipped)


def measurable_sizes(sample: LogSample, options: ProbeOptions) -> list[int]:
    """The batch sizes the sample holds at least MIN_DISJOINT_BATCHES times over."""
    return [n for n in options.batch_sizes if n * MIN_DISJOINT_BATCHES <= sample.message_count]


def check_measurable(sample: LogSample, options: ProbeOptions, shown: str) -> None:
    """BadInput when the sample is too small for even the smallest batch size asked for."""
    if not measurable_sizes(sample, options):
        smallest = min(options.batch_sizes)
        raise BadInput(
            f"{shown}: {sample.message_count} message(s); batches of {smallest} need at least"
            f" {smallest * MIN_DISJOINT_BATCHES}"
        )


def point_count(samples: Sequence[LogSample], options: ProbeOptions) -> int:
    """How many points `probe_sample` measures over these samples (for a progress bar)."""
    return sum(len(measurable_sizes(s, options)) for s in samples) * len(options.codecs)
