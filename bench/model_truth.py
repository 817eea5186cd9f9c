"""The model against run records, run by run (docs/benchmarks.md, "Filebeat model" and "Java model").

    kbt sweep loadtests/filebeat-model-check.yaml --results DIR
    python -m bench.model_truth DIR [DIR ...] [--client filebeat]

For every ok run: the produce requests/s the model predicts for its setting and offered load, and
what was measured (the client's own count, or the brokers' count of the run's requests where the
client has none: real Filebeat). Prints a markdown table and the median and largest |error|, the
figure `kbt recommend` reports as "model truth".
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from bench._common import arguments
from tuner.model.evidence import truth_rows
from tuner.store.results import ResultsStore

FEEDS = (
    '"The published profiles, re-measured with real Filebeat", '
    '"Filebeat model: fitted to real Filebeat", "Collector model: fitted on the sweep, '
    'checked on the Qunar-like shape", "Java model truth"'
)


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("results", nargs="+", type=Path, help="results directories (kbt sweep --results)")
    parser.add_argument("--client", help="only this client kind (librdkafka, filebeat, java)")
    args = parser.parse_args(argv)
    rows, errors = [], []
    for directory in args.results:
        if not directory.is_dir():
            print(f"bench.model_truth: {directory}: not a directory", file=sys.stderr)
            return 2
        records = [
            r
            for r in ResultsStore(directory).records()
            if not args.client or r.plan.profile.client == args.client
        ]
        for row in truth_rows(records):
            workload = row.record.plan.workload
            partitions = sum(t.partitions for t in workload.topics)
            shape = f"{workload.producers} x {workload.rate_per_producer:g}/s, {partitions} partitions"
            errors.append(abs(row.error))
            figures = f"{row.measured:.1f} | {row.predicted:.1f} | {row.error:+.1%}"
            rows.append(f"| {row.record.name} | {shape} | {figures} |")
    if not errors:
        print("bench.model_truth: no ok run records with a measured request rate", file=sys.stderr)
        return 2
    print("| run | load | measured req/s | predicted | error |")
    print("|---|---|---:|---:|---:|")
    print("\n".join(rows))
    print(f"\n{len(errors)} runs: median |error| {statistics.median(errors):.1%}, max {max(errors):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
