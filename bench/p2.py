"""P2: the recommender against an exhaustive grid, in several passes, for one client kind.

    make bench-p2 CLIENT=librdkafka   # python -m bench.p2 --client librdkafka --passes 3
                                      #   [--lab-dir LAB | --base-port P] [--work DIR] [--markdown F]

One grid sweep (every setting of the client's grid spec, below), then `--passes` independent
`kbt recommend --live` runs of that same spec, each into its own empty results directory, so no
pass calibrates on the grid's records or on another pass's. A pass meets P2 when its confirmed
setting sends at most 5% more produce requests/s than the grid's best `ok` run under the SLO, using
at most 25% of the grid's lab runs (its search trials plus its baseline run). Fewer requests is
better: a ratio below 1.0 means the search found a setting between the grid's steps.
`--report-only` reads an existing `--work` directory and runs nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench._common import ROOT, arguments, emit, lab, ms, newest_recommendation, timed_step
from tuner.model.evidence import measured_of
from tuner.model.search import describe_profile
from tuner.store.recommendation import Measured, SLOBounds
from tuner.store.record import RunRecord
from tuner.store.results import ResultsStore

FEEDS = '"P2: against an exhaustive grid"'

GRIDS = {
    "librdkafka": "loadtests/recommend-grid.yaml",
    "java": "loadtests/recommend-grid-java.yaml",
    "filebeat": "loadtests/recommend-grid-filebeat.yaml",
}
MAX_TRIALS = 6
P2_WITHIN = 0.05
P2_TRIAL_SHARE = 0.25


def run(args: argparse.Namespace, work: Path, lab_args: list[str], log: list[str]) -> None:
    def step(name: str, *cmd: str, ok: tuple[int, ...] = (0,)) -> None:
        timed_step(log, name, *cmd, ok=ok)
        (work / "steps.json").write_text(json.dumps(log, indent=1))

    spec = GRIDS[args.client]
    # A sweep exits 1 when a run lost records (the report shows them); recommend exits 3 when no
    # setting met the SLO (no recommendation is written and the pass is reported as a miss).
    if not (work / "grid").exists() or not ResultsStore(work / "grid").records():
        step("grid", "sweep", spec, *lab_args, "--results", str(work / "grid"), ok=(0, 1))
    for i in range(1, args.passes + 1):
        if (work / "out" / f"pass-{i}").exists():
            continue  # a finished pass is kept: re-running the script completes the missing ones
        step(
            f"pass {i}", "recommend", "--results", str(work / f"pass-{i}"), "--live", spec,
            "--client", args.client, "--max-trials", str(MAX_TRIALS), *lab_args,
            "--out", str(work / "out" / f"pass-{i}"), ok=(0, 3),
        )  # fmt: skip


def grid_rows(work: Path) -> tuple[list[tuple[RunRecord, Measured]], SLOBounds]:
    grid = ResultsStore(work / "grid").records()
    slo = grid[0].plan.slo if grid else None
    bounds = SLOBounds(
        p99_ms=slo.p99_ms if slo else None,
        max_producer_memory_mb=slo.max_producer_memory_mb if slo else None,
    )
    rows = sorted(((r, measured_of(r, bounds)) for r in grid), key=lambda rm: rm[1].requests_per_s)
    return rows, bounds


def report(work: Path, client: str) -> list[str]:
    rows, slo = grid_rows(work)
    if not rows:
        return [f"P2 ({client}): no grid records under {work / 'grid'}"]
    lines = [
        f"Grid: {len(rows)} runs of {GRIDS[client]}, SLO p99 <= {ms(slo.p99_ms)}, fewest requests first:",
        "",
        "| run | status | produce req/s | p99 | lost | meets the SLO |",
        "|---|---|---|---|---|---|",
    ]
    for r, m in rows:
        lines.append(
            f"| {r.name} | {r.status} | {m.requests_per_s:.1f} | {ms(m.p99_ms)} | {m.lost} |"
            f" {'yes' if m.meets_slo else 'no'} |"
        )
    meeting = [(r, m) for r, m in rows if m.meets_slo]
    if not meeting:
        return [*lines, "", f"P2 ({client}): no grid run met the SLO"]
    best_r, best = meeting[0]
    lines += [
        "",
        f"Grid's best under the SLO: {best_r.name}, {best.requests_per_s:.1f} req/s, p99 {ms(best.p99_ms)}",
        "",
    ]
    lines += ["| pass | recommended | status | produce req/s | p99 | lost | vs grid's best | lab runs | P2 |",
              "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    passes = sorted((work / "out").glob("pass-*"), key=lambda p: int(p.name.split("-")[1]))
    met = 0
    for out in passes:
        rec = newest_recommendation(out)
        c = next((c for c in rec.clients if c.client == client), None) if rec else None
        got = c.measured if c else None
        if c is None or got is None:
            lines.append(f"| {out.name} | - | no setting met the SLO | - | - | - | - | - | NOT met |")
            continue
        trial_ids = {t.measured.run_id for t in c.trials if t.measured}
        baseline = c.baseline_measured
        runs = len(c.trials) + (1 if baseline is not None and baseline.run_id not in trial_ids else 0)
        ratio = got.requests_per_s / best.requests_per_s
        ok = got.meets_slo and ratio <= 1 + P2_WITHIN and runs <= P2_TRIAL_SHARE * len(rows)
        met += ok
        lines.append(
            f"| {out.name} | {describe_profile(c.profile)} | {c.status} | {got.requests_per_s:.1f} |"
            f" {ms(got.p99_ms)} | {got.lost} | {ratio:.3f}x | {runs} of {len(rows)}"
            f" ({runs / len(rows):.0%}) | {'met' if ok else 'NOT met'} |"
        )
    lines += [
        "",
        f"P2 ({client}: <= {1 + P2_WITHIN:.2f}x the grid's best req/s within the SLO, <= {P2_TRIAL_SHARE:.0%}"
        f" of its runs): met on {met} of {len(passes)} passes",
    ]
    return lines


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--client", choices=sorted(GRIDS), default="librdkafka")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--work", type=Path, help="default: build/bench-p2/<client>")
    parser.add_argument("--lab-dir", type=Path, help="use this running lab instead of starting one")
    parser.add_argument("--base-port", type=int, default=int(os.environ.get("KBT_LAB_BASE_PORT", 21000)))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    work: Path = args.work or ROOT / "build" / "bench-p2" / args.client
    log: list[str] = []
    if (work / "steps.json").exists():
        log = json.loads((work / "steps.json").read_text())
    if not args.report_only:
        work.mkdir(parents=True, exist_ok=True)
        with lab(args.lab_dir, work / "lab", args.base_port) as at:
            lab_args = at.args
            run(args, work, lab_args, log)
    parts: list[Any] = [report(work, args.client), ["Steps:", "", *(f"- {line}" for line in log)]]
    emit(parts, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
