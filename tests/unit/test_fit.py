"""Tables that fit: plain lines in a pipe (at most 120 columns, never a word cut in two) and boxed
tables on a terminal of any width (ids shortened with a mark, listed in full below)."""

from __future__ import annotations

import io
import string

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from tests.unit.synthetic_records import qunar_plans, record_with_brokers
from tuner.render.fit import LONG_WORD, PIPE_WIDTH, plain_lines, wrap, wrap_fields
from tuner.render.plain import show
from tuner.render.sweep_table import sweep_table
from tuner.store.figures import BrokerStats

BOX = "┏┃│└━─┡╇"
_ID = st.text(string.ascii_lowercase + string.digits + "-/._", min_size=1, max_size=90)
_NUM = st.floats(0, 1e7, allow_nan=False).map(lambda v: f"{v:,.1f}")
_HEADER = st.sampled_from(["run", "status", "req/s client", "p99 ms", "net idle", "handler idle", "lost/dup"])


@st.composite
def _tables(draw: st.DrawFn) -> tuple[Table, list[str]]:
    headers = draw(st.lists(_HEADER, min_size=1, max_size=12))
    ids = draw(st.lists(_ID, min_size=1, max_size=6))
    table = Table(title=draw(st.sampled_from(["", "sweep qunar-logs-short"])) or None)
    for h in headers:
        table.add_column(h, justify="right" if h != "run" else "left")
    for name in ids:
        table.add_row(name, *(draw(_NUM) for _ in headers[1:]))
    return table, ids


def _console(width: int, terminal: bool) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=terminal, color_system=None)


@settings(max_examples=60, deadline=None)
@given(_tables())
def test_plain_lines_fit_and_keep_ids_whole(made: tuple[Table, list[str]]) -> None:
    table, ids = made
    lines = plain_lines(table)
    assert all(len(line) <= PIPE_WIDTH for line in lines), lines
    assert not any(c in "".join(lines) for c in BOX)
    for name in ids:
        assert any(name in line.split() for line in lines), (name, lines)


@settings(max_examples=60, deadline=None)
@given(_tables(), st.integers(60, 220))
def test_a_terminal_table_fits_its_width(made: tuple[Table, list[str]], width: int) -> None:
    table, ids = made
    console = _console(width, terminal=True)
    show(console, table)
    out = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    # Only an id alone on its line (a terminal too narrow for it) may be wider.
    assert all(len(line) <= width or " " not in line.strip() for line in out), "\n".join(out)
    for name in ids:  # whole in the table, or whole in the list below it
        assert any(name in line for line in out) or any(line.endswith(f"] {name}") for line in out), out


_FIELD = st.tuples(st.sampled_from(["t=", "client", "p99", "acked", "lost"]), _NUM).map(" ".join)


@given(st.lists(_FIELD, min_size=1, max_size=12), st.integers(20, 120))
def test_a_line_of_figures_breaks_between_fields_only(fields: list[str], width: int) -> None:
    """A live reading in a log: a figure never leaves its name (`lost` / `0` on two lines)."""
    lines = wrap_fields("live run-1  " + "  ".join(fields), width)
    assert [f for line in lines for f in line.strip().split("  ")] == ["live run-1", *fields]
    assert all(len(line) <= width or "  " not in line.strip() for line in lines)
    assert all(line.startswith("    ") for line in lines[1:])


@given(st.text(string.ascii_letters + " -/", max_size=400), st.integers(20, 120))
def test_wrap_breaks_between_words_only(text: str, width: int) -> None:
    lines = wrap(text, width, "  ")
    assert [w for line in lines for w in line.split()] == text.split()
    assert all(len(line) <= width or " " not in line.strip() for line in lines)


def test_the_sweep_table_in_a_log() -> None:
    plans = qunar_plans()
    broker = [BrokerStats(broker="1", produce_requests_per_s=800.0, messages_in_per_s=9000.0)]
    records = [record_with_brokers(broker, 1_790_000_000.0 + i, plan) for i, plan in enumerate(plans)]
    console = _console(PIPE_WIDTH, terminal=False)
    show(console, sweep_table(records, title="sweep qunar-logs"))
    out = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert all(len(line) <= PIPE_WIDTH for line in out)
    for plan in plans:
        assert plan.name in [line.strip() for line in out]  # on a line of its own, whole


# up to LONG_WORD: a cell of one word that long makes its column one of ids, whose phrases wrap
# and whose long words are shortened with the full word listed below the table
_WORD = st.text(string.ascii_lowercase + "_.=", min_size=1, max_size=LONG_WORD)
_PHRASE = st.lists(_WORD, min_size=1, max_size=12).map(" ".join)  # a setting, a note


@st.composite
def _text_tables(draw: st.DrawFn) -> tuple[Table, list[str]]:
    """Run ids beside columns of phrases (settings such as `filebeat bulk_flush_frequency 800ms`)."""
    table = Table(title="recommend")
    columns = draw(st.integers(1, 5))
    for h in ["run", *(f"text {i}" for i in range(columns))]:
        table.add_column(h)
    cells: list[str] = []
    for name in draw(st.lists(_ID, min_size=1, max_size=4)):
        row = [draw(_PHRASE) for _ in range(columns)]
        cells += row
        table.add_row(name, *row)
    return table, [w for cell in cells for w in cell.split()]


@settings(max_examples=25, deadline=None)
@given(_text_tables(), st.integers(60, 220), st.booleans())
def test_a_word_of_a_text_column_is_never_folded(
    made: tuple[Table, list[str]], width: int, terminal: bool
) -> None:
    """Rich narrows a table's widest columns and folds what no longer fits, a setting's name in two;
    fitted, a text column keeps its longest word, and a plain cell wider than its line wraps between
    words."""
    table, words = made
    console = _console(width, terminal)
    show(console, table)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    tokens = set(out.translate({ord(c): " " for c in BOX + "┓┳┛┩┗┴┘┐┌┬├┼┤"}).split())
    for word in words:
        assert word in tokens, (word, out)
    assert all(len(line) <= width for line in out.splitlines() if " " in line.strip()), out
