"""What `kbt forecast` prints: today reproduced (the model against the brokers' measurement, and any
calibration), then current vs recommended settings at the peak, and brokers needed."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tuner.core.text import or_dash
from tuner.model.forecast import Forecast, ForecastRow
from tuner.model.forecast_today import PoolCheck, TodayCheck


def _idle(value: float, min_idle: float) -> Text:
    style = "red" if value < min_idle else ("yellow" if value < 0.5 else "green")
    return Text(f"{value:.3f}", style=style)


def forecast_table(f: Forecast) -> Table:
    table = Table(title=f"capacity at {f.peak:g}x today's traffic", title_justify="left")
    for col in (
        "settings",
        "brokers",
        "produce req/s",
        "busiest broker req/s",
        "MB/s in",
        "net idle today -> peak",
        "handler idle today -> peak",
        f"brokers for idle >= {f.min_idle:g}",
    ):
        table.add_column(col, justify="left" if col == "settings" else "right")
    knee = any(r.headroom_to_knee is not None for r in f.rows)
    if knee:
        table.add_column("headroom to knee (queue at peak)", justify="right")
    for r in f.rows:
        needed = _needed(r)
        net = Text(f"{r.today_network_idle:.3f} -> ").append_text(_idle(r.network_idle, f.min_idle))
        hnd = Text(f"{r.today_handler_idle:.3f} -> ").append_text(_idle(r.handler_idle, f.min_idle))
        cells: list[str | Text] = [
            r.label,
            str(r.brokers),
            f"{r.requests_per_s:,.0f}",
            f"{r.busiest_broker_requests_per_s:,.0f}",
            f"{r.bytes_per_s / 1e6:.2f}",
            net,
            hnd,
            needed,
        ]
        if knee:
            cells.append(_headroom(r.headroom_to_knee, r.request_queue))
        table.add_row(*cells)
    return table


def _needed(r: ForecastRow) -> str:
    needed = _n(r.brokers_needed)
    if r.limited_by == "replication":
        return f"{needed} (replication factor; the load alone {_n(r.brokers_needed_by_load)})"
    if r.limited_by == "placement":
        return f"{needed} (placement: more brokers do not relieve the busiest one)"
    return needed if r.limited_by == "none" else f"{needed} ({r.limited_by})"


def today_table(check: TodayCheck) -> Table:
    """Per broker: the fitted model at its own traffic today beside what the broker measured."""
    table = Table(title=f"today, {check.label}: cost model vs measured", title_justify="left")
    for col in ("broker", "produce req/s", "net idle model / measured", "handler idle model / measured"):
        table.add_column(col, justify="left" if col == "broker" else "right")
    queues = any(b.request_queue_measured is not None for b in check.brokers)
    if queues:
        table.add_column("request queue model / measured", justify="right")
    for b in check.brokers:
        cells = [
            b.broker,
            f"{b.requests_per_s:,.0f}",
            f"{b.network_idle_model:.3f} / {or_dash(b.network_idle_measured, '{:.3f}')}",
            f"{b.handler_idle_model:.3f} / {or_dash(b.handler_idle_measured, '{:.3f}')}",
        ]
        if queues:
            cells.append(
                f"{or_dash(b.request_queue_model, '{:.1f}')} / {or_dash(b.request_queue_measured, '{:.1f}')}"
            )
        table.add_row(*cells)
    return table


def pool_line(p: PoolCheck, tolerance: float) -> str:
    """How one pool's busiest broker today was reproduced, or calibrated and by what factor."""
    seen = (
        f"{p.pool} idle today on the busiest broker: model {p.model_idle:.3f}, lowest measured "
        f"{p.measured_idle:.3f} (broker {p.broker})"
    )
    if p.action == "reproduced":
        return f"{seen}: reproduced (at most {tolerance:g} below, never above)"
    if p.offset:
        return (
            f"{seen}: calibrated, the model's fixed {p.pool} busy share {p.offset:+.3f} (no factor on its "
            f"cost per request reaches the measurement), so the forecast starts from {p.forecast_idle:.3f}"
        )
    return (
        f"{seen}: calibrated, the model's {p.pool} cost per request and per byte x{p.factor:.3g}, so the "
        f"forecast starts from {p.forecast_idle:.3f}"
    )


def today_text(f: Forecast) -> Text:
    text = Text()
    for check in f.today:
        text.append(f"{check.label}:\n", style="bold")
        for p in check.pools:
            style = "yellow" if p.action == "calibrated" else ""
            text.append(f"  {pool_line(p, check.tolerance)}\n", style=style)
        for note in check.notes:
            text.append(f"  note: {note}\n", style="yellow")
    for r in f.rows:
        if r.calibration.from_label:
            c = r.calibration
            offsets = "".join(
                f", {pool} busy {off:+.3f}"
                for pool, off in (("network", c.network_offset), ("handler", c.handler_offset))
                if off
            )
            text.append(
                f"{r.label}: not measured; calibrated as {c.from_label} (network x{c.network_factor:.3g}, "
                f"handler x{c.handler_factor:.3g}{offsets})\n",
                style="dim",
            )
    for w in f.warnings:
        text.append(f"warning: {w}\n", style="bold yellow")
    return text


def _headroom(headroom: float | None, queue: float | None) -> Text:
    if headroom is None:
        return Text("-")
    style = "red" if headroom < 1 else ("yellow" if headroom < 1.5 else "green")
    return Text(f"{headroom:.2f}x" + (f" ({queue:.1f})" if queue is not None else ""), style=style)


def summary_text(f: Forecast) -> Text:
    text = Text()
    cur, rec = f.row("current"), f.row("recommended")
    if cur is not None and rec is not None and rec.requests_per_s > 0:
        text.append(
            f"at {f.peak:g}x: {cur.requests_per_s / rec.requests_per_s:.1f}x fewer produce requests with the "
            f"recommended settings; brokers needed {_n(cur.brokers_needed)} (current) vs "
            f"{_n(rec.brokers_needed)} (recommended)\n",
            style="bold",
        )
    text.append(
        f"cost model: R^2 network {f.network_r2:.2f}, handler {f.handler_r2:.2f} over {f.n} broker windows\n",
        style="dim",
    )
    for a in f.assumptions:
        text.append(f"assumes {a}\n", style="dim")
    return text


def _n(value: int | None) -> str:
    return "unreachable" if value is None else str(value)


def forecast_view(f: Forecast) -> RenderableType:
    return Group(*(today_table(c) for c in f.today), today_text(f), forecast_table(f), summary_text(f))
