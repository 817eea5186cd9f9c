"""The recommender's acceptance figures (docs/benchmarks.md "Recommender"), side by side on one lab.

    make bench-recommend   # or: python scripts/bench_recommend.py [--base-port 21000] [--work DIR]

Starts a 3-broker lab of its own (or uses `--lab-dir`), then, each step into its own results
directory under `--work` so no step calibrates on another's records:

    grid/      kbt sweep loadtests/recommend-grid.yaml                  (24 runs, the exhaustive grid)
    p2/        kbt recommend --live loadtests/recommend-grid.yaml --client librdkafka --max-trials 6
    p1/        kbt recommend --live loadtests/qunar-logs.yaml --client librdkafka --slo-p99 1000
               (the baseline run is filebeat-like, the spec's first profile)
    filebeat/  kbt sweep loadtests/filebeat-small-logs.yaml             (model truth for Filebeat)
    out/       the recommendations; `kbt recommend grid/` and `kbt recommend filebeat/` report the
               model truth over those records

and prints the figures as Markdown (`--markdown FILE` also writes them). `--report-only` reads an
existing `--work` directory and runs nothing. The 1-minute load average is logged before and after
each step: the machine may be shared, so the figures are ratios of runs of one session.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tuner.model.evidence import measured_of
from tuner.store.recommendation import Measured, SLOBounds, load_recommendation
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

ROOT = Path(__file__).resolve().parents[1]
GRID = "loadtests/recommend-grid.yaml"
QUNAR = "loadtests/qunar-logs.yaml"
FILEBEAT = "loadtests/filebeat-small-logs.yaml"
SLO_P99_MS = 1000.0
MAX_TRIALS = 6
P2_WITHIN = 0.05
P2_TRIAL_SHARE = 0.25
STEPS = ("grid", "p2", "p1", "filebeat", "truth")


def kbt(*args: str, ok: tuple[int, ...] = (0,)) -> int:
    code = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=ROOT).returncode
    if code not in ok:
        raise SystemExit(f"kbt {' '.join(args)} exited {code}")
    return code


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def records(results: Path) -> list[RunRecord]:
    store = ResultsStore(results)
    return [r for sweep in store.sweeps() for r in store.records(sweep)]


def newest_recommendation(out: Path) -> Any:
    found = sorted(out.glob("*/recommendation.json"), key=lambda p: p.stat().st_mtime)
    return load_recommendation(found[-1]) if found else None


def run_steps(args: argparse.Namespace, work: Path, lab: list[str], log: list[str]) -> None:
    def step(name: str, *cmd: str, ok: tuple[int, ...] = (0,)) -> None:
        if args.only and name not in args.only:
            return
        before, start = loadavg(), time.monotonic()
        kbt(*cmd, ok=ok)
        log.append(
            f"{name}: {(time.monotonic() - start) / 60:.1f} min, load average {before:.1f} -> {loadavg():.1f}"
        )

    out = work / "out"
    # Exit 3 (no setting met the SLO) writes no recommendation; the report then says so.
    # A sweep exits 1 when a run lost records: the report shows them.
    step("grid", "sweep", GRID, *lab, "--results", str(work / "grid"), ok=(0, 1))
    step(
        "p2", "recommend", str(work / "p2"), "--live", GRID, "--client", "librdkafka",
        "--max-trials", str(MAX_TRIALS), *lab, "--out", str(out / "p2"), ok=(0, 3),
    )  # fmt: skip
    step(
        "p1", "recommend", str(work / "p1"), "--live", QUNAR, "--client", "librdkafka",
        "--slo-p99", f"{SLO_P99_MS:g}", *lab, "--out", str(out / "p1"), ok=(0, 3),
    )  # fmt: skip
    step("filebeat", "sweep", FILEBEAT, *lab, "--results", str(work / "filebeat"), ok=(0, 1))
    for name, client in (("grid", "librdkafka"), ("filebeat", "filebeat")):
        step("truth", "recommend", str(work / name), "--client", client, "--out", str(out / name), ok=(0, 3))


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} ms"


def _f(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def _linger(r: RunRecord) -> str:
    p = r.plan.profile
    return f"linger {p.linger_ms:g} ms" if p.linger_ms is not None else "linger default"


def p1_report(work: Path) -> list[str]:
    rec = newest_recommendation(work / "out" / "p1")
    if rec is None:
        return ["P1: no recommendation under out/p1"]
    [c] = [c for c in rec.clients if c.client == "librdkafka"]
    m, b = c.measured, c.baseline_measured
    if m is None or b is None:
        return ["P1: the recommendation has no measured run or baseline run"]
    lines = [
        f"P1 ({rec.workload.name}, {rec.brokers} brokers, SLO p99 <= {_ms(rec.slo.p99_ms)}):",
        "",
        "| run | setting | produce req/s client | busiest broker | broker-side req/s | p99 delivery"
        " | lost | net idle | handler idle | broker CPU |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, setting, x in (
        ("baseline", rec.baseline.name, b),
        ("recommended", _describe(c.profile), m),
    ):
        lines.append(
            f"| {label} ({x.run_id.rsplit('/', 1)[-1]}) | {setting} | {x.requests_per_s:.1f}"
            f" | {_f(x.busiest_broker_requests_per_s)} | {_f(x.broker_requests_per_s)} | {_ms(x.p99_ms)}"
            f" | {x.lost} | {_f(x.network_idle_ratio, '{:.3f}')} | {_f(x.handler_idle_ratio, '{:.3f}')}"
            f" | {_f(x.broker_cpu_cores, '{:.2f}')} |"
        )
    lines.append("")
    lines.append(
        f"- reduction {b.requests_per_s / m.requests_per_s:.1f}x (client), busiest broker"
        f" {(b.busiest_broker_requests_per_s or 0) / (m.busiest_broker_requests_per_s or 1):.1f}x;"
        f" p99 {_ms(m.p99_ms)}; lost {m.lost}; net idle {_f(b.network_idle_ratio, '{:.3f}')} ->"
        f" {_f(m.network_idle_ratio, '{:.3f}')}"
    )
    if c.floor is not None:
        fl = c.floor
        lines.append(
            f"- floor at {fl.allowed_linger_ms:g} ms: {fl.producer_broker_rps:.1f} req/s"
            f" (producers x brokers) -> {m.requests_per_s / fl.producer_broker_rps:.2f}x;"
            f" {fl.producer_rps:.1f} (producers) -> {m.requests_per_s / fl.producer_rps:.2f}x"
        )
    lines += _trials(c)
    return lines


def _describe(profile: Any) -> str:
    from tuner.model.search import describe_profile

    return describe_profile(profile)


def _trials(c: Any) -> list[str]:
    out = []
    for i, t in enumerate(c.trials, 1):
        m: Measured | None = t.measured
        out.append(
            f"- trial {i} ({t.reason}): {_describe(t.profile)}: predicted {t.predicted.requests_per_s:.1f}"
            f" req/s p99 {_ms(t.predicted.p99_ms)}; measured {_f(m.requests_per_s if m else None)} req/s"
            f" p99 {_ms(m.p99_ms if m else None)}, lost {m.lost if m else '-'}"
            f" ({'meets' if m and m.meets_slo else 'misses'} the SLO)"
        )
    return out


def p2_report(work: Path) -> list[str]:
    grid = [r for r in records(work / "grid") if r.sweep == "recommend-grid"]
    if not grid:
        return ["P2: no grid records"]
    slo = SLOBounds(
        p99_ms=grid[0].plan.slo.p99_ms if grid[0].plan.slo else SLO_P99_MS,
        max_producer_memory_mb=grid[0].plan.slo.max_producer_memory_mb if grid[0].plan.slo else None,
    )
    rows = sorted(((r, measured_of(r, slo)) for r in grid), key=lambda rm: rm[1].requests_per_s)
    columns = sorted({(r.plan.profile.name, r.plan.profile.compression or "none") for r in grid})
    lingers = sorted({r.plan.profile.linger_ms or 0.0 for r in grid})
    cell = {
        (r.plan.profile.linger_ms or 0.0, r.plan.profile.name, r.plan.profile.compression or "none"): m
        for r, m in rows
    }
    lines = [
        f"P2 grid ({len(grid)} runs, SLO p99 <= {_ms(slo.p99_ms)}): produce requests/s (p99; * misses"
        " the SLO)",
        "",
        "| linger.ms | " + " | ".join(f"{name} {codec}" for name, codec in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for linger in lingers:
        cells = []
        for name, codec in columns:
            m = cell.get((linger, name, codec))
            cells.append(
                "-" if m is None
                else f"{m.requests_per_s:.1f} ({_ms(m.p99_ms)}{'' if m.meets_slo else ' *'})"
            )  # fmt: skip
        lines.append(f"| {linger:g} | " + " | ".join(cells) + " |")
    lost = sum(m.lost for _, m in rows)
    lines.append("")
    lines.append(f"- lost over the grid: {lost}")
    meeting = [(r, m) for r, m in rows if m.meets_slo]
    rec = newest_recommendation(work / "out" / "p2")
    lines.append("")
    if not meeting or rec is None:
        return [*lines, "P2: no grid run met the SLO, or no recommendation under out/p2"]
    best_r, best = meeting[0]
    busiest_best = min(m.busiest_broker_requests_per_s or m.requests_per_s for _, m in meeting)
    [c] = [c for c in rec.clients if c.client == "librdkafka"]
    m = c.measured
    lines.append(f"- grid best meeting the SLO: {best_r.name}, {best.requests_per_s:.1f} req/s"
                 f" (busiest broker: best {busiest_best:.1f})")  # fmt: skip
    if m is None:
        return [*lines, "- the recommendation has no confirmed run"]
    runs = len(c.trials) + (1 if c.baseline_measured is not None and c.baseline_measured.run_id not in
                            {t.measured.run_id for t in c.trials if t.measured} else 0)  # fmt: skip
    lines.append(
        f"- recommender: {_describe(c.profile)} ({c.status}), {m.requests_per_s:.1f} req/s, busiest"
        f" {_f(m.busiest_broker_requests_per_s)}, p99 {_ms(m.p99_ms)}:"
        f" {m.requests_per_s / best.requests_per_s:.3f}x"
        f" the grid's best (busiest: {(m.busiest_broker_requests_per_s or 0) / busiest_best:.3f}x);"
        f" {len(c.trials)} search trials, {runs} lab runs in all = {runs / len(grid):.1%} of the grid's"
    )
    # Fewer requests is better: the target is at most 5% more than the grid's best (a ratio below
    # 1.0 means the search found a setting the grid's steps skipped), in <= 25% of its runs.
    within = m.requests_per_s <= (1 + P2_WITHIN) * best.requests_per_s
    cheap = runs <= P2_TRIAL_SHARE * len(grid)
    lines.append(
        f"- P2 target (<= {1 + P2_WITHIN:.2f}x the grid's best req/s, <= {P2_TRIAL_SHARE:.0%} of its runs):"
        f" {'met' if within and cheap else 'NOT met'}"
    )
    return [*lines, *_trials(c)]


def truth_report(work: Path) -> list[str]:
    lines = ["Model truth (predicted vs measured client produce requests/s):", ""]
    for name in ("grid", "filebeat", "p2", "p1"):
        rec = newest_recommendation(work / "out" / name)
        if rec is None:
            continue
        for t in rec.model_truth:
            lines.append(
                f"- {name}: {t.client}, {t.runs} runs: median |error| {t.median_abs_error:.1%},"
                f" max {t.max_abs_error:.1%}"
            )
    return lines


def per_run_truth(results: Path) -> list[str]:
    """Predicted vs measured per record (the same predictions model_truth compares)."""
    from tuner.model.evidence import calibrate, traffic_of_record
    from tuner.model.predict import predict

    recs = [r for r in records(results) if r.status == "ok" and r.client.produce_requests]
    cal = calibrate(recs)
    out = ["| run | predicted req/s | measured req/s | error |", "|---|---|---|---|"]
    errors = []
    for r in sorted(recs, key=lambda r: r.name):
        pred = predict(traffic_of_record(r), r.plan.profile, cal).requests_per_s
        meas = r.client.requests_per_s
        errors.append(abs(pred - meas) / meas)
        out.append(f"| {r.name} | {pred:.1f} | {meas:.1f} | {(pred - meas) / meas:+.1%} |")
    if errors:
        out.append(f"| median abs | | | {statistics.median(errors):.1%} |")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench-recommend")
    parser.add_argument("--lab-dir", type=Path, help="use this running lab instead of starting one")
    parser.add_argument("--base-port", type=int, default=int(os.environ.get("KBT_LAB_BASE_PORT", 21000)))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--only", nargs="*", choices=STEPS, help="run only these steps")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    work: Path = args.work
    log: list[str] = []
    if not args.report_only:
        work.mkdir(parents=True, exist_ok=True)
        own = args.lab_dir is None
        lab_dir = args.lab_dir or work / "lab"
        if own:
            kbt("lab", "up", "--lab-dir", str(lab_dir), "--base-port", str(args.base_port))
        try:
            run_steps(args, work, ["--lab-dir", str(lab_dir)], log)
        finally:
            if own:
                kbt("lab", "down", "--lab-dir", str(lab_dir))
        (work / "steps.json").write_text(json.dumps(log, indent=1))
    elif (work / "steps.json").exists():
        log = json.loads((work / "steps.json").read_text())
    parts = [
        p1_report(work),
        p2_report(work),
        truth_report(work),
        ["Per grid run:", "", *per_run_truth(work / "grid")],
        ["Per Filebeat run:", "", *per_run_truth(work / "filebeat")],
        ["Steps:", "", *(f"- {line}" for line in log)],
    ]
    text = "\n\n".join("\n".join(p) for p in parts) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
