"""One point of a compression probe's curve, as the probe measures it and a probe record keeps it:
a codec/level at one batch size, the batch bytes and ratios spread over the batches measured, and
the CPU per MB. One definition for both (tuner.measure.compression measures it,
tuner.store.probe_record keeps it; docs/probe-record.md is generated from the field descriptions).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from tuner.core.frozen import Frozen
from tuner.core.units import MAX_COUNT, Count, Figure, Ratio

# A codec never makes a batch ten times its size: a batch is at least its 61-byte header, and the
# worst a codec adds to a few bytes is a frame of some tens of bytes. A ratio below this is a
# hand edit, and interpolating towards it can round to 0, which the recommender divides by.
MIN_RATIO = 0.1


class Quantiles(Frozen):
    """Spread over the batches measured at one point: 10th percentile, median, 90th percentile."""

    p10: Figure = Field(description="10th percentile.")
    p50: Figure = Field(description="Median.")
    p90: Figure = Field(description="90th percentile.")


class ProbePoint(Frozen):
    """One codec/level at one batch size."""

    batch_messages: Annotated[int, Field(ge=1, le=MAX_COUNT)] = Field(  # the curve's x: its log is taken
        description="Messages per partition batch."
    )
    batches: Count = Field(description="How many batches (random starts in the sample) were measured.")
    uncompressed_batch_bytes: Quantiles = Field(
        description="61-byte v2 batch header + framed records, before compression."
    )
    compressed_batch_bytes: Quantiles = Field(
        description="61-byte header + compressed records section: what the broker stores per batch."
    )
    ratio: Quantiles = Field(description="Uncompressed / compressed batch bytes, per batch.")
    compress_cpu_ms_per_mb: Ratio = Field(
        description="Compressing thread's CPU ms per MB (10^6 B) of uncompressed records."
    )
    decompress_cpu_ms_per_mb: Ratio = Field(
        description="Decompressing thread's CPU ms per MB (10^6 B) of uncompressed records."
    )

    @field_validator("ratio")
    @classmethod
    def _ratio_positive(cls, ratio: Quantiles) -> Quantiles:
        # the recommender divides by it and takes its logarithm: a hand-edited 0, -1 or 1e-86
        # must stop here, not as a math error there
        if min(ratio.p10, ratio.p50, ratio.p90) < MIN_RATIO:
            got = f"p10 {ratio.p10:g}, p50 {ratio.p50:g}, p90 {ratio.p90:g}"
            raise ValueError(f"must be at least {MIN_RATIO:g}: no codec makes a batch 10x larger ({got})")
        return ratio
