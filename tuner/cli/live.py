"""How `kbt sweep` and `kbt stress` show live figures every 5 s.

On a terminal one live row per run (label) is kept in place; in a log or a pipe each reading is
one plain line, like kafka-producer-perf-test's:
  live filebeat-like  t=35s  client 812.0 req/s  broker 830.4 req/s  p99 142 ms  acked 28,800  lost 0
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console, RenderableType
from rich.live import Live
from rich.table import Table

from tuner.core.errors import KbtError
from tuner.core.text import or_dash
from tuner.measure.live import LiveSample, LiveSampler
from tuner.measure.prometheus import Prometheus
from tuner.render.fit import PIPE_WIDTH, wrap_fields
from tuner.render.plain import fitted

COLUMNS = ("run", "t", "client req/s", "broker req/s", "p99 ms", "acked", "lost so far")


def cells(label: str, started: float, s: LiveSample) -> list[str]:
    return [
        label,
        f"{s.at - started:.0f}s",
        or_dash(s.client_requests_per_s, "{:,.1f}"),
        or_dash(s.broker_requests_per_s, "{:,.1f}"),
        or_dash(s.p99_ms, "{:,.0f}"),
        or_dash(s.acked, "{:,.0f}"),
        or_dash(s.lost, "{:,.0f}"),
    ]


def plain_line(label: str, started: float, s: LiveSample) -> str:
    c = cells(label, started, s)
    return (
        f"live {c[0]}  t={c[1]}  client {c[2]} req/s  broker {c[3]} req/s  p99 {c[4]} ms"
        f"  acked {c[5]}  lost {c[6]}"
    )


class LiveFigures:
    """Starts a sampler per run; renders its readings. Given `on_row`: a caller's own live display
    (a progress bar) holds the terminal, so readings go to `on_row` instead of a table of ours."""

    def __init__(
        self,
        console: Console,
        prometheus_url: str | None,
        scrape_interval_s: float = 5.0,
        target_file: Path | None = None,
    ) -> None:
        self.console = console
        self.url = prometheus_url
        self.target_file = target_file  # its Prometheus reads the target's dialect and auth
        self.scrape_interval_s = scrape_interval_s
        self.sampler: LiveSampler | None = None
        self.rows: dict[str, list[str]] = {}
        self.live: Live | None = None

    def start(
        self,
        label: str,
        on_row: Callable[[str], object] | None = None,
        fill: Callable[[LiveSample], LiveSample] | None = None,
    ) -> None:
        """Begin sampling for `label`. `on_row(text)`: where a terminal's reading goes instead;
        `fill`: completes a reading from the caller's own tally (figures Prometheus lacks)."""
        self.stop()
        if self.url is None:
            return
        started = time.time()

        def show(s: LiveSample) -> None:
            if fill is not None:
                s = fill(s)
            if not self.console.is_terminal:
                for line in wrap_fields(plain_line(label, started, s), PIPE_WIDTH):
                    self.console.print(line, highlight=False, markup=False, soft_wrap=True)
                return
            if on_row is not None:
                on_row(plain_line(label, started, s).removeprefix(f"live {label}  "))
                return
            self.rows[label] = cells(label, started, s)
            if self.live is None:
                self.live = Live(self._fitted(), console=self.console, auto_refresh=False)
                self.live.start()
            self.live.update(self._fitted(), refresh=True)

        prom = self._target_prometheus()
        self.sampler = LiveSampler(self.url, show, self.scrape_interval_s, prometheus=prom)
        self.sampler.start()

    def _fitted(self) -> RenderableType:
        return fitted(self._table(), self.console.width)

    def _target_prometheus(self) -> Prometheus | None:
        """A target file's Prometheus (dialect resolved, auth applied); None on the lab or when the
        target's Prometheus cannot be asked now (the sampler then reads what it can)."""
        if self.target_file is None:
            return None
        from tuner.runner.live_diagnosis import live_prometheus

        try:
            return live_prometheus(self.target_file)
        except KbtError:
            return None

    def _table(self) -> Table:
        table = Table(title="live (every 5 s)", title_justify="left")
        for name in COLUMNS:
            table.add_column(name, justify="left" if name == "run" else "right")
        for row in self.rows.values():
            table.add_row(*row)
        return table

    def stop(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()
            self.sampler = None

    def close(self) -> None:
        self.stop()
        if self.live is not None:
            self.live.stop()
            self.live = None
