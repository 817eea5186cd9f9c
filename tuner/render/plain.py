"""Tables on a terminal keep their box and fit its width; piped or logged, they print as plain
lines of at most 120 columns (tuner/render/fit.py)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table

from tuner.render.fit import PIPE_WIDTH, fit_table, plain_lines


def _parts(renderable: RenderableType) -> list[RenderableType]:
    if isinstance(renderable, Group):
        return [p for part in renderable.renderables for p in _parts(part)]
    return [renderable]


def fitted(renderable: RenderableType, width: int) -> RenderableType:
    """A renderable for a terminal `width`: its tables fitted, each followed by the full ids it
    shortened (for a live display that redraws the whole)."""
    out: list[RenderableType] = []
    for part in _parts(renderable):
        out.append(part)
        if isinstance(part, Table):
            notes = fit_table(part, width)
            if notes is None:
                out[-1] = "\n".join(plain_lines(part, width))
            elif notes:
                out.append("\n".join(notes))
    return out[0] if len(out) == 1 else Group(*out)


def show(console: Console, renderable: RenderableType) -> None:
    """Print a renderable: fitted to a terminal (plain lines when even that is too narrow), or
    tables as plain lines where there is none."""
    for part in _parts(renderable):
        if not isinstance(part, Table):
            console.print(part)
        else:
            notes = fit_table(part, console.width) if console.is_terminal else None
            if notes is not None:
                console.print(part)
            lines = notes if notes is not None else plain_lines(part, min(console.width, PIPE_WIDTH))
            for line in lines:
                console.print(line, markup=False, highlight=False, soft_wrap=True)
