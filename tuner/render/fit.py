"""Tables that fit where they are printed.

- On a terminal: the table keeps its box and fits the terminal's width. Numbers and short words
  never wrap, and a text column never narrows below its longest word; a column of ids (run ids,
  run names: one long word per line) that would push the table past the width gets its long ids
  shortened in the middle with a mark, `qunar-logs…735.623Z [1]`, and every shortened id is listed
  in full below the table.
- In a pipe or a log: plain lines, no box, at most `PIPE_WIDTH` columns, never a word cut in two.
  A table too wide for one line per row puts its first column (the run) on a line of its own and
  the other columns, in groups that fit, indented below it; a cell wider than a whole line (a long
  setting) wraps between its words on lines of its own.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from rich.errors import MarkupError
from rich.table import Table
from rich.text import Text

PIPE_WIDTH = 100  # a pipe or a log is read at 100 columns (an editor's, a CI log's width)
GAP = 2  # spaces between plain columns
INDENT = "  "
MIN_ID_WIDTH = 16  # an id column is never shortened below this
MIN_BOXED_ID = 28  # narrower than this, the table drops its box to give the ids room
LONG_WORD = 20  # a cell line with no space and at least this long is an id


def plain_text(cell: object) -> str:
    """The text a cell shows, without its markup."""
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        try:
            return Text.from_markup(cell).plain
        except MarkupError:
            return cell
    return "" if cell is None else str(cell)


def wrap(text: str, width: int = PIPE_WIDTH, indent: str = "") -> list[str]:
    """Lines of at most `width` columns broken between words only (a word longer than the width
    stays whole on a line of its own)."""
    out: list[str] = []
    for para in text.splitlines() or [""]:
        out += textwrap.wrap(
            para,
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [""]
    return out


def wrap_list(head: str, items: list[str], width: int = PIPE_WIDTH, indent: str = "    ") -> list[str]:
    """`head` then `items` joined by ", ", broken only after a comma: an item (a setting, a topic)
    is never cut, and continuation lines start at `indent`. An item longer than a line stands whole
    on a line of its own."""
    lines: list[str] = []
    line, fresh = head, True  # fresh: nothing after the head or the indent yet
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        sep = "" if fresh and (not line or line.endswith(" ")) else " "
        if not fresh and len(line) + len(sep) + len(piece) > width:
            lines.append(line)
            line, sep = indent, ""
        line, fresh = f"{line}{sep}{piece}", False
    lines.append(line)
    return lines


def wrap_fields(text: str, width: int = PIPE_WIDTH, indent: str = "    ") -> list[str]:
    """A line of figures, fields two spaces apart (`acked 23,264  lost 0`), broken between fields
    only: a figure never leaves its name. Continuation lines start at `indent`."""
    lines: list[str] = []
    line = ""
    for field in filter(None, (f.strip() for f in text.split("  "))):
        if line and len(line) + 2 + len(field) > width:
            lines.append(line)
            line = indent + field
        else:
            line = f"{line}  {field}" if line else field
    lines.append(line)
    return lines


@dataclass(frozen=True)
class _Grid:
    headers: list[str]
    cells: list[list[str]]  # [row][column]
    right: list[bool]

    @property
    def widths(self) -> list[int]:
        return [
            max([len(h)] + [len(line) for row in self.cells for line in row[i].split("\n")])
            for i, h in enumerate(self.headers)
        ]


def _grid(table: Table) -> _Grid:
    columns = table.columns
    rows = max((len(c._cells) for c in columns), default=0)
    cells = [[plain_text(c._cells[r]) if r < len(c._cells) else "" for c in columns] for r in range(rows)]
    return _Grid([plain_text(c.header) for c in columns], cells, [c.justify == "right" for c in columns])


def _groups(widths: list[int], width: int) -> list[list[int]]:
    """Column indexes, the first alone when the row does not fit one line, the rest in runs that
    fit `width` after the indent."""
    if sum(widths) + GAP * (len(widths) - 1) <= width:
        return [list(range(len(widths)))]
    groups: list[list[int]] = [[0]]
    current: list[int] = []
    used = len(INDENT) - GAP  # as if a gap came before each column, the first one too
    for i in range(1, len(widths)):
        if current and used + GAP + widths[i] > width:
            groups.append(current)
            current, used = [], len(INDENT) - GAP
        current.append(i)
        used += GAP + widths[i]
    if current:
        groups.append(current)
    return groups


def _rewrapped(grid: _Grid, groups: list[list[int]], width: int) -> _Grid:
    """A column alone on its line and still wider than it (a long setting) wrapped between words."""
    cells, headers = [list(row) for row in grid.cells], list(grid.headers)
    widths = grid.widths
    for g, columns in enumerate(groups):
        room = width - (len(INDENT) if g > 0 else 0)
        if len(columns) == 1 and widths[columns[0]] > room:
            c = columns[0]
            headers[c] = "\n".join(wrap(headers[c], room))
            for row in cells:
                row[c] = "\n".join(line for part in row[c].split("\n") for line in wrap(part, room))
    return _Grid(headers, cells, grid.right)


def _line(grid: _Grid, widths: list[int], columns: list[int], values: list[str], indent: str) -> str:
    parts = [values[i].rjust(widths[i]) if grid.right[i] else values[i].ljust(widths[i]) for i in columns]
    return (indent + (" " * GAP).join(parts)).rstrip()


def plain_lines(table: Table, width: int = PIPE_WIDTH) -> list[str]:
    """The table as plain lines for a pipe or a log (see the module doc)."""
    grid = _grid(table)
    if not grid.headers:
        return []
    groups = _groups(grid.widths, width)
    stacked = len(groups) > 1
    if stacked:
        grid = _rewrapped(grid, groups, width)
    widths = grid.widths

    def block(values: list[str]) -> list[str]:
        split = [v.split("\n") for v in values]
        height = max(len(s) for s in split)
        out = []
        for g, columns in enumerate(groups):
            indent = INDENT if stacked and g > 0 else ""
            for k in range(height):
                sub = [s[k] if k < len(s) else "" for s in split]
                if any(sub[i] for i in columns) or k == 0:
                    out.append(_line(grid, widths, columns, sub, indent))
        return out

    out: list[str] = []
    if table.title:
        out += wrap(plain_text(table.title), width)
    out += block(grid.headers)
    for row in grid.cells:
        out += block(row)
    if table.caption:
        out += wrap(plain_text(table.caption), width, INDENT)
    return out


def _overhead(table: Table) -> int:
    """Columns a table spends on borders and padding."""
    n = len(table.columns)
    _, right, _, left = table.padding
    bars = (n - 1) + (2 if table.show_edge else 0) if table.box is not None else 0
    pad = n * (left + right) - (0 if table.pad_edge else left + right)
    return bars + pad


def _is_id_column(lines: list[str]) -> bool:
    return any(len(line) >= LONG_WORD and " " not in line for line in lines)


def _shorten(word: str, width: int) -> str:
    keep = max(4, width - 1)
    head = (keep + 1) // 2
    return word[:head] + "…" + word[len(word) - (keep - head) :]


def label(name: str, width: int = 32) -> str:
    """A run name for a progress line: whole when short, else cut in the middle (never wrapped)."""
    return name if len(name) <= width else _shorten(name, width)


def bar_width(console_width: int) -> int:
    """A progress bar that leaves a narrow terminal room for the run and its live figures."""
    return 40 if console_width >= 140 else 16


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _narrowed(widths: list[int], least: list[int], room: int) -> list[int]:
    """Text columns narrowed, the widest first, into `room` and never below their longest word: rich
    narrows the widest ones alone and would fold a word (a setting's name) in two."""
    out = list(widths)
    while sum(out) > room:
        narrowable = [i for i in range(len(out)) if out[i] > least[i]]
        if not narrowable:
            break
        out[max(narrowable, key=lambda i: out[i])] -= 1
    return out


def _id_budget(room: int, id_widths: list[int], text_wants: int) -> int:
    """Each id column's width out of `room` (what is left once every other column has its least):
    ids keep MIN_BOXED_ID, the text columns take what they want of the rest, the ids what is left
    (a setting wrapped over many lines reads worse than an id shortened with its footnote)."""
    if not id_widths:
        return 0
    extra = room - sum(min(w, MIN_BOXED_ID) for w in id_widths)
    text = min(text_wants, extra) if extra > 0 else 0
    return max(MIN_ID_WIDTH, (room - text) // len(id_widths))


def fit_table(table: Table, width: int) -> list[str] | None:
    """Fit a table to a terminal `width` in place; returns the footnote lines (full ids), or None
    when even a borderless table with shortened ids is wider: then print `plain_lines` instead."""
    grid = _grid(table)
    if not grid.headers:
        return []
    widths = grid.widths
    lines = [[line for row in grid.cells for line in row[i].split("\n")] for i in range(len(widths))]
    if sum(widths) + _overhead(table) <= width:
        return []
    ids = [i for i in range(len(widths)) if _is_id_column(lines[i])]
    # Each other column at the least its header may wrap to (between words) and its cells keep:
    # numbers and single words whole, text at its longest word.
    least = [
        max(_longest_word(grid.headers[i]), *(len(x) if " " not in x else _longest_word(x) for x in lines[i]))
        for i in range(len(widths))
    ]
    fixed = sum(least[i] for i in range(len(widths)) if i not in ids)
    if width - _overhead(table) - fixed < MIN_BOXED_ID * len(ids) or fixed + _overhead(table) > width:
        # Too narrow for the box: a borderless table, one space between columns.
        table.box, table.show_edge, table.pad_edge, table.padding = None, False, False, (0, 1, 0, 0)
    room = width - _overhead(table) - fixed
    if room < MIN_ID_WIDTH * len(ids) or fixed + _overhead(table) > width:
        return None
    rigid = [i for i in range(len(widths)) if i not in ids and all(" " not in x for x in lines[i])]
    for i in rigid:
        table.columns[i].width = least[i]  # rigid: numbers and single words never break
    flexible = [i for i in range(len(widths)) if i not in ids and i not in rigid]
    budget = _id_budget(room, [widths[i] for i in ids], sum(widths[i] - least[i] for i in flexible))
    spare = room + sum(least[i] for i in flexible) - sum(min(budget, widths[i]) for i in ids)
    for i, w in zip(
        flexible, _narrowed([widths[i] for i in flexible], [least[i] for i in flexible], spare), strict=True
    ):
        table.columns[i].width = w
    if not ids:
        return []
    marks: dict[str, int] = {}
    for i in ids:
        column = table.columns[i]
        column.no_wrap, column.overflow, column.width = True, "ellipsis", min(budget, widths[i])
        for r, cell in enumerate(column._cells):
            text = plain_text(cell)
            if all(len(line) <= budget for line in text.split("\n")):
                continue
            shown = []
            # a phrase beside the ids wraps between its words (the column no longer wraps: it would
            # be cut off with an ellipsis), and a word of it longer than the column is an id too
            pieces = [
                p
                for line in text.split("\n")
                for p in (wrap(line, budget) if " " in line and len(line) > budget else [line])
            ]
            for line in pieces:
                if len(line) <= budget or " " in line:
                    shown.append(line)
                    continue
                n = marks.setdefault(line, len(marks) + 1)
                mark = f" [{n}]"
                shown.append(_shorten(line, budget - len(mark)) + mark)
            style = cell.style if isinstance(cell, Text) else ""
            column._cells[r] = Text("\n".join(shown), style=style)
    return [f"[{n}] {word}" for word, n in marks.items()]
