"""Time `kbt lab up` to healthy (3 brokers, and 1 broker side by side), several runs, median.

    make bench-lab            # or: python -m bench.lab_up --runs 5

Each run starts a fresh lab in a temporary directory with the CLI as a user would, times the
command until it returns (every broker in the metadata, Prometheus has scraped each broker with
up == 1), then brings the lab down (not timed). Runs alternate 3 and 1 brokers.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench._common import ANY_EXIT, arguments, kbt

FEEDS = '"Lab"'


def timed_up(brokers: int, base_port: int, scrape: float) -> float:
    with tempfile.TemporaryDirectory(prefix="kbt-bench-") as tmp:
        lab = str(Path(tmp) / "lab")
        up = ("--brokers", str(brokers), "--base-port", str(base_port), "--scrape-interval", str(scrape))
        start = time.monotonic()
        try:
            kbt("lab", "up", "--lab-dir", lab, *up, quiet=True)  # SystemExit with its stderr when it fails
            elapsed = time.monotonic() - start
        finally:
            kbt("lab", "down", "--lab-dir", lab, quiet=True, ok=ANY_EXIT)
        return elapsed


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base-port", type=int, default=19090)
    parser.add_argument("--scrape-interval", type=float, default=5.0)
    args = parser.parse_args()
    times: dict[int, list[float]] = {3: [], 1: []}
    for run in range(args.runs):
        for brokers in times:
            t = timed_up(brokers, args.base_port, args.scrape_interval)
            times[brokers].append(t)
            print(f"run {run + 1}: {brokers} broker(s) healthy in {t:.1f} s", file=sys.stderr)
    for brokers, values in times.items():
        print(
            f"{brokers} broker(s): median {statistics.median(values):.1f} s, min {min(values):.1f} s,"
            f" max {max(values):.1f} s over {len(values)} runs"
        )
    ratio = statistics.median(times[3]) / statistics.median(times[1])
    print(
        f"3 brokers / 1 broker: {ratio:.2f}; 3 brokers / 60 s budget: {statistics.median(times[3]) / 60:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
