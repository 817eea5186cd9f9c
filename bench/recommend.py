"""The recommender's P1 figures (docs/benchmarks.md "Recommender"), side by side on one lab.

    make bench-recommend   # or: python -m bench.recommend [--base-port 21000] [--work DIR]

Starts a 3-broker lab of its own (or uses `--lab-dir`), then, each step into its own results
directory under `--work` so no step calibrates on another's records:

    p1/        kbt recommend --live loadtests/qunar-logs.yaml --client librdkafka --slo-p99 1000
               (the baseline run is filebeat-like, the spec's first profile)
    filebeat/  kbt sweep loadtests/filebeat-small-logs.yaml             (model truth for Filebeat)
    out/       the recommendations; `kbt recommend filebeat/` reports the model truth over its records

and prints the figures as Markdown (`--markdown FILE` also writes them). `--report-only` reads an
existing `--work` directory and runs nothing. The 1-minute load average is logged before and after
each step: the machine may be shared, so the figures are ratios of runs of one session.
P2 (the recommender against an exhaustive grid, per client kind) is bench/p2.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from bench._common import ROOT, arguments, emit, lab, ms, newest_recommendation, timed_step
from tuner.model.evidence import truth_rows
from tuner.store.recommendation import Measured
from tuner.store.results import ResultsStore

FEEDS = '"Recommender", "P1: recommended vs Filebeat-like defaults"'

QUNAR = "loadtests/qunar-logs.yaml"
FILEBEAT = "loadtests/filebeat-small-logs.yaml"
SLO_P99_MS = 1000.0
STEPS = ("p1", "filebeat", "truth")


def run_steps(args: argparse.Namespace, work: Path, lab: list[str], log: list[str]) -> None:
    def step(name: str, *cmd: str, ok: tuple[int, ...] = (0,)) -> None:
        if not args.only or name in args.only:
            timed_step(log, name, *cmd, ok=ok)

    out = work / "out"
    # Exit 3 (no setting met the SLO) writes no recommendation; the report then says so.
    # A sweep exits 1 when a run lost records: the report shows them.
    step(
        "p1", "recommend", "--results", str(work / "p1"), "--live", QUNAR, "--client", "librdkafka",
        "--slo-p99", f"{SLO_P99_MS:g}", *lab, "--out", str(out / "p1"), ok=(0, 3),
    )  # fmt: skip
    step("filebeat", "sweep", FILEBEAT, *lab, "--results", str(work / "filebeat"), ok=(0, 1))
    step(
        "truth",
        "recommend",
        "--results",
        str(work / "filebeat"),
        "--client",
        "filebeat",
        "--out",
        str(out / "filebeat"),
        ok=(0, 3),
    )


def _f(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def p1_report(work: Path) -> list[str]:
    rec = newest_recommendation(work / "out" / "p1")
    if rec is None:
        return ["P1: no recommendation under out/p1"]
    [c] = [c for c in rec.clients if c.client == "librdkafka"]
    m, b = c.measured, c.baseline_measured
    if m is None or b is None:
        return ["P1: the recommendation has no measured run or baseline run"]
    lines = [
        f"P1 ({rec.workload.name}, {rec.brokers} brokers, SLO p99 <= {ms(rec.slo.p99_ms)}):",
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
            f" | {_f(x.busiest_broker_requests_per_s)} | {_f(x.broker_requests_per_s)} | {ms(x.p99_ms)}"
            f" | {x.lost} | {_f(x.network_idle_ratio, '{:.3f}')} | {_f(x.handler_idle_ratio, '{:.3f}')}"
            f" | {_f(x.broker_cpu_cores, '{:.2f}')} |"
        )
    lines.append("")
    lines.append(
        f"- reduction {b.requests_per_s / m.requests_per_s:.1f}x (client), busiest broker"
        f" {(b.busiest_broker_requests_per_s or 0) / (m.busiest_broker_requests_per_s or 1):.1f}x;"
        f" p99 {ms(m.p99_ms)}; lost {m.lost}; net idle {_f(b.network_idle_ratio, '{:.3f}')} ->"
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
            f" req/s p99 {ms(t.predicted.p99_ms)}; measured {_f(m.requests_per_s if m else None)} req/s"
            f" p99 {ms(m.p99_ms if m else None)}, lost {m.lost if m else '-'}"
            f" ({'meets' if m and m.meets_slo else 'misses'} the SLO)"
        )
    return out


def truth_report(work: Path) -> list[str]:
    lines = ["Model truth (predicted vs measured client produce requests/s):", ""]
    for name in ("filebeat", "p1"):
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
    """Predicted vs measured per record (the same comparison model_truth makes)."""
    rows = truth_rows(ResultsStore(results).records())
    out = ["| run | predicted req/s | measured req/s | error |", "|---|---|---|---|"]
    out += [f"| {r.record.name} | {r.predicted:.1f} | {r.measured:.1f} | {r.error:+.1%} |" for r in rows]
    if rows:
        out.append(f"| median abs | | | {statistics.median(abs(r.error) for r in rows):.1%} |")
    return out


def main() -> int:
    parser = arguments(__doc__, FEEDS)
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
        with lab(args.lab_dir, work / "lab", args.base_port) as at:
            lab_args = at.args
            run_steps(args, work, lab_args, log)
        (work / "steps.json").write_text(json.dumps(log, indent=1))
    elif (work / "steps.json").exists():
        log = json.loads((work / "steps.json").read_text())
    parts = [
        p1_report(work),
        truth_report(work),
        ["Per Filebeat run:", "", *per_run_truth(work / "filebeat")],
        ["Steps:", "", *(f"- {line}" for line in log)],
    ]
    emit(parts, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
