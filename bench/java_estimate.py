"""The Java model's compressed-batch estimate against the Java runs docs/benchmarks.md measured
("Java model truth", "P2 ... Java"): the model's produce requests/s for each run's setting and load
beside the measured figure, then the median and largest |error| over the runs that compress.

    python -m bench.java_estimate

The measured figures are those the docs state (their run records are not in the repository); the
prediction is today's model, so running this script on an older checkout gives that model's
column (it only calls tuner.model.predict.predict).
"""

from __future__ import annotations

import statistics

from bench._common import ROOT, arguments
from tuner.model.predict import predict
from tuner.model.traffic import traffic_of
from tuner.spec.loader import load_sweep

FEEDS = '"Java model: the compressed-batch estimate (issue 31)"'

BROKERS = 3
# run name -> measured client produce requests/s (docs/benchmarks.md).
GRID = {
    "java-sticky-linger5-b16384": 691.3,
    "java-sticky-linger5-b1048576": 777.0,
    "java-sticky-linger100-b16384": 197.6,
    "java-sticky-linger100-b1048576": 193.5,
    "java-sticky-linger500-b16384": 47.8,
    "java-sticky-linger500-b1048576": 47.1,
    "java-spread-linger5-b16384": 952.8,
    "java-spread-linger100-b16384": 461.8,
    "java-keyed-linger5-b16384": 645.7,
    "java-keyed-linger5-b262144": 1131.3,
    "java-keyed-linger50-b16384": 349.8,
    "java-keyed-linger50-b262144": 348.0,
    "java-keyed-linger300-b16384": 76.5,
    "java-keyed-linger300-b262144": 76.6,
    "java-defaults": 956.5,
    "java-batched": 46.3,
}
# 16 KB batches on the Qunar-like load (24 x 40/s of 1,620 B, 24 partitions): (label, codec,
# linger ms, measured req/s).
SIXTEEN_KB = (
    ("P2 trial zstd 1000 ms", "zstd", 1000, 29.7),
    ("P2 trial zstd 922 ms", "zstd", 922, 28.1),
    ("P2 lz4 1000 ms", "lz4", 1000, 51.0),
    ("P2 zstd 1000 ms", "zstd", 1000, 35.8),
    ("java-zstd-long (150 s)", "zstd", 1000, 36.0),
    ("make demo zstd 1000 ms", "zstd", 1000, 44.3),
)


def main(argv: list[str] | None = None) -> None:
    arguments(__doc__, FEEDS).parse_args(argv)  # no options: --help only
    rows: list[tuple[str, str, float, float]] = []
    for spec in ("java-grid.yaml", "java-keyed.yaml", "qunar-logs-java.yaml"):
        for plan in load_sweep(ROOT / "loadtests" / spec).runs:
            if plan.name in GRID:
                predicted = predict(traffic_of(plan.workload, BROKERS), plan.profile).requests_per_s
                codec = getattr(plan.profile, "compression", None) or "none"  # Java and librdkafka profiles
                rows.append((plan.name, codec, GRID[plan.name], predicted))
    base = load_sweep(ROOT / "loadtests" / "java-zstd-long.yaml").runs[0]
    traffic = traffic_of(base.workload, BROKERS)
    for label, codec, linger, measured in SIXTEEN_KB:
        profile = base.profile.model_copy(update={"compression": codec, "linger_ms": linger})
        rows.append((label, codec, measured, predict(traffic, profile).requests_per_s))
    print("| run | codec | measured req/s | predicted | error |")
    print("|---|---|---:|---:|---:|")
    for name, codec, measured, predicted in rows:
        print(f"| {name} | {codec} | {measured:.1f} | {predicted:.1f} | {predicted / measured - 1:+.1%} |")
    for title, chosen in (("all", rows), ("compressed", [r for r in rows if r[1] != "none"])):
        errors = [abs(p / m - 1) for _, _, m, p in chosen]
        median, largest = statistics.median(errors), max(errors)
        print(f"{title}: {len(errors)} runs, median |error| {median:.1%}, max {largest:.1%}")


if __name__ == "__main__":
    main()
