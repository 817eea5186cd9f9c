"""Latencies for `kbt stress`: an HdrHistogram (the `hdrhistogram` package, as the sweep's delivery
latency uses) of microseconds, 1 us to 1 h at 3 significant digits. Mergeable across locust
workers, shipped over their RPC as the histogram's own compressed base64 encoding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hdrh.histogram import HdrHistogram

from tuner.driver.latency_buckets import LATENCY_MAX_US, new_histogram
from tuner.driver.result import LatencyMs


def latency_ms(hist: HdrHistogram) -> LatencyMs:
    """A histogram of microseconds as the millisecond figures a run reports: the one place kbt
    turns a histogram into percentiles (a stress stage's tally too, by its `Latency.hist`)."""
    if hist.get_total_count() == 0:
        return LatencyMs()
    us = hist.get_value_at_percentile
    return LatencyMs(
        count=hist.get_total_count(),
        mean=hist.get_mean_value() / 1000,
        p50=us(50) / 1000,
        p90=us(90) / 1000,
        p99=us(99) / 1000,
        p999=us(99.9) / 1000,
        max=hist.get_max_value() / 1000,
    )


def merged_ms(encoded: Iterable[bytes | str | None]) -> LatencyMs:
    """Processes' encoded HdrHistograms (microseconds, base64 V2 compressed; empty or None: none)
    merged exactly, as the millisecond figures a run reports."""
    hists = [HdrHistogram.decode(data) for data in encoded if data]
    if not hists:
        return LatencyMs()
    for hist in hists[1:]:
        hists[0].add(hist)
    return latency_ms(hists[0])


class Latency:
    def __init__(self) -> None:
        self.hist = new_histogram()

    def add_us(self, us: int, count: int = 1) -> None:
        self.hist.record_value(min(max(1, int(us)), LATENCY_MAX_US), count)

    def add_s(self, seconds: float, count: int = 1) -> None:
        self.add_us(int(seconds * 1e6), count)

    def merge(self, other: Latency) -> None:
        if other.count:
            self.hist.add(other.hist)

    @property
    def count(self) -> int:
        return int(self.hist.get_total_count())

    def percentile_ms(self, q: float, extra_high: int = 0) -> float | None:
        """The q-th percentile (0-100) in ms; `extra_high` more samples are known to lie above every
        recorded one (records not acked yet): None when the percentile falls among those."""
        count = self.count
        total = count + extra_high
        if total == 0 or count == 0:
            return None
        within = q + q * extra_high / count  # exactly q when none are above
        if within > 100.0:
            return None
        return float(self.hist.get_value_at_percentile(within)) / 1000.0

    def counts(self) -> list[tuple[int, int]]:
        """(microseconds, count) of every recorded value, ascending."""
        return [
            (int(i.value_iterated_to), int(i.count_at_value_iterated_to))
            for i in self.hist.get_recorded_iterator()
        ]

    def to_wire(self) -> str:
        return self.hist.encode().decode("ascii") if self.count else ""

    @classmethod
    def from_wire(cls, data: Any) -> Latency:
        """The encoded histogram ("" for none); a list of [us, count] pairs is read too."""
        out = cls()
        if isinstance(data, str) and data:
            out.hist.decode_and_add(data.encode("ascii"))
        elif isinstance(data, list):
            for us, n in data:
                out.add_us(int(us), int(n))
        return out

    @classmethod
    def of_us(cls, counts: dict[int, int]) -> Latency:
        out = cls()
        for us, n in counts.items():
            out.add_us(us, n)
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Latency) and self.counts() == other.counts()

    def __repr__(self) -> str:
        return f"Latency(count={self.count})"
