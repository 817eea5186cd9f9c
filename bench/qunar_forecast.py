"""kbt's forecast against Qunar's published figures (issue P5, docs/benchmarks.md "Pressure regime").

    python -m bench.qunar_forecast RESULTS [RESULTS ...] [--request-bytes 500 1620 5000]

Qunar's log cluster (its published write-up) reported, a week after batching Filebeat:
client produce requests 600 M -> 230 M (2.6x fewer; 10x on the representative topics tried
first), network traffic 2.5 G -> 2.0 G, and NetworkProcessorAvgIdlePercent from its lowest 0.72 to
0.93. The article gives no per-broker rates, so this check is in ratios: the broker cost model
fitted from RESULTS (the run records of `kbt sweep`; tuner.model.cost) is put at Qunar's starting
point, a broker whose network threads are 28% busy (idle 0.72) with requests of a given size,
and `forecast` (tuner.model.forecast, what `kbt forecast` runs) predicts the idle after Qunar's
cut. The request size before batching is not published either, so the check is repeated for a few
sizes around one 1.62 KB log line per request (Qunar's sample 1, Filebeat with
bulk_flush_frequency 0).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench._common import arguments, read_records
from tuner.model.cost import fit_cost_model
from tuner.model.forecast import forecast
from tuner.model.forecast_today import Baseline

FEEDS = '"`kbt forecast` against Qunar\'s published figures"'

QUNAR_IDLE_BEFORE = 0.72
QUNAR_IDLE_AFTER = 0.93
# (label, requests factor, bytes factor) of Qunar's published cuts
CUTS = [
    ("cluster: requests 600 M -> 230 M, traffic 2.5 G -> 2.0 G", 230 / 600, 2.0 / 2.5),
    ("representative topics: requests / 10, same bytes", 0.1, 1.0),
]


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("results", nargs="+", type=Path, help="results directories (kbt sweep --results)")
    parser.add_argument("--request-bytes", nargs="+", type=float, default=[500.0, 1620.0, 5000.0])
    args = parser.parse_args()
    records = read_records(args.results, "bench.qunar_forecast")
    if records is None:
        return 2
    records = [r for r in records if r.status == "ok"]
    model = fit_cost_model(records)
    net = model.network
    even = net.break_even_request_bytes
    print(
        f"Cost model from {len(records)} ok runs ({net.n} broker windows): network busy ="
        f" {net.requests_coef * 1e6:.1f} us x requests/s + {net.bytes_coef * 1e9:.1f} ns x bytes/s"
        f" + {net.intercept:.4f} (R^2 {net.r2:.2f}); break-even request"
        f" {'none' if even is None else format(even, ',.0f') + ' B'}"
    )
    if net.requests_coef <= 0 and net.bytes_coef <= 0:
        print("bench.qunar_forecast: these runs fit no cost per request or byte: nothing to forecast")
        return 2
    print()
    print("| request before | per-request share of busy | Qunar's cut | forecast idle | Qunar reported |")
    print("|---|---|---|---|---|")
    busy = 1 - QUNAR_IDLE_BEFORE
    for size in args.request_bytes:
        # One broker at Qunar's starting point: requests of `size` bytes making its network threads
        # 28% busy under the fitted model.
        per_request = net.requests_coef + net.bytes_coef * size
        requests = max(0.0, busy - net.intercept) / per_request
        share = net.requests_coef * requests / busy
        for label, req_factor, bytes_factor in CUTS:
            bases = [
                Baseline(label="current", role="current", brokers=1, requests_per_s=requests,
                         bytes_per_s=requests * size),
                Baseline(label="recommended", role="recommended", brokers=1,
                         requests_per_s=requests * req_factor, bytes_per_s=requests * size * bytes_factor),
            ]  # fmt: skip
            fc = forecast(model, bases, peak=1.0)
            now, after = fc.rows[0].network_idle, fc.rows[1].network_idle
            print(
                f"| {size:,.0f} B | {share:.0%} | {label} | {now:.2f} -> {after:.2f} |"
                f" {QUNAR_IDLE_BEFORE:.2f} -> {QUNAR_IDLE_AFTER:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
