"""Model truth on held-out shapes (`make bench-truth`; docs/benchmarks.md, "Model truth on held-out
shapes").

    python -m bench.truth [--fit DIR ...] [--only NAME ...] [--lab-dir DIR | --base-port N]

1. Run the fitting sweeps (FITTING_SPECS: real Filebeat's per-line pipeline cost follows the host,
   so it is fitted on the lab the held-out runs use), then every held-out sweep in loadtests/truth/
   (or those named with --only), for real on a lab (the given one, or a 1-broker lab of its own on
   --base-port), each into a results directory of its own under --out.
2. Fit: the model's calibration (service latency and memory per client kind, Filebeat's pipeline
   cost) from the run records of the `--fit` directories and of the fitting sweeps just run, the
   fitting set. A record from a held-out sweep is refused there.
3. Print, per run, the predicted and measured produce requests/s and p99 with the errors, the runs
   that are not `ok` listed apart with why, the median and largest |error| per client kind, and
   the 1-minute load average before and after each sweep.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from bench._common import ROOT, arguments, lab, loadavg, timed_step
from tuner.model.evidence import calibrate, held_out_errors, off_schedule, truth_rows
from tuner.model.predict import Calibration
from tuner.model.uncertainty import bands_from
from tuner.spec.loader import load_sweep
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

FEEDS = (
    '"Model truth on held-out shapes (issue 31)" and its later passes, '
    '"`make demo`\'s model truth lines, from a fresh clone" (--records)'
)

HELD_OUT = ROOT / "loadtests" / "truth"
PREFIX = "truth-"
# Fitting sweeps run on the held-out passes' own lab before them (never a `truth-*` sweep); their
# committed records are in loadtests/fitting/records/.
FITTING_SPECS = (ROOT / "loadtests" / "filebeat-pipeline-fit.yaml",)
FIT_DIR = "fit"  # under --out


def held_out_specs(only: list[str]) -> list[Path]:
    specs = sorted(HELD_OUT.glob("*.yaml"))
    if only:
        specs = [s for s in specs if s.stem in only]
        missing = sorted(set(only) - {s.stem for s in specs})
        if missing:
            raise SystemExit(f"bench.truth: no held-out spec named {', '.join(missing)} in {HELD_OUT}")
    for spec in specs:
        if not load_sweep(spec).spec.name.startswith(PREFIX):
            raise SystemExit(f"bench.truth: {spec.name}: a held-out sweep's name starts with {PREFIX!r}")
    return specs


def _kinds(spec: Path) -> set[str]:
    return {run.profile.client for run in load_sweep(spec).runs}


def fitting_specs(held_out: list[Path]) -> list[Path]:
    """The fitting sweeps whose client kinds the chosen held-out sweeps run."""
    kinds = set().union(*(_kinds(s) for s in held_out)) if held_out else set()
    return [s for s in FITTING_SPECS if _kinds(s) & kinds]


def fit(specs: list[Path], when: str, out: Path, lab_args: list[str], log: list[str]) -> list[Path]:
    """Run the fitting sweeps `when` ("before", "after") the held-out ones: a pass's calibration
    brackets its held-out runs in time (the same fitting shape moved 19% from a lab's first minutes
    to ten minutes later, docs/benchmarks.md "Real Filebeat's pipeline cost, fitted per host")."""
    dirs = []
    for spec in specs:
        results = out / FIT_DIR / f"{spec.stem}-{when}"
        step = f"{spec.stem} ({when})"
        timed_step(log, step, "sweep", str(spec), "--results", str(results), *lab_args, ok=(0, 1))
        dirs.append(results)
    return dirs


def fit_results(out: Path) -> list[Path]:
    """The results directories `fit` left under `out` (one per fitting sweep and end of a pass)."""
    fits = out / FIT_DIR
    return sorted(p for p in fits.iterdir() if p.is_dir()) if fits.is_dir() else []


def fitting_set(dirs: list[Path]) -> list[RunRecord]:
    records: list[RunRecord] = []
    for directory in dirs:
        if not directory.is_dir():
            raise SystemExit(f"bench.truth: --fit {directory}: not a directory")
        for record in ResultsStore(directory).records():
            if record.sweep.startswith(PREFIX):
                raise SystemExit(f"bench.truth: --fit {directory}: {record.run_id} is a held-out run")
            records.append(record)
    return records


def _num(value: float | None, fmt: str = ".1f") -> str:
    return "-" if value is None else format(value, fmt)


def _event_bytes(record: RunRecord) -> int:
    return record.client.bytes_acked // max(1, record.client.records_acked)


def _pct(values: list[float], how: str) -> str:
    if not values:
        return "-"
    return f"{(statistics.median(values) if how == 'median' else max(values)):.1%}"


def report(records: list[RunRecord], calibration: Calibration) -> list[str]:
    lines = [
        "| run | client | regime | shape | req/s predicted | measured | error"
        " | p99 predicted | measured | error |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    apart = [
        f"- {r.name} ({r.plan.profile.client}): {r.status}: {'; '.join(r.problems) or '-'}"
        for r in records
        if r.status != "ok"
    ]
    # Ok runs whose client fell behind its schedule test no prediction (off_schedule): apart too.
    apart += [
        f"- {r.name} ({r.plan.profile.client}, {r.run_id.rsplit('--', 1)[-1]}): ok, {why}"
        for r in records
        if r.status == "ok" and (why := off_schedule(r)) is not None
    ]
    req_err: dict[str, list[float]] = {}
    p99_err: dict[str, list[float]] = {}
    for row in truth_rows(records, calibration):
        record, kind = row.record, row.record.plan.profile.client
        w = record.plan.workload
        keys = "keyless" if w.keys.kind == "none" else f"{w.keys.kind} keys"
        shape = (
            f"{w.producers} x {w.rate_per_producer:g}/s, {_event_bytes(record)} B, {keys},"
            f" {sum(t.partitions for t in w.topics)} partitions"
        )
        req_err.setdefault(kind, []).append(abs(row.error))
        if row.p99_error is not None:
            p99_err.setdefault(kind, []).append(abs(row.p99_error))
        lines.append(
            f"| {record.name} | {kind} | {row.regime} | {shape} | {row.predicted:.1f} | {row.measured:.1f} |"
            f" {row.error:+.1%} | {_num(row.predicted_p99_ms, '.0f')} |"
            f" {_num(record.client.delivery_latency_ms.p99, '.0f')} | {_num(row.p99_error, '+.1%')} |"
        )
    lines.append("")
    for name in sorted(set(req_err) | set(p99_err)):
        r, p = req_err.get(name, []), p99_err.get(name, [])
        lines.append(
            f"{name}: {len(r)} ok runs; produce requests/s median |error| {_pct(r, 'median')},"
            f" max {_pct(r, 'max')}; p99 median |error| {_pct(p, 'median')}"
        )
    lines += ["", "Error bands (signed predicted / measured - 1, lowest..highest):"]
    for band in bands_from(held_out_errors(records, calibration), []).bands:
        p99 = "-" if band.p99_error is None else f"{band.p99_error[0]:+.1%}..{band.p99_error[1]:+.1%}"
        lines.append(
            f"- {band.kind}, {band.regime}: {len(band.runs)} runs, requests/s"
            f" {band.requests_error[0]:+.1%}..{band.requests_error[1]:+.1%}, p99 {p99}"
        )
    if apart:
        lines += ["", "Listed apart, not in the figures:", *apart]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument(
        "--fit", type=Path, action="append", default=[], help="results directory of the fitting set"
    )
    parser.add_argument("--only", action="append", default=[], help="held-out spec name (file stem)")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench-truth", help="results go here")
    parser.add_argument("--lab-dir", type=Path, help="a running lab to use (else one of its own)")
    parser.add_argument("--base-port", type=int, default=19590, help="base port of its own lab")
    parser.add_argument("--report-only", action="store_true", help="print the figures of --out, run nothing")
    parser.add_argument(
        "--records",
        type=Path,
        help="print the figures of any results directory's runs and run nothing (make demo's:"
        " out/demo/results with --fit out/demo/results, the calibration its model truth lines use)",
    )
    args = parser.parse_args(argv)
    if args.records is not None:
        args.report_only = True
    specs = held_out_specs(args.only)
    fit_dirs = list(args.fit)
    log: list[str] = []
    if not args.report_only:
        with lab(args.lab_dir, args.out / "lab", args.base_port) as at:
            lab_args = at.args
            fitting = fitting_specs(specs)
            fit_dirs += fit(fitting, "before", args.out, lab_args, log)
            for spec in specs:
                results = args.out / spec.stem
                # A held-out run that fails or is unclean is still reported (apart): exit 1 is kept.
                timed_step(
                    log, spec.stem, "sweep", str(spec), "--results", str(results), *lab_args, ok=(0, 1)
                )
            fit_dirs += fit(fitting, "after", args.out, lab_args, log)
    if args.report_only and args.records is None:
        fit_dirs += fit_results(args.out)
    calibration = calibrate(fitting_set(fit_dirs))
    if args.records is not None:
        records = list(ResultsStore(args.records).records()) if args.records.is_dir() else []
    elif args.out.is_dir():
        records = [r for spec in specs for r in ResultsStore(args.out / spec.stem).records()]
    else:
        records = []
    if not records:
        print(f"bench.truth: no run records in {args.records or args.out}", file=sys.stderr)
        return 2
    fitted = (
        f"{sum(c.runs for c in calibration.clients.values())} fitting records"
        if fit_dirs
        else "no fitting records (defaults)"
    )
    for kind, calib in sorted(calibration.clients.items()):
        if calib.harvest_spacing_s:
            fitted += (
                f"; {kind}'s per-line pipeline cost {calib.harvest_spacing_s * 1e6:.1f} us"
                f" (from {calib.spacing_runs} synchronous flush runs)"
            )
    what = "runs" if args.records is not None else "held-out runs"
    print(f"{what}: {len(records)}; calibration: {fitted}; load average now {loadavg():.1f}")
    print("\n".join(report(records, calibration)))
    if log:
        print("\n" + "\n".join(log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
