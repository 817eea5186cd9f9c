"""Figures for docs/benchmarks.md `## Diagnose and forecast`, from a results directory of real runs.

    kbt lab up
    kbt sweep loadtests/qunar-logs.yaml --results results/bench-diagnose
    kbt sweep loadtests/cost-model.yaml --results results/bench-diagnose
    python -m bench.diagnose results/bench-diagnose

For every run of the baseline sweep (qunar-logs) it runs `kbt diagnose` over that run's measured
window (--end/--window) against the lab's Prometheus, fits the broker cost model from every record
in the directory (`kbt forecast --save-model`), and runs `kbt forecast --peak 3x`. Prints Markdown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench._common import arguments, kbt_json
from tuner.lab import load_state
from tuner.model.cost import observations
from tuner.store.results import ResultsStore

FEEDS = (
    '"Diagnose and forecast" (no longer a section of the file; nearest today:'
    ' "Diagnose on the pressure lab", and docs/diagnose.md\'s cost model)'
)


def kbt(*args: str) -> tuple[int, Any]:
    """`kbt *args --json -`; diagnose's findings (exit 10, 11) are answers too."""
    return kbt_json(*args, ok=(0, 10, 11))


def diagnose_runs(results: Path, sweep: str, prometheus: str, step_s: float) -> None:
    print(
        "| run | exit | status | cause per broker | produce req/s per broker | B/request | net idle"
        " | handler idle |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, record in sorted(ResultsStore(results).latest(sweep).items()):
        window = record.client.window_end - record.client.window_start
        code, d = kbt(
            "diagnose", "--prometheus", prometheus, "--end", f"{record.client.window_end:.3f}",
            "--window", f"{int(window)}s", "--step", f"{step_s:g}s",
        )  # fmt: skip
        snaps = d["snapshot"]["brokers"]
        causes = ", ".join(sorted({b["cause"] for b in d["brokers"]}))
        reqs = "/".join(f"{s['produce_requests_per_s']:.0f}" for s in snaps)
        bpr = "/".join(f"{s['bytes_in_per_s'] / s['produce_requests_per_s']:.0f}" for s in snaps)
        net = "/".join(f"{s['network_idle_ratio']:.3f}" for s in snaps)
        hnd = "/".join(f"{s['request_handler_idle_ratio']:.3f}" for s in snaps)
        print(f"| {name} | {code} | {d['status']} | {causes} | {reqs} | {bpr} | {net} | {hnd} |")
        for b in d["brokers"][:1]:
            for f in b["findings"]:
                print(f"|  | | | broker {b['broker']}: {f['summary']} | | | | |")


def fit(results: Path, model_path: Path) -> None:
    records = ResultsStore(results).records()
    obs = observations(records)
    model = json.loads(model_path.read_text())
    print(f"\n{len(records)} run records, {len(obs)} broker windows (sweeps: "
          f"{', '.join(sorted({r.sweep for r in records}))})\n")  # fmt: skip
    print("| pool | per produce req/s | per MB/s | intercept | R^2 | RMSE | n | break-even request |")
    print("|---|---|---|---|---|---|---|---|")
    for pool in ("network", "handler", "cpu"):
        m = model.get(pool)
        if not m:
            continue
        even = m["requests_coef"] / m["bytes_coef"] if m["bytes_coef"] > 0 else float("inf")
        print(
            f"| {pool} | {m['requests_coef']:.3g} | {m['bytes_coef'] * 1e6:.3g} | {m['intercept']:.3f} | "
            f"{m['r2']:.2f} | {m['rmse']:.3f} | {m['n']} | {even:,.0f} B |"
        )


def forecast(results: Path, sweep: str, peak: str) -> None:
    _, f = kbt("forecast", str(results), "--sweep", sweep, "--peak", peak)
    print(f"\n| settings ({peak}) | brokers | produce req/s | net idle today -> peak "
          f"| handler idle today -> peak | brokers for idle >= {f['min_idle']} |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for r in f["rows"]:
        needed = "unreachable" if r["brokers_needed"] is None else r["brokers_needed"]
        print(
            f"| {r['label']} | {r['brokers']} | {r['requests_per_s']:,.0f} | "
            f"{r['today_network_idle']:.3f} -> {r['network_idle']:.3f} | "
            f"{r['today_handler_idle']:.3f} -> {r['handler_idle']:.3f} | "
            f"{needed} ({r['limited_by']}) |"
        )


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("results", type=Path)
    parser.add_argument("--sweep", default="qunar-logs", help="baseline sweep (current vs recommended runs)")
    parser.add_argument("--lab-dir", type=Path, default=None, help="lab whose Prometheus holds the runs")
    parser.add_argument("--peak", default="3x")
    args = parser.parse_args()
    state = load_state(args.lab_dir)
    diagnose_runs(args.results, args.sweep, state.prometheus_url, max(state.config.scrape_interval_s, 1.0))
    model_path = args.results / "cost-model.json"
    kbt("forecast", str(args.results), "--sweep", args.sweep, "--save-model", str(model_path))
    fit(args.results, model_path)
    forecast(args.results, args.sweep, args.peak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
