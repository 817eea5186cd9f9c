"""Probe overhead: the compress throughput `kbt probe compression` reports vs calling each codec
library directly on the same bytes, side by side in one run (rounds interleaved, medians compared).

    python -m bench.probe_overhead [--sample PATH] [--rounds 7] [--min-cpu-s 0.2]

The input is fixed: batches of a loghub sample (loadtests/data/loghub/OpenStack_2k.log beside the
checkout, or $KBT_LOGHUB_DIR) framed as v2 records, at 1, 16 and 256 messages per batch. Prints a
Markdown table; throughput is MB (10^6 B) of uncompressed records per CPU second of the thread.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import lz4.frame
import snappy
import zstandard

from bench._common import ROOT, arguments
from tuner.measure.codecs import bind
from tuner.measure.compression import batch_starts, batches_of, measure_point
from tuner.measure.log_sample import read_sample
from tuner.spec.probe import CodecLevel

FEEDS = '"Compression probe"'

BATCH_SIZES = (1, 16, 256)
BATCHES = 40
MB = 1_000_000

_zstd = zstandard.ZstdCompressor(level=3)
_LZ4_64KB = lz4.frame.BLOCKSIZE_MAX64KB


# Each codec library called inline in a bare loop (no wrapper per call), with the settings the
# probe uses (Kafka's framing of each codec).
def _gzip(inputs: Sequence[bytes]) -> None:
    for data in inputs:
        zlib.compress(data, 6, 31)


def _snappy(inputs: Sequence[bytes]) -> None:
    for data in inputs:
        snappy.compress(data)


def _lz4(inputs: Sequence[bytes]) -> None:
    for data in inputs:
        lz4.frame.compress(
            data, compression_level=0, block_size=_LZ4_64KB, block_linked=False, content_checksum=False,
            block_checksum=False, store_size=False,
        )  # fmt: skip


def _zstd3(inputs: Sequence[bytes]) -> None:
    for data in inputs:
        _zstd.compress(data)


DIRECT: dict[str, tuple[CodecLevel, Callable[[Sequence[bytes]], None]]] = {
    "gzip-6": (CodecLevel(codec="gzip", level=6), _gzip),
    "snappy": (CodecLevel(codec="snappy"), _snappy),
    "lz4-0": (CodecLevel(codec="lz4", level=0), _lz4),
    "zstd-3": (CodecLevel(codec="zstd", level=3), _zstd3),
}


Loop = Callable[[Sequence[bytes]], None]


def direct_mb_per_s(loop: Loop, inputs: Sequence[bytes], min_cpu_s: float) -> float:
    """Passes of the bare loop until `min_cpu_s`, timed on the thread's CPU clock like the probe."""
    mb = sum(len(b) for b in inputs) / MB
    spent, passes = 0.0, 0
    while spent < min_cpu_s:
        start = time.thread_time()
        loop(inputs)
        spent += time.thread_time() - start
        passes += 1
    return mb * passes / spent


def main(argv: list[str]) -> int:
    default = Path(os.environ.get("KBT_LOGHUB_DIR") or ROOT.parent / "shared" / "data" / "loghub")
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--sample", type=Path, default=default / "OpenStack_2k.log")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-cpu-s", type=float, default=0.2)
    args = parser.parse_args(argv)
    if not args.sample.is_file():
        sys.stderr.write(f"bench.probe_overhead: no sample at {args.sample} (KBT_LOGHUB_DIR, --sample)\n")
        return 2
    sample = read_sample(args.sample)
    starts = batch_starts(sample, BATCHES, seed=1)
    print(
        f"sample {sample.name}: {len(sample.messages)} messages, mean {sample.mean_message_bytes:.0f} B;"
        f" {BATCHES} batches per size, {args.rounds} interleaved rounds, >= {args.min_cpu_s} s CPU each"
    )
    print()
    print("| codec | msgs/batch | probe MB/s | direct MB/s | probe / direct |")
    print("|---|---|---|---|---|")
    worst = float("inf")
    for n in BATCH_SIZES:
        sections = batches_of(sample, n, starts)
        for label, (spec, direct) in DIRECT.items():
            codec = bind(spec)
            probe_runs, direct_runs = [], []
            for _ in range(args.rounds):
                point = measure_point(codec, sections, n, min_cpu_s=args.min_cpu_s)
                probe_runs.append(1000 / point.compress_cpu_ms_per_mb)
                direct_runs.append(direct_mb_per_s(direct, sections, args.min_cpu_s))
            probe, plain = statistics.median(probe_runs), statistics.median(direct_runs)
            worst = min(worst, probe / plain)
            print(f"| {label} | {n} | {probe:,.1f} | {plain:,.1f} | {probe / plain:.2f} |", flush=True)
    print()
    print(f"lowest probe / direct: {worst:.2f} (acceptance: >= 0.80)")
    return 0 if worst >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
