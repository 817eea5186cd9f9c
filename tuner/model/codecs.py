"""Compression ratio and CPU per codec as a function of messages per partition batch.

The recommender breaks ties between settings with the same request rate on bytes on the wire, then
codec CPU. Figures come from a compression probe record (`kbt probe compression --json`) when one is
given, read with the typed probe reader (tuner.store.probe_record); otherwise from the
loghub medians of the compression probe (zstd-3 ~1.1 at 1 message, ~4.5 at 16, ~7.3 at 64, ~9.9 at
256; gzip-4 8.6 and snappy 5.3 at 256) and rough single-core CPU costs.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import PurePath

from tuner.core.errors import BadInput
from tuner.store.probe_record import ProbeRecord

DEFAULTS = "defaults"  # the source of the built-in table

_ZSTD_POINTS = ((1, 1.1), (16, 4.5), (64, 7.3), (256, 9.9))
_AT_256 = {"zstd": 9.9, "gzip": 8.6, "snappy": 5.3, "lz4": 5.5, "none": 1.0}
# ~1 KB events (loghub lines joined into events of >= 1,024 B, mean ~1,130 B): the median ratio over
# the eight loghub samples at 1-32 events per batch (docs/benchmarks.md, "Compression probe"). One
# such event compresses like a few lines together, so a batch's ratio depends on its events' size.
_EVENT_POINTS = {
    "zstd": ((1, 2.84), (2, 4.29), (4, 6.48), (8, 8.97), (16, 10.43), (32, 11.84)),
    "gzip": ((1, 2.88), (2, 4.44), (4, 6.62), (8, 8.77), (16, 10.07), (32, 10.67)),
    "snappy": ((1, 2.38), (2, 3.35), (4, 4.76), (8, 5.81), (16, 6.18), (32, 6.58)),
    "lz4": ((1, 2.33), (2, 3.38), (4, 4.83), (8, 5.95), (16, 6.60), (32, 6.73)),
}
_EVENT_BYTES = 1130.0
# The spread of one-event batches' ratios in that probe: ln(p90 / p10) / 2.56 at 1 event, the
# median over the samples and codecs (0.14-0.15; HDFS 0.11, Linux 0.27-0.31).
_EVENT_SPREAD = 0.15
# The line probe's mean line sizes span 84-296 B: the default curves stand for ~158 B (their middle).
_LINE_BYTES = 158.0
_P10_TO_P90_SIGMAS = 2.563  # a normal's p90 - p10 in standard deviations
_BLEND_AT = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# Compressing CPU, ms per MB of uncompressed records, one core (order of magnitude only).
_CPU_MS_PER_MB = {"none": 0.0, "lz4": 2.0, "snappy": 2.5, "zstd": 3.5, "gzip": 20.0}


@dataclass(frozen=True)
class CodecCurve:
    codec: str
    points: tuple[tuple[float, float], ...]  # (messages per batch, ratio), ascending
    cpu_ms_per_mb: float
    # How much one-message batches differ: the standard deviation of ln(ratio) over them (an
    # n-message batch's is spread / sqrt(n)). 0: every batch at the curve.
    spread: float = 0.0

    def ratio(self, messages: float) -> float:
        """Uncompressed / compressed bytes of a batch of `messages`, log-linear between points and
        flat beyond them."""
        pts = self.points
        if not pts:
            return 1.0
        n = max(messages, 1.0)
        if n <= pts[0][0]:
            return pts[0][1]
        for (n1, r1), (n2, r2) in itertools.pairwise(pts):
            if n <= n2:
                f = (math.log(n) - math.log(n1)) / (math.log(n2) - math.log(n1))
                return r1 + f * (r2 - r1)
        return pts[-1][1]


@dataclass(frozen=True)
class CodecTable:
    curves: dict[str, CodecCurve]
    source: str  # DEFAULTS or the probe file name

    def curve(self, codec: str) -> CodecCurve:
        found = self.curves.get(codec) or default_table().curves.get(codec)
        return found or CodecCurve(codec, ((1, 1.0),), 0.0)

    def ratio(self, codec: str, messages: float) -> float:
        return 1.0 if codec == "none" else self.curve(codec).ratio(messages)

    def cpu_ms_per_mb(self, codec: str) -> float:
        return self.curve(codec).cpu_ms_per_mb


def default_table() -> CodecTable:
    curves: dict[str, CodecCurve] = {}
    for codec, at_256 in _AT_256.items():
        scale = (at_256 - 1) / (_AT_256["zstd"] - 1)
        points = tuple((n, 1 + (r - 1) * scale) for n, r in _ZSTD_POINTS)
        curves[codec] = CodecCurve(codec, points, _CPU_MS_PER_MB[codec])
    return CodecTable(curves, DEFAULTS)


@lru_cache(maxsize=256)
def default_curve(codec: str, message_bytes: float) -> CodecCurve:
    """The default curve of `codec` for events of `message_bytes`: the line curve (default_table)
    up to ~158 B events, the ~1 KB event probe's medians from ~1,130 B, and between the two a
    geometric blend by the log of the event size (no extrapolation past either)."""
    lines = default_table().curve(codec)
    events = _EVENT_POINTS.get(codec)
    if events is None or message_bytes <= _LINE_BYTES:
        return replace(lines, spread=_EVENT_SPREAD)
    weight = min(1.0, math.log(message_bytes / _LINE_BYTES) / math.log(_EVENT_BYTES / _LINE_BYTES))
    joined = CodecCurve(codec, events, lines.cpu_ms_per_mb)
    points = tuple((n, lines.ratio(n) ** (1 - weight) * joined.ratio(n) ** weight) for n in _BLEND_AT)
    return CodecCurve(codec, points, lines.cpu_ms_per_mb, _EVENT_SPREAD)


def table_from_probe(record: ProbeRecord, path: str, message_bytes: float | None = None) -> CodecTable:
    """Curves from a compression probe record (read from `path`, named in errors): the sample
    whose mean message size is closest to `message_bytes`, one curve per codec (the first level
    probed)."""
    if not record.samples:
        raise BadInput(f"{path}: the compression probe record holds no sample")
    sample = record.samples[0]
    if message_bytes is not None:
        sample = min(record.samples, key=lambda s: abs(s.mean_message_bytes - message_bytes))
    curves: dict[str, CodecCurve] = {}
    for curve in sample.curves:
        if curve.codec in curves and curve.level is not None:
            continue
        points = sorted((float(p.batch_messages), p.ratio.p50) for p in curve.points)
        if not points:
            continue
        cpu = sorted(p.compress_cpu_ms_per_mb for p in curve.points)
        single = [p.ratio for p in curve.points if p.batch_messages == 1 and p.ratio.p10 > 0]
        spread = math.log(single[0].p90 / single[0].p10) / _P10_TO_P90_SIGMAS if single else 0.0
        curves[curve.codec] = CodecCurve(curve.codec, tuple(points), cpu[len(cpu) // 2], max(0.0, spread))
    return CodecTable(curves, PurePath(path).name)
