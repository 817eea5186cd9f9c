"""Tables on a terminal keep their box; piped or logged, they print as plain aligned columns."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table


def _unbox(renderable: RenderableType) -> None:
    if isinstance(renderable, Table):
        renderable.box = None
        renderable.show_edge = False
        renderable.pad_edge = False
    elif isinstance(renderable, Group):
        for part in renderable.renderables:
            _unbox(part)


def show(console: Console, renderable: RenderableType) -> None:
    """Print a renderable; tables printed where there is no terminal lose their box characters."""
    if not console.is_terminal:
        _unbox(renderable)
    console.print(renderable)
