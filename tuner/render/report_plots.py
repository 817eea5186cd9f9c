"""The report's charts, drawn with matplotlib into PNG bytes (the HTML embeds them).

Each function takes the runs of one sweep (or one stress run) and returns PNG bytes, or None when
the runs hold nothing to draw (e.g. no time series saved).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from tuner.render.report_data import Comparison, RunEntry, figures, pareto_front, profile_runs, rated
from tuner.spec.thresholds import THRESHOLDS

DPI = 100
LABEL_WIDTH = 28  # characters of a run label under a bar
MAX_PROFILE_COLUMNS = 4
MAX_LEGEND_BROKERS = 12
# A results directory can hold thousands of runs: the per-run charts stop growing and stop naming
# each run past these (a figure an inch per run and a label per run took 77 s and 1.4 GB at 5,000).
MAX_FIGURE_INCHES = 40.0
MAX_RUN_LABELS = 60  # run names under the bars, on the timelines, beside the Pareto points
MAX_CHARTED_GROUPS = 20  # sweeps and stress runs charted (the newest); the others are tables only


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    return buf.getvalue()


def _legend(ax: Any, **kwargs: Any) -> None:
    """The axes' legend, when any of its artists has a label (on none, matplotlib warns "No artists
    with labels found", a runs' series without broker lines)."""
    if ax.get_legend_handles_labels()[1]:
        ax.legend(**kwargs)


def _short(label: str, width: int = LABEL_WIDTH) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _per_run_width(runs: int, inches: float) -> float:
    """A per-run chart's width: `inches` a run, at least 6, at most MAX_FIGURE_INCHES."""
    return min(MAX_FIGURE_INCHES, max(6.0, 1.0 + inches * runs))


def _run_ticks(ax: Any, entries: Sequence[RunEntry]) -> None:
    """The runs' names under their bars; past MAX_RUN_LABELS runs, every k-th named (its number
    in the run table's order), so the axis holds at most that many labels."""
    step = -(-len(entries) // MAX_RUN_LABELS)  # ceil
    xs = range(0, len(entries), step)
    ax.set_xticks(list(xs), [_short(entries[x].label) for x in xs], rotation=30, ha="right", fontsize=8)
    if step > 1:
        ax.set_xlabel(f"{len(entries)} runs; one in {step} named", fontsize=8)


def _per_run(ax: Any, series: Sequence[tuple[str, Sequence[float]]]) -> None:
    """Each named series as a bar per run, side by side; past MAX_RUN_LABELS runs, as a marker per
    run (one artist a series, where bars are one each: 20,000 bars took most of a minute)."""
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series):
        if len(values) > MAX_RUN_LABELS:
            ax.plot(range(len(values)), values, marker=".", markersize=3, linestyle="none", label=name)
        else:
            ax.bar([x - 0.4 + width * (k + 0.5) for x in range(len(values))], values, width=width, label=name)


def offered_vs_achieved(entries: Sequence[RunEntry]) -> bytes:
    """Offered vs acked records/s per run (bars)."""
    fig, ax = plt.subplots(figsize=(_per_run_width(len(entries), 0.9), 3.6), layout="constrained")
    figs = [figures(e.record) for e in entries]
    _per_run(
        ax,
        [("offered", [f.offered_per_s for f in figs]), ("acked (achieved)", [f.acked_per_s for f in figs])],
    )
    _run_ticks(ax, entries)
    ax.set_ylabel("records/s")
    ax.set_title("Offered vs achieved load (measured window)")
    _legend(ax, fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return _png(fig)


def _timeline(entries: Sequence[RunEntry]) -> float:
    return min((e.series.start for e in entries if e.series is not None), default=0.0)


def _shade_runs(ax: Any, entries: Sequence[RunEntry], t0: float, label: bool) -> None:
    for i, e in enumerate(entries):
        if e.series is None:
            continue
        start = (e.record.client.window_start if e.record.stress is None else e.record.stress.start) - t0
        end = (e.record.client.window_end if e.record.stress is None else e.record.stress.end) - t0
        ax.axvspan(start, end, color="grey" if i % 2 else "tab:blue", alpha=0.07, linewidth=0)
        if label and len(entries) <= MAX_RUN_LABELS:
            ax.annotate(_short(e.label, 18), (start, 1.0), xycoords=("data", "axes fraction"),
                        fontsize=7, va="bottom", rotation=0)  # fmt: skip


BROKER_PANELS = [
    ("PRODUCE_REQUESTS_RATE", "produce requests/s"),
    ("NETWORK_IDLE", "network idle ratio"),
    ("REQUEST_HANDLER_IDLE", "handler idle ratio"),
    ("REQUEST_QUEUE_SIZE", "request queue size"),
]


def _broker_lines(
    ax: Any, entries: Sequence[RunEntry], query: str, t0: float, colours: dict[str, str]
) -> None:
    """One line per broker (the same colour across runs and panels), x in seconds since t0."""
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labelled: set[str] = set()
    for e in entries:
        if e.series is None:
            continue
        for line in e.series.of(query):
            broker = line.labels.get("broker", "?")
            colour = colours.setdefault(broker, palette[len(colours) % len(palette)])
            name = None if broker in labelled or len(labelled) >= MAX_LEGEND_BROKERS else f"broker {broker}"
            labelled.add(broker)
            ax.plot([t - t0 for t, _ in line.points], [v for _, v in line.points], color=colour,
                    linewidth=1.2, label=name)  # fmt: skip
    if query in ("NETWORK_IDLE", "REQUEST_HANDLER_IDLE"):
        ax.set_ylim(0, 1.05)
        if query == "NETWORK_IDLE":
            ax.axhline(THRESHOLDS.network_idle_critical, color="red", linestyle="--", linewidth=0.8)


def stress_timeline(entries: Sequence[RunEntry]) -> bytes | None:
    """A stress run's broker pressure, one column per profile run side by side on the same stage
    timeline (seconds since the profile's t0) and the same y scale, each stage shaded and named,
    failed stages in red."""
    runs = profile_runs([e for e in entries if e.series is not None])
    if not runs:
        return None
    keys = list(runs)[:MAX_PROFILE_COLUMNS]
    span = max(e.record.stress.stage.end_s for k in keys for e in runs[k] if e.record.stress)  # as planned
    fig, axes = plt.subplots(
        len(BROKER_PANELS), len(keys), figsize=(max(10.0, 6.5 * len(keys)), 2.3 * len(BROKER_PANELS) + 0.6),
        sharex=True, sharey="row", layout="constrained", squeeze=False,
    )  # fmt: skip
    colours: dict[str, str] = {}
    for col, key in enumerate(keys):
        label, t0 = key
        stages = runs[key]
        for row, (query, ylabel) in enumerate(BROKER_PANELS):
            ax = axes[row][col]
            _broker_lines(ax, stages, query, t0, colours)
            for i, e in enumerate(stages):
                step = e.record.stress
                assert step is not None
                bad = step.verdict in ("failed", "aborted")
                ax.axvspan(step.start - t0, step.end - t0, linewidth=0, alpha=0.12 if bad else 0.07,
                           color="tab:red" if bad else ("grey" if i % 2 else "tab:blue"))  # fmt: skip
                if row == 0:
                    ax.annotate(f"{step.stage.name}\n{step.verdict}", (step.start - t0, 1.0),
                                xycoords=("data", "axes fraction"), xytext=(2, 2 + 18 * (i % 2)),
                                textcoords="offset points", fontsize=7, va="bottom")  # fmt: skip
            ax.grid(True, alpha=0.3)
            ax.set_xlim(0, span)
            if col == 0:
                ax.set_ylabel(ylabel, fontsize=8)
        profile = stages[0].record.plan.profile.name
        axes[0][col].set_title(f"{label} ({profile})", fontsize=10, pad=44)
        axes[-1][col].set_xlabel("seconds since the profile's start (t0)")
    _legend(axes[0][0], fontsize=7, loc="upper right")
    fig.suptitle("Broker pressure per profile, per broker (shaded: stages; red: failed or aborted)")
    return _png(fig)


def broker_timeline(entries: Sequence[RunEntry]) -> bytes | None:
    """Produce requests/s, network idle and handler idle over time, one line per broker; runs laid
    out on their real timeline with their measured windows shaded."""
    with_series = [e for e in entries if e.series is not None]
    if not with_series:
        return None
    t0 = _timeline(with_series)
    fig, axes = plt.subplots(
        len(BROKER_PANELS), 1, figsize=(10, 2.3 * len(BROKER_PANELS)), sharex=True, layout="constrained"
    )
    colours: dict[str, str] = {}
    for ax, (query, ylabel) in zip(axes, BROKER_PANELS, strict=True):
        _broker_lines(ax, with_series, query, t0, colours)
        _shade_runs(ax, with_series, t0, label=ax is axes[0])
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(True, alpha=0.3)
    _legend(axes[0], fontsize=7, loc="upper right")
    axes[-1].set_xlabel("seconds since the first run started")
    fig.suptitle("Broker pressure over time, per broker (shaded: each run's measured window)")
    return _png(fig)


def offered_over_time(entries: Sequence[RunEntry]) -> bytes | None:
    """Offered vs acked records/s over time from the run's client series."""
    with_series = [e for e in entries if e.series is not None and e.series.of("OFFERED_RECORDS_RATE")]
    if not with_series:
        return None
    t0 = _timeline(with_series)
    fig, ax = plt.subplots(figsize=(10, 3), layout="constrained")
    for i, e in enumerate(with_series):
        assert e.series is not None
        lines = (("OFFERED_RECORDS_RATE", "--", "offered"), ("ACKED_RECORDS_RATE", "-", "acked"))
        for query, style, name in lines:
            for line in e.series.of(query):
                ax.plot([t - t0 for t, _ in line.points], [v for _, v in line.points], linestyle=style,
                        color="tab:orange" if name == "offered" else "tab:green",
                        label=name if i == 0 else None)  # fmt: skip
    _shade_runs(ax, with_series, t0, label=True)
    ax.set_ylabel("records/s")
    ax.set_xlabel("seconds since the first run started")
    _legend(ax, fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_title("Offered vs acked over time (client series)", pad=14)
    return _png(fig)


def latency_percentiles(entries: Sequence[RunEntry]) -> bytes:
    """Delivery latency p50/p90/p99/p99.9 per run or stage (log scale)."""
    fig, ax = plt.subplots(figsize=(_per_run_width(len(entries), 1.0), 3.8), layout="constrained")
    quantiles = [("p50", "p50_ms"), ("p90", "p90_ms"), ("p99", "p99_ms"), ("p99.9", "p999_ms")]
    figs = [figures(e.record) for e in entries]
    _per_run(ax, [(name, [getattr(f, attr) or 0.0 for f in figs]) for name, attr in quantiles])
    slos = {e.record.plan.slo.p99_ms for e in entries}
    slo = slos.pop() if len(slos) == 1 else None
    if slo:
        ax.axhline(slo, color="red", linestyle="--", linewidth=0.8, label=f"p99 SLO {slo:g} ms")
    ax.set_yscale("log")
    _run_ticks(ax, entries)
    ax.set_ylabel("delivery latency, ms")
    ax.set_title("Delivery latency percentiles per run")
    _legend(ax, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside: bars reach the top
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return _png(fig)


def pareto(entries: Sequence[RunEntry]) -> bytes | None:
    """Produce requests/s vs p99 across a sweep, the non-dominated runs joined."""
    usable = rated([e for e in entries if figures(e.record).p99_ms is not None])
    if len(usable) < 2:
        return None
    points = [(rate, figures(e.record).p99_ms or 0.0) for rate, e in usable]
    front = pareto_front(points)
    fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="tab:grey", label="runs")
    ax.plot([points[i][0] for i in front], [points[i][1] for i in front], marker="o", color="tab:red",
            label="Pareto front (fewer requests and lower p99)")  # fmt: skip
    # Every point named while they fit; past MAX_RUN_LABELS, the front's (its first ones) alone.
    named = range(len(points)) if len(points) <= MAX_RUN_LABELS else front[:MAX_RUN_LABELS]
    for i in named:
        (_, e), (x, y) = usable[i], points[i]
        ax.annotate(_short(e.label, 26), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("produce requests/s (measured window)")
    ax.set_ylabel("p99 delivery latency, ms")
    ax.set_title("Produce requests/s vs p99")
    _legend(ax, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    return _png(fig)


def before_after(pair: Comparison) -> bytes:
    """The before and after runs side by side on the figures that matter."""
    b, a = figures(pair.before.record), figures(pair.after.record)
    metrics = [
        ("produce requests/s", b.client_requests_per_s, a.client_requests_per_s),
        ("p99 ms", b.p99_ms, a.p99_ms),
        ("network idle", b.network_idle, a.network_idle),
        ("handler idle", b.handler_idle, a.handler_idle),
        ("broker CPU cores", b.broker_cpu_cores, a.broker_cpu_cores),
    ]
    names = ["before", "after"]
    stress = (pair.before.record.stress, pair.after.record.stress)
    if stress[0] is not None and stress[1] is not None and stress[0].profile_label != stress[1].profile_label:
        names = [f"{stress[0].profile_label}\n(before)", f"{stress[1].profile_label}\n(after)"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(12, 3), layout="constrained")
    for ax, (name, before, after) in zip(axes, metrics, strict=True):
        ax.bar(names, [before or 0.0, after or 0.0], color=["tab:grey", "tab:green"])
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.set_ylim(0, max(before or 0.0, after or 0.0, 1e-9) * 1.15)  # room for the value labels
        for x, v in enumerate((before, after)):
            text = "n/a" if v is None else f"{v:.3g}"
            ax.annotate(text, (x, v or 0.0), ha="center", va="bottom", fontsize=8)
    fig.suptitle(f"{_short(pair.before.label, 40)} -> {_short(pair.after.label, 40)}", fontsize=10)
    return _png(fig)
