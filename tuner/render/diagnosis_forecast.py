"""What `kbt forecast` prints: current vs recommended settings at the peak, and brokers needed."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tuner.model.forecast import Forecast


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
        needed = "unreachable" if r.brokers_needed is None else str(r.brokers_needed)
        if r.limited_by != "none":
            needed += f" ({r.limited_by})"
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
    return Group(forecast_table(f), summary_text(f))
