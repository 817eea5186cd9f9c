"""Linger timers: the record due at a batch's deadline (docs/benchmarks.md, "Linger timers").

    python -m bench.linger_edge [--linger MS ...] [--lab-dir DIR | --base-port N] [--out DIR]

On a fixed schedule whose interval divides linger.ms (200/s at linger 5 ms, 50/s at 20 ms) a record
is due exactly when the batch before it is due to leave. Whether it makes that batch decides
between one and two records per request. For each linger this runs the librdkafka and the Java
producer at intervals from just below the linger to past it (one partition, so only the timer
decides), then prints the model's produce requests/s beside the measured ones, and the share of
batches that took the next record (measured: offered / requests - 1).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench._common import ROOT, arguments, lab, loadavg, timed_step
from tuner.model.evidence import calibrate, truth_rows
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

FEEDS = '"Linger timers: the record at the deadline (librdkafka and Java, found and fixed)"'

# Arrival interval minus linger, in ms: before the deadline, at it, and past it by up to 1 ms.
OFFSETS_MS = (-0.2, 0.0, 0.1, 0.2, 0.5, 1.0)
PRODUCERS = 2
DURATION_S = 12


def spec_text(name: str, linger_ms: float, interval_ms: float) -> str:
    rate = round(1000 / interval_ms, 4)
    return f"""name: {name}
workload:
  name: {name}
  topics: [{{name: {name}, partitions: 1, replication_factor: 1}}]
  producers: {PRODUCERS}
  processes: 1
  rate_per_producer: {rate}
  message: {{kind: generated, bytes: 300}}
  keys: none
  duration_s: {DURATION_S}
  warmup_s: 2
profiles:
  - {{name: librdkafka, linger_ms: {linger_ms:g}}}
  - {{name: java, client: java, linger_ms: {linger_ms:g}}}
name_format: "{{profile}}"
"""


def _linger(record: RunRecord) -> float:
    return float(getattr(record.plan.profile, "linger_ms", None) or 0.0)


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--linger", type=float, action="append", default=[], help="linger.ms (5 and 20)")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench-linger-edge")
    parser.add_argument("--lab-dir", type=Path, help="a running lab to use (else one of its own)")
    parser.add_argument("--base-port", type=int, default=19690, help="base port of its own lab")
    parser.add_argument("--report-only", action="store_true", help="print the figures of --out, run nothing")
    args = parser.parse_args(argv)
    lingers = args.linger or [5.0, 20.0]
    results = args.out / "results"
    log: list[str] = []
    if not args.report_only:
        args.out.mkdir(parents=True, exist_ok=True)
        with lab(args.lab_dir, args.out / "lab", args.base_port) as at:
            lab_args = at.args
            for linger in lingers:
                for offset in OFFSETS_MS:
                    name = f"edge-l{linger:g}-i{round((linger + offset) * 10)}".replace(".", "_")
                    spec = args.out / f"{name}.yaml"
                    spec.write_text(spec_text(name, linger, linger + offset), encoding="utf-8")
                    timed_step(log, name, "sweep", str(spec), "--results", str(results), *lab_args, ok=(0, 1))
    records = ResultsStore(results).records() if results.is_dir() else []
    if not records:
        print(f"bench.linger_edge: no run records in {results}", file=sys.stderr)
        return 2
    print(f"runs: {len(records)}; load average now {loadavg():.1f}")
    print(
        "| client | linger ms | interval ms | req/s predicted | measured | error"
        " | took the next record: predicted | measured |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = sorted(
        truth_rows(records, calibrate([])),
        key=lambda r: (
            r.record.name,
            _linger(r.record),
            -float(r.record.plan.workload.rate_per_producer),
        ),
    )
    for row in rows:
        record = row.record
        offered = float(record.plan.workload.rate_per_producer) * record.plan.workload.producers
        status = "" if record.status == "ok" else f" ({record.status})"
        interval_ms = 1000 / float(record.plan.workload.rate_per_producer)
        print(
            f"| {record.name}{status} | {_linger(record):g} | {interval_ms:.1f} |"
            f" {row.predicted:.1f} | {row.measured:.1f} | {row.error:+.1%} |"
            f" {max(0.0, offered / row.predicted - 1):.0%} | {max(0.0, offered / row.measured - 1):.0%} |"
        )
    if log:
        print("\n" + "\n".join(log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
