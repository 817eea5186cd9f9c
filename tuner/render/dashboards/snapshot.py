"""A PNG of the Broker pressure dashboard's main panels, for places without Grafana.

Drawn with matplotlib from the dashboard JSON's own queries (variables at "All", $__rate_interval
as a concrete window), run as range queries against a Prometheus, with the panels' threshold lines.

    python -m tuner.render.dashboards.snapshot --lab-dir DIR --minutes 15 --out docs/broker-pressure.png
    make snapshot LAB_DIR=DIR RESULTS=DIR    # the window of a sweep's run records
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, KbtError
from tuner.core.paths import repo_root
from tuner.measure.prometheus import Prometheus
from tuner.render.dashboards import BOARDS
from tuner.render.dashboards.broker_pressure import UID
from tuner.render.dashboards.targets import PanelQuery, fill, legend, panel_queries, query_variables

MAIN_PANELS = (
    "Network thread idle (NetworkProcessorAvgIdlePercent)",
    "Request handler idle (RequestHandlerAvgIdlePercent)",
    "Produce and fetch requests/s by broker",
    "Bytes per produce request",
    "Request and response queues",
    "Produce total time p99.9",
    "Broker CPU",
    "Bytes in / out",
)
_AXIS = {
    "percentunit": "idle fraction",
    "reqps": "requests/s",
    "Bps": "bytes/s",
    "bytes": "bytes",
    "ms": "ms",
}
_COLOURS = {"red": "#d62728", "orange": "#ff7f0e", "green": "#2ca02c"}


def main_panel_queries() -> dict[str, list[PanelQuery]]:
    """The main panels' queries in MAIN_PANELS order."""
    queries = panel_queries(_dashboard())
    out: dict[str, list[PanelQuery]] = {title: [] for title in MAIN_PANELS}
    for q in queries:
        if q.panel in out:
            out[q.panel].append(q)
    missing = [t for t, qs in out.items() if not qs]
    if missing:
        raise KbtError(f"the Broker pressure dashboard has no panel {missing[0]!r}")
    return out


def _dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(next(b for b in BOARDS if b.uid == UID).json())
    return data


def draw(
    prom: Prometheus,
    start: float,
    end: float,
    out: Path,
    *,
    step_s: float = 5.0,
    rate_interval: str = "30s",
) -> list[str]:
    """Write the PNG; return the titles of panels that had no data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter, PercentFormatter

    values = {name: ".*" for name in query_variables(_dashboard())}
    panels = main_panel_queries()
    fig, axes = plt.subplots(4, 2, figsize=(14, 15), sharex=True)
    empty: list[str] = []
    for ax, (title, queries) in zip(axes.flat, panels.items(), strict=True):
        unit = queries[0].unit
        top = 0.0
        drawn = 0
        for q in queries:
            for s in prom.range(fill(q.expr, values, rate_interval), start, end, step_s):
                if not any(v == v for _, v in s.points):  # only NaN (0/0 before traffic)
                    continue
                xs, ys = _with_gaps(s.points, step_s)
                ax.plot(xs, ys, linewidth=1.2, label=legend(q.legend, s.labels))
                top = max(top, *(v for v in ys if v == v))
                drawn += 1
        if not drawn:
            empty.append(title)
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        off_scale = []
        for value, colour in queries[0].thresholds:
            if unit == "percentunit" or value <= max(top, 1e-9) * 2:
                ax.axhline(value, color=_COLOURS.get(colour, colour), linestyle="--", linewidth=1)
            else:  # far above the data: say so instead of squashing the lines
                off_scale.append(f"{value:g}")
        if off_scale:
            note = f"threshold lines at {', '.join(off_scale)}: off scale"
            ax.annotate(note, (0.01, 0.93), xycoords="axes fraction", fontsize=7, color="dimgray")
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(_AXIS.get(unit, ""), fontsize=8)
        if unit == "percentunit":
            ax.set_ylim(0, 1.05)
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        else:
            ax.set_ylim(bottom=0)
            if unit in ("bytes", "Bps"):
                ax.yaxis.set_major_formatter(EngFormatter(unit="B"))
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
        if drawn:
            ax.legend(fontsize=7, loc="best", ncol=2 if drawn > 3 else 1)
    for ax in axes[-1]:
        time_axis(ax)
        ax.set_xlabel("time (UTC)", fontsize=8)
    span = f"{_stamp(start)} - {_stamp(end)} UTC"
    fig.suptitle(f"kbt / Broker pressure (main panels), {span}", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return empty


def time_axis(ax: Any) -> None:
    """Time ticks a reader can tell apart: a few per axis, each label once, with seconds only when
    the ticks are less than a minute apart (an `%H:%M` label on 30 s ticks repeated itself)."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(tz=UTC, minticks=4, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    formatter = mdates.AutoDateFormatter(locator, tz=UTC)
    # The format by tick spacing, in days: seconds shown only when ticks are under a minute apart.
    formatter.scaled = {
        365.0: "%Y",
        30.0: "%Y-%m",
        1.0: "%m-%d",
        1 / 24: "%m-%d %H:%M",
        1 / (24 * 60): "%H:%M",
        1 / (24 * 3600): "%H:%M:%S",
    }
    ax.xaxis.set_major_formatter(formatter)


def window_of_runs(results: Path, margin_s: float = 60.0) -> tuple[float, float]:
    """The span of the run records under `results` (from the first run's start to the last run's
    end) with a margin each side: the snapshot of a sweep shows its pressure and its relief."""
    from tuner.store.results import ResultsStore

    records = ResultsStore(results).records()
    if not records:
        raise BadInput(f"no run records under {results}")
    start = min(r.client.started_at for r in records)
    end = max(r.client.finished_at for r in records)
    return start - margin_s, end + margin_s


def _with_gaps(points: list[tuple[float, float]], step_s: float) -> tuple[list[datetime], list[float]]:
    """Times and values with a NaN wherever Prometheus had no sample, so a gap shows as a gap."""
    xs: list[datetime] = []
    ys: list[float] = []
    last: float | None = None
    for t, v in points:
        if last is not None and t - last > 1.5 * step_s:
            xs.append(datetime.fromtimestamp(last + step_s, UTC))
            ys.append(float("nan"))
        xs.append(datetime.fromtimestamp(t, UTC))
        ys.append(v)
        last = t
    return xs, ys


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def _prometheus_url(lab_dir: str | None, url: str | None) -> str:
    if url:
        return url
    from tuner.target.registry import resolve_target

    found = resolve_target(Path(lab_dir) if lab_dir else None).prometheus_url
    if found is None:
        raise SystemExit("the target has no Prometheus: give --prometheus URL")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tuner.render.dashboards.snapshot", description=__doc__)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--lab-dir", help="a running lab (default: KBT_LAB_DIR or the default lab)")
    where.add_argument("--prometheus", help="a Prometheus URL instead of a lab")
    parser.add_argument("--minutes", type=float, default=15.0, help="window ending now (default 15)")
    parser.add_argument("--end", type=float, help="window end, unix seconds (default now)")
    parser.add_argument("--step", type=float, default=5.0, help="seconds between points (default 5)")
    parser.add_argument("--rate-interval", default="30s", help="$__rate_interval value (default 30s)")
    parser.add_argument(
        "--results", type=Path, help="window from these run records (first start to last end, 60 s margins)"
    )
    parser.add_argument("--out", type=Path, default=repo_root() / "docs" / "broker-pressure.png")
    args = parser.parse_args(argv)
    try:
        if args.minutes <= 0 or args.step <= 0:
            raise BadInput("--minutes and --step must be positive")
        end = args.end or time.time()
        start = end - args.minutes * 60
        if args.results is not None:
            start, end = window_of_runs(args.results)
        prom = Prometheus(_prometheus_url(args.lab_dir, args.prometheus))
        empty = draw(prom, start, end, args.out, step_s=args.step, rate_interval=args.rate_interval)
    except KbtError as exc:
        sys.stderr.write(f"kbt: error: {exc.message}\n")
        return int(exc.status)
    print(f"wrote {args.out}")
    if empty:
        print(f"no data in: {', '.join(empty)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
