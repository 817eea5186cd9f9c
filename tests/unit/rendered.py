"""A rich renderable as the plain text a terminal of `width` columns would show."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType


def as_text(renderable: RenderableType, width: int = 250) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()
