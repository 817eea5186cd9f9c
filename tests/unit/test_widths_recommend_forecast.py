"""What `kbt recommend` and `kbt forecast` print fits 80, 100 and 200 columns, in a pipe and on a
terminal of that width, without a word, a number or a setting cut across lines (issue 42 item 3;
sweep and diagnose: tests/unit/test_widths.py). Both go through the one printer, tuner/render/plain.py
`show`, as the commands do.

The recommendations are committed under tests/unit/data/recommend/ (the model's search takes a
minute, too slow to redo here): demo-loaded.json, what `kbt recommend tests/unit/data/demo-loaded`
wrote (three client kinds, baselines, long Filebeat setting, durability notes), and at-the-edge.json,
test_recommend_margin.py's confirmed setting at the edge with its safer row. The forecasts
are of the committed run records (fitted cost model) and of the committed saturated diagnosis.
`kbt report` prints no table on a terminal (its one line says where the page went; tables are in the
HTML), so it has nothing here."""

from __future__ import annotations

import functools
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from tuner.model.cost import BrokerCostModel, fit_cost_model
from tuner.model.diagnosis import Diagnosis
from tuner.model.forecast import Forecast, forecast
from tuner.model.forecast_baseline import diagnosis_baselines, records_baselines
from tuner.render.diagnosis_forecast import forecast_view
from tuner.render.plain import show
from tuner.render.recommendation import recommendation_view
from tuner.store.recommendation import Recommendation, load_recommendation
from tuner.store.results import ResultsStore

WIDTHS = (80, 100, 200)
DATA = Path(__file__).parent / "data"
TERMINAL = pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
# A figure as printed (1,160  0.952  26.7  x3.14); a word is anything between spaces (a setting
# `key=value`, a run id, `bulk_flush_frequency`). A box's lines are not words.
NUMBER = re.compile(r"(?<![\d.,])\d+(?:,\d{3})*(?:\.\d+)?")
BOX = re.compile("[\u2500-\u257f]")


def _printed(renderable: RenderableType, width: int, terminal: bool) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system=None, legacy_windows=False)
    show(console, renderable)
    return out.getvalue().splitlines()


def _assert_fits_whole(view: Callable[[], RenderableType], width: int, terminal: bool) -> None:
    """Every line within `width`; every word and figure of the unconstrained print whole in it."""
    lines = _printed(view(), width, terminal)
    assert lines and max(len(line) for line in lines) <= width, max(lines, key=len)
    words = set(BOX.sub(" ", " ".join(lines)).split())
    wide = " ".join(_printed(view(), 1000, False))  # nothing tight: each word as one token
    for word in set(wide.split()):
        assert word in words, word  # wrapped between words only, never inside one
    numbers = set(NUMBER.findall(" ".join(lines)))
    for number in NUMBER.findall(wide):
        assert number in numbers, number


@functools.cache
def _recommendation(name: str = "demo-loaded") -> Recommendation:
    return load_recommendation(DATA / "recommend" / f"{name}.json")


@TERMINAL
@pytest.mark.parametrize("width", WIDTHS)
def test_the_recommendation_at_the_edge_fits_with_its_safer_row(width: int, terminal: bool) -> None:
    rec = _recommendation("at-the-edge")
    _assert_fits_whole(functools.partial(recommendation_view, rec), width, terminal)
    text = "\n".join(_printed(recommendation_view(rec), width, terminal))
    assert "safer" in text.split() and "edge" in text.split()


@TERMINAL
@pytest.mark.parametrize("width", WIDTHS)
def test_the_recommendation_fits_without_cutting_a_setting_or_number(width: int, terminal: bool) -> None:
    rec = _recommendation()
    _assert_fits_whole(functools.partial(recommendation_view, rec), width, terminal)
    text = "\n".join(_printed(recommendation_view(rec), width, terminal))
    # the durability settings a properties file states, each `key=value` on one line
    for setting in ("acks=1", "enable.idempotence=false", "max.in.flight.requests.per.connection=1000000"):
        assert setting in text
    # a setting's name (the longest word of the setting column) is never folded in a box
    assert "bulk_flush_frequency" in text


def test_a_long_setting_takes_lines_of_its_own_in_a_narrow_pipe() -> None:
    """Filebeat's setting (88 columns) is wider than an 80-column pipe: it wraps between its words
    on lines of its own, indented under the client, instead of running past the edge."""
    lines = _printed(recommendation_view(_recommendation()), 80, False)
    start = next(i for i, line in enumerate(lines) if line.startswith("  filebeat bulk_flush_frequency"))
    assert lines[start + 1].startswith("  ") and "gzip" in lines[start + 1]
    assert all(len(line) <= 80 for line in lines[start : start + 2])


def test_at_200_columns_a_setting_gets_the_room_before_a_long_run_id() -> None:
    """On a wide terminal the settings column takes the room first (each setting on at most three
    lines); a run id then shortened in the middle is listed whole below the table."""
    rec = _recommendation()
    lines = _printed(recommendation_view(rec), 200, True)
    body = [line for line in lines if line.startswith("│")]
    cells = [line.split("│")[2].strip() for line in body]  # the setting column
    starts = [i for i, line in enumerate(body) if line.split("│")[1].strip()]  # a row's first line
    heights = [b - a for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]
    assert max(heights) <= 3, "\n".join(lines)
    assert any("bulk_max_size 2048" in cell for cell in cells)
    footnotes = {line.split(" ", 1)[1] for line in lines if re.match(r"\[\d+\] ", line)}
    wide = " ".join(_printed(recommendation_view(rec), 1000, False)).split()
    runs = {word for word in wide if re.fullmatch(r"[\w.-]+/[\w.-]+--\d{8}T[\d.]+Z", word)}
    assert runs and footnotes <= runs
    for run in runs:  # every run id whole: in its cell or in a footnote
        assert run in footnotes or any(run in line for line in body), run


@functools.cache
def _forecast_of_records() -> Forecast:
    records = ResultsStore(DATA / "demo-loaded").records()
    baselines = records_baselines(records, None, None, None)
    return forecast(fit_cost_model(records), baselines, 3.0, 0.3, require_measured=True)


@functools.cache
def _forecast_of_diagnosis() -> Forecast:
    """docs/benchmarks.md's saturated cluster with a good cost model: calibrated, replication-bound."""
    diagnosis = Diagnosis.model_validate(
        json.loads((DATA / "forecast" / "saturated-diagnosis.json").read_text())
    )
    model = BrokerCostModel.model_validate_json((DATA / "forecast" / "cost-model-good-fit.json").read_text())
    return forecast(model, diagnosis_baselines(diagnosis), 3.0, require_measured=True)


@TERMINAL
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("source", ["records", "diagnosis"])
def test_the_forecast_fits_without_cutting_a_word_or_number(source: str, width: int, terminal: bool) -> None:
    f = _forecast_of_records() if source == "records" else _forecast_of_diagnosis()
    _assert_fits_whole(functools.partial(forecast_view, f), width, terminal)
    text = "\n".join(_printed(forecast_view(f), width, terminal))
    for row in f.rows:  # each setting's figures whole: its requests at the peak, brokers needed
        assert f"{row.requests_per_s:,.0f}" in text.split() and str(row.brokers_needed) in text.split()
