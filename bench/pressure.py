"""The pressure lab's capacity curve: offered rate x {Filebeat-like, batched}, knee marked.

    make bench-pressure        # or: python -m bench.pressure [--base-port P] [--lab-dir D]
                               #     [--results DIR] [--markdown F] [--png F] [--spec S]

Starts a pressure lab of its own (`kbt lab up --profile pressure`: one broker, one network and one
handler thread, request queue 16, an fsync per append; tuner/lab/profiles.py) unless --lab-dir names
a running one, runs loadtests/pressure-curve.yaml (the pressure workload at four offered rates, Filebeat-
like with Sarama's 5 requests in flight and kbt's batched profile), and writes one table row per run
and a PNG: produce requests/s on the broker's network thread against its idle (Kafka's meter) and
the request queue (mean), the knee marked at the first rate whose queue sat at its cap for most of
the window. Beside Kafka's figures every row carries the run record's attribution (tuner/measure/
attribution.py): where the network thread's busy time went (blocked on the full queue, its own
CPU, runqueue wait), what limited the handler, host CPU and the load average, and the cause.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bench._common import ROOT, RunLines, arguments, lab
from tuner.runner.wiring import sweep_runner
from tuner.spec.loader import load_sweep
from tuner.spec.thresholds import THRESHOLDS
from tuner.store import ResultsStore
from tuner.store.record import RunRecord

FEEDS = '"The capacity curve" (docs/pressure-curve.md and .png)'

SPEC = ROOT / "loadtests" / "pressure-curve.yaml"
HEADER = (
    "| run | status | offered msgs/s | produce req/s (broker) | msgs/req | network idle | request queue"
    " mean / max (cap) | at cap | network thread: blocked / own CPU / runqueue wait (share of busy) |"
    " handler idle, limited by | broker CPU (cores) | host CPU | load avg | cause | lost |"
)


def _f(value: float | None, digits: int = 2, pct: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if pct else f"{value:,.{digits}f}"


def row(record: RunRecord, knee: bool) -> str:
    client, broker, a = record.client, record.broker, record.attribution
    stats = broker.brokers[0] if broker and broker.brokers else None
    cap = broker.request_queue_cap if broker else None
    queue = (
        f"{_f(stats.request_queue_size, 1)} / {_f(stats.request_queue_size_max, 0)} ({cap or '-'})"
        if stats
        else "-"
    )
    threads_col = limited = cause = host = load = "-"
    if a is not None:
        threads_col = f"{a.blocked:.0%} / {a.own_cpu:.0%} / {a.runqueue_wait:.0%}"
        limited = f"{_f(stats.request_handler_idle_ratio if stats else None)}, {a.handler_limit or '-'}"
        cause, host, load = a.cause, _f(a.threads.host_cpu_busy, pct=True), _f(a.threads.load_avg_1m, 1)
    name = f"**{record.name}** (knee)" if knee else record.name
    return (
        f"| {name} | {record.status} | {offered(record):,.0f} |"
        f" {_f(broker.produce_requests_per_s if broker else None, 0)} | {_f(client.records_per_request, 1)} |"
        f" {_f(broker.network_idle_ratio if broker else None)} | {queue} |"
        f" {_f(stats.request_queue_at_cap_share if stats else None, pct=True)} | {threads_col} | {limited} |"
        f" {_f(broker.cpu_cores if broker else None)} | {host} | {load} | {cause} | {record.delivery.lost} |"
    )


def at_cap(record: RunRecord) -> float:
    stats = record.broker.brokers[0] if record.broker and record.broker.brokers else None
    return (stats.request_queue_at_cap_share or 0.0) if stats else 0.0


def requests(record: RunRecord) -> float:
    return (record.broker.produce_requests_per_s or 0.0) if record.broker else 0.0


def offered(record: RunRecord) -> float:
    return record.client.offered_records / record.client.window_s


def knee_of(records: list[RunRecord]) -> RunRecord | None:
    """The Filebeat-like run at the lowest offered rate whose request queue sat at its cap for most
    of the window (request_queue_full_share): where the curve turns. (Past the knee the requests/s
    served can fall again: the client gathers more records per request while it waits.)"""
    full = [
        r
        for r in records
        if r.plan.profile.name == "filebeat-like" and at_cap(r) >= THRESHOLDS.request_queue_full_share
    ]
    return min(full, key=offered) if full else None


def _drawn(value: float | None) -> float:
    """A missing figure as NaN, which matplotlib leaves out of the plot."""
    return float("nan") if value is None else value


def plot(records: list[RunRecord], knee: RunRecord | None, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, idle_ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    queue_ax = idle_ax.twinx()
    for profile, marker in (("filebeat-like", "o"), ("batched", "s")):
        mine = sorted((r for r in records if r.plan.profile.name == profile), key=offered)
        xs = [requests(r) for r in mine]
        idles = [_drawn(r.broker.network_idle_ratio if r.broker else None) for r in mine]
        idle_ax.plot(xs, idles, marker=marker, linestyle="none", color="tab:blue",
                     label=f"network idle, {profile}")  # fmt: skip
        queues = [_drawn(r.broker.brokers[0].request_queue_size if r.broker and r.broker.brokers else None)
                  for r in mine]  # fmt: skip
        queue_ax.plot(xs, queues, marker=marker, linestyle="none", color="tab:red",
                      label=f"request queue (mean), {profile}")  # fmt: skip
        for r, x, y in zip(mine, xs, idles, strict=True):  # each point's offered load
            idle_ax.annotate(f"{offered(r):,.0f}/s", (x, y or 0), fontsize=6, xytext=(4, 3),
                             textcoords="offset points")  # fmt: skip
    if knee is not None:
        idle_ax.axvline(requests(knee), color="grey", linestyle=":")
        idle_ax.annotate(f"knee ~{requests(knee):,.0f} req/s", (requests(knee), 0.05), rotation=90,
                         ha="right", va="bottom", color="grey")  # fmt: skip
    idle_ax.set_xlabel("produce requests/s on the broker's one network thread (labels: offered msgs/s)")
    idle_ax.set_ylabel("NetworkProcessorAvgIdlePercent (mean over the window)", color="tab:blue")
    queue_ax.set_ylabel("request queue size (mean; cap 16)", color="tab:red")
    idle_ax.set_ylim(0, 1.05)
    queue_ax.set_ylim(0, 17)
    idle_ax.set_title("Pressure lab capacity curve (kbt lab up --profile pressure)")
    lines = idle_ax.get_legend_handles_labels()
    more = queue_ax.get_legend_handles_labels()
    idle_ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(path)


def main() -> int:
    parser = arguments(__doc__, FEEDS)
    parser.add_argument("--base-port", type=int, default=22900)
    parser.add_argument("--lab-dir", type=Path, help="a running pressure lab to use instead of a new one")
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--results", type=Path, help="keep the run records here")
    parser.add_argument(
        "--from-results", type=Path, help="write the table and plot from these run records (no lab, no load)"
    )
    parser.add_argument("--markdown", type=Path, default=ROOT / "docs" / "pressure-curve.md")
    parser.add_argument("--png", type=Path, default=ROOT / "docs" / "pressure-curve.png")
    args = parser.parse_args()
    if args.from_results is not None:
        return report(ResultsStore(args.from_results).records(), args.markdown, args.png)
    with tempfile.TemporaryDirectory(prefix="kbt-bench-pressure-") as tmp:
        results = args.results or Path(tmp) / "results"
        with lab(
            args.lab_dir, Path(tmp) / "lab", args.base_port, "--profile", "pressure", "--timeout", "240"
        ) as at:
            runner = sweep_runner(lab_dir=at.dir, results=results, observer=RunLines())
            records = runner.run(load_sweep(args.spec)).records
    return report(records, args.markdown, args.png)


def report(records: list[RunRecord], markdown: Path, png: Path) -> int:
    """The table (printed and written to `markdown`) and the plot (`png`)."""
    knee = knee_of(records)
    ordered = sorted(records, key=lambda r: (r.plan.profile.name != "filebeat-like", offered(r)))
    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    lines += [row(r, r is knee) for r in ordered]
    text = "\n".join(lines) + "\n"
    if knee is not None:
        share = at_cap(knee)
        text += f"\nknee: {knee.name}, {requests(knee):,.0f} produce requests/s (queue at cap {share:.0%})\n"
    for record in ordered:
        if record.attribution is not None:
            text += f"\n- {record.name}: {record.attribution.why}"
    print(text)
    markdown.write_text(text + "\n")
    plot(records, knee, png)
    print(f"wrote {markdown} and {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
