"""What kbt prints fits 80, 100 and 200 columns, in a pipe and on a terminal of that width, without
a word or a number cut: a sweep's dry run (committed specs) and the sweep table of committed run
records (tests/unit/data/demo-loaded), through the one printer every table goes through
(tuner/render/plain.py `show`)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from tests.unit.test_diagnosis import T, _broker, _snap
from tuner.core.paths import repo_root
from tuner.model.diagnosis import Diagnosis
from tuner.render.dry_run import sweep_dry_run
from tuner.render.plain import show
from tuner.render.sweep_table import sweep_table
from tuner.spec.loader import load_sweep
from tuner.store.results import ResultsStore

WIDTHS = (80, 100, 200)
SPECS = ("loadtests/qunar-logs.yaml", "loadtests/filebeat-real-p1.yaml", "loadtests/chaos.yaml")
RECORDS = Path(__file__).parent / "data" / "demo-loaded"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("spec", SPECS)
def test_a_dry_run_fits_and_keeps_each_setting_and_topic_whole(spec: str, width: int) -> None:
    loaded = load_sweep(repo_root() / spec)
    rows, lines = sweep_dry_run(loaded, "kbt-", width)
    assert max(len(line) for line in lines) <= width, max(lines, key=len)
    text = "\n".join(lines)
    for row in rows:
        for key, value in row["client_config"].items():
            assert f"{key}={value}" in text  # never cut across two lines
        for topic in row["topics"]:
            assert f"{topic['name']} ({topic['partitions']} partitions)" in text
    if width >= 200:  # room enough: a run is three lines (head, settings, topics)
        assert len(lines) <= 3 * len(rows) + sum(len(str(r["client_config"])) > 190 for r in rows)


def _printed(width: int, terminal: bool) -> list[str]:
    records = ResultsStore(RECORDS).records()
    assert records
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system=None, legacy_windows=False)
    show(console, sweep_table(records, title="sweep qunar-logs-short"))
    return out.getvalue().splitlines()


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_sweep_table_fits_without_cutting_a_number(width: int, terminal: bool) -> None:
    lines = _printed(width, terminal)
    assert lines and max(len(line) for line in lines) <= width, max(lines, key=len)
    wide = "\n".join(_printed(400, False))  # every figure as one token where nothing is tight
    numbers = set(re.findall(r"(?<![\w.])\d[\d,]*\.?\d*(?![\w.])", wide))
    text = "\n".join(lines)
    for number in numbers:
        assert number in text, number  # a figure is never split over two lines


def _diagnosis() -> Diagnosis:
    """A Qunar-like critical broker beside a healthy one (the classification's own test inputs)."""
    from tuner.model.diagnosis import diagnose

    busy = _broker("1", produce_requests_per_s=9000.0, bytes_in_per_s=9000 * 1600.0, network_idle_ratio=0.25,
                   request_handler_idle_ratio=0.4, request_queue_size=40)  # fmt: skip
    return diagnose(_snap(busy, _broker("2", network_idle_ratio=0.6)), T)


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_diagnosis_fits_without_cutting_a_word_or_number(width: int, terminal: bool) -> None:
    from tuner.render.diagnosis import diagnosis_view

    def printed(w: int, term: bool) -> str:
        out = io.StringIO()
        show(Console(file=out, width=w, force_terminal=term, color_system=None), diagnosis_view(_diagnosis()))
        return out.getvalue()

    text = printed(width, terminal)
    assert max(len(line) for line in text.splitlines()) <= width
    for token in set(printed(400, False).split()):
        assert token in text.split(), token  # wrapped between words only
