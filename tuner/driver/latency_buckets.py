"""Latencies counted per bucket of 11 significant bits of microseconds (relative error below 2^-10,
the resolution of a 3-significant-digit HdrHistogram): cheaper on a hot path than recording every
value into the histogram, which `histogram()` builds at the end. Imports nothing but hdrh, so a
small process (the tailed pods' log writer) can keep one.
"""

from __future__ import annotations

from hdrh.histogram import HdrHistogram

LATENCY_MAX_US = 3_600_000_000
LATENCY_BITS = 11


def new_histogram() -> HdrHistogram:
    """Every latency histogram kbt keeps: 1 us to 1 h, 3 significant digits."""
    return HdrHistogram(1, LATENCY_MAX_US, 3)


class LatencyBuckets:
    """Latency counts per bucket of `LATENCY_BITS` significant bits of microseconds."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def add_s(self, seconds: float, n: int = 1) -> None:
        us = int(seconds * 1e6)
        if us < 1:
            us = 1
        shift = us.bit_length() - LATENCY_BITS
        if shift > 0:
            us = (us >> shift) << shift
        self.counts[us] = self.counts.get(us, 0) + n

    def add_counts(self, counts: dict[int, int]) -> None:
        """Merge another set of bucket counts (microseconds -> count), e.g. another process's."""
        for us, n in counts.items():
            self.counts[us] = self.counts.get(us, 0) + n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def histogram(self) -> HdrHistogram:
        hist = new_histogram()
        for us, count in self.counts.items():
            hist.record_value(min(max(us, 1), LATENCY_MAX_US), count)
        return hist
