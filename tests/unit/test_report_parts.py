"""Report inputs: time-series files beside records (never mistaken for records), how RESULTS is
read, Pareto fronts, before/after pairs, and the page itself from stored records."""

from __future__ import annotations

import json
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_results_store import _plans, _record
from tuner.core.errors import BadInput
from tuner.measure.prometheus import RangeSeries
from tuner.render.report import build_report
from tuner.render.report_data import comparisons, load_report_input, pareto_front
from tuner.store import ResultsStore
from tuner.store.run_series import RunSeries, load_run_series, series_path, write_run_series


def _sweep(tmp_path: Path) -> list[Path]:
    """The three qunar-logs runs, 100 s apart, the last one batching hardest."""
    store = ResultsStore(tmp_path)
    paths = []
    for i, plan in enumerate(_plans()):
        record = _record(plan, 1_700_000_000.0 + 100 * i)
        requests = 24000 // (1 + 4 * i)
        record = record.model_copy(
            update={"client": record.client.model_copy(update={"produce_requests": requests})}
        )
        paths.append(store.write(record))
    return paths


def _series(run_id: str, start: float) -> RunSeries:
    points = [(start + t, 100.0 + t) for t in range(0, 60, 5)]
    ranges = {
        "PRODUCE_REQUESTS_RATE": [RangeSeries({"broker": "1"}, points), RangeSeries({"broker": "2"}, points)],
        "NETWORK_IDLE": [
            RangeSeries({"broker": "1"}, [(t, 0.9) for t, _ in points] + [(start + 61, float("nan"))])
        ],
    }
    return RunSeries.from_ranges(run_id, start, start + 60, 5.0, time.time(), {"X": "up"}, ranges)


def test_series_files_sit_beside_records_but_are_not_records(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    store = ResultsStore(tmp_path)
    record = store.load(paths[0])
    written = write_run_series(paths[0], _series(record.run_id, record.client.started_at))
    assert written == series_path(paths[0]) == paths[0].parent / "series" / paths[0].name
    assert store.paths() == sorted(paths) and store.paths("qunar-logs") == sorted(paths)
    assert store.sweeps() == ["qunar-logs"]
    loaded = load_run_series(paths[0])
    assert loaded is not None and loaded.run_id == record.run_id
    assert {line.labels["broker"] for line in loaded.of("PRODUCE_REQUESTS_RATE")} == {"1", "2"}
    assert all(v == v for line in loaded.lines for _, v in line.points)  # NaN dropped
    assert load_run_series(paths[1]) is None


@pytest.mark.parametrize(
    ("entry", "what"),
    [
        ("fifo", "is a FIFO, not a run series"),
        ("directory", "is a directory, not a run series"),
        ("loop", "cannot read: Too many levels of symbolic links"),
        ("user-file", "not valid JSON"),
    ],
)
def test_what_sits_where_a_series_goes_is_named_and_never_written_through(
    tmp_path: Path, entry: str, what: str
) -> None:
    """A FIFO, a directory or a link loop where a run's series goes was passed over as "no time
    series saved"; a link to a user's file was written through by `report --prometheus` filling the
    series in (the file lost). Each is named in one line and left as it is."""
    import os

    paths = _sweep(tmp_path)
    where = series_path(paths[0])
    where.parent.mkdir()
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    if entry == "fifo":
        os.mkfifo(where)
    elif entry == "directory":
        where.mkdir()
    else:
        where.symlink_to(where.name if entry == "loop" else mine)
    with pytest.raises(BadInput, match=what):
        load_run_series(paths[0])
    with pytest.raises(BadInput, match=what):
        write_run_series(paths[0], _series("qunar-logs/x", 0.0))
    assert mine.read_text() == "mine" and os.path.lexists(where)
    report = load_report_input(tmp_path)
    assert [p for p in report.problems if what in p and "no time series for" in p]


def test_series_of_another_version_is_one_line(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    write_run_series(paths[0], _series("x", 0.0))
    data = json.loads(series_path(paths[0]).read_text())
    data["schema_version"] = 99
    series_path(paths[0]).write_text(json.dumps(data))
    with pytest.raises(BadInput, match="run series schema_version 99, this kbt reads 1"):
        load_run_series(paths[0])
    report = load_report_input(tmp_path)  # the report leaves it out with a note instead
    assert any("no time series" in p for p in report.problems)


def test_results_dir_or_one_sweep_dir(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    (tmp_path / "qunar-logs" / "broken.json").write_text("{not json")
    whole = load_report_input(tmp_path)
    one = load_report_input(tmp_path / "qunar-logs")
    assert [e.path for e in whole.runs] == [e.path for e in one.runs] == paths  # in run order
    assert any(p.startswith("left out broken.json") for p in whole.problems)
    assert whole.recommendation is None
    with pytest.raises(BadInput, match="no such results directory"):
        load_report_input(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="no run records"):
        load_report_input(tmp_path / "empty")


def test_only_the_newest_sweeps_are_charted_the_rest_are_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each sweep's charts take about a second: 5,000 records in 1,667 sweeps took half an hour
    from tuner.render import report_plots

    monkeypatch.setattr(report_plots, "MAX_CHARTED_GROUPS", 2)
    store = ResultsStore(tmp_path)
    for i in range(4):
        for plan in _plans()[:2]:
            record = _record(plan, 1_700_000_000.0 + 1000 * i + plan.index)
            store.write(record.model_copy(update={"sweep": f"s{i}", "run_id": f"s{i}/{plan.name}"}))
    built = build_report(load_report_input(tmp_path))
    charted = {name.split("-")[1] for name in built.pngs if "before-after" not in name}  # 01-s3-latency.png
    assert charted == {"s3", "s2"} and built.html.count("this one is in its tables only") == 2
    assert built.html.count('<a id="run-') >= 8  # every run in a table


def test_pareto_front() -> None:
    points = [(100.0, 50.0), (10.0, 400.0), (50.0, 60.0), (60.0, 70.0), (10.0, 500.0), (200.0, 40.0)]
    assert pareto_front(points) == [1, 2, 0, 5]


def test_before_after_is_first_run_vs_fewest_requests(tmp_path: Path) -> None:
    _sweep(tmp_path)
    [pair] = comparisons(load_report_input(tmp_path))
    assert pair.before.record.index == 0 and pair.after.record.index == 2
    assert "fewest produce requests/s" in pair.why


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.imgs: list[dict[str, str | None]] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.imgs.append(dict(attrs))
        elif tag in ("table", "h2", "h3", "p"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("table", "h2", "h3", "p"):
            assert self.open.pop() == tag


def test_page_from_stored_records(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    store = ResultsStore(tmp_path)
    record = store.load(paths[1])
    write_run_series(paths[1], _series(record.run_id, record.client.started_at))
    built = build_report(load_report_input(tmp_path))
    parser = _Tags()
    parser.feed(built.html)
    assert parser.open == []
    assert len(parser.imgs) == len(built.pngs) == 5  # offered, broker timeline, latency, Pareto, before/after
    assert all(str(i["src"]).startswith("data:image/png;base64,iVBOR") for i in parser.imgs)
    assert "No recommendation document" in built.html
    assert "No time series saved for: filebeat-like, batched-zstd." in built.html
    assert built.html.count('<a id="run-') == 3  # each run's row in its sweep's table
    assert built.html.count('<a href="#run-') == 2  # the before/after pair links to those rows


class _Ids(HTMLParser):
    """Every id on the page and every link within it."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.append(str(values["id"]))
        if str(values.get("href") or "").startswith("#"):
            self.links.append(str(values["href"])[1:])


def test_copied_records_get_their_own_anchors_and_every_link_finds_its_row(tmp_path: Path) -> None:
    """A record copied beside the others keeps its run_id: its row took the same id, so the page
    had duplicate ids and a link went to whichever the browser found first."""
    import shutil

    paths = _sweep(tmp_path)
    for path in paths:  # each record twice, under another file name
        shutil.copy(path, path.with_name(f"copy-{path.name}"))
    # a second sweep whose name, and so its run ids, read like the first's once cut to an id's characters
    store = ResultsStore(tmp_path)
    first = store.load(paths[0])
    store.write(
        first.model_copy(update={"sweep": "qunar.logs", "run_id": "qunar.logs/" + first.run_id.split("/")[1]})
    )
    html = build_report(load_report_input(tmp_path)).html
    parser = _Ids()
    parser.feed(html)
    assert len(parser.ids) == len(set(parser.ids)), sorted(i for i in parser.ids if parser.ids.count(i) > 1)
    assert parser.links and set(parser.links) <= set(parser.ids)  # no link goes nowhere
    rows = [i for i in parser.ids if i.startswith("run-")]
    assert len(rows) == 3 * 2 + 1
    base = "run-" + "".join(c if c.isalnum() else "-" for c in first.run_id)
    assert {base, f"{base}-2", f"{base}-3"} <= set(rows)  # the run, its copy, the look-alike
    assert {"group-qunar-logs", "group-qunar-logs-2"} <= set(parser.ids)


def test_page_opens_with_the_summary(tmp_path: Path) -> None:
    """Verdict, "x fewer" and lost come first, before any section of evidence."""
    _sweep(tmp_path)
    html = build_report(load_report_input(tmp_path), title="t").html
    summary = html.index('<section id="summary"')
    assert summary < html.index("<h2")
    assert "All 3 runs passed; no acked record lost." in html
    # 24000 vs 24000 // 9 produce requests over the same window: 9.0x fewer
    assert "9.0x fewer produce requests than" in html
    assert "0 of " in html and "acked records (each read back)" in html
    parser = _Tags()
    parser.feed(html)
    assert parser.open == []


def test_summary_names_failed_runs_and_lost_records(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    store = ResultsStore(tmp_path)
    bad = store.load(paths[0])
    bad = bad.model_copy(update={"status": "failed", "delivery": bad.delivery.model_copy(update={"lost": 7})})
    paths[0].write_text(bad.model_dump_json())
    html = build_report(load_report_input(tmp_path), title="<t>").html
    assert "1 of 3 runs failed: filebeat-like." in html
    assert 'class="summary poor"' in html
    assert "<title>&lt;t&gt;</title>" in html  # the template escapes what it is given
    assert ">7 of " in html


def test_summary_leads_with_the_before_after(tmp_path: Path) -> None:
    """The first screen holds the figures a person puts on a slide, before and after."""
    _sweep(tmp_path)
    html = build_report(load_report_input(tmp_path), title="t").html
    summary = html[html.index('<section id="summary"') : html.index("</section>")]
    rows = {
        cells[0]: cells[1:]
        for row in summary.split("<tr>")[2:]
        if (cells := [c.split(">", 1)[-1] for c in row.split("</td>")[:4]])
    }
    assert list(rows) == [
        "produce requests/s (client)",  # these records hold no broker count of the run's own requests
        "network thread idle",
        "request queue (busiest broker)",
        "broker CPU, cores",
        "p99 delivery latency, ms",
        "lost",
    ]
    # first run vs fewest requests: 24000 vs 24000 // 9 produce requests over the same window
    assert rows["produce requests/s (client)"] == ["480.0", "53.3", "9.0x lower"]
    assert rows["network thread idle"][:2] == ["0.900", "0.900"]
    assert rows["lost"][:2] == ["0", "0"]
    assert rows["request queue (busiest broker)"][:2] == ["-", "-"]  # not in these records: said so


def test_equal_offered_and_achieved_need_no_bars(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    store = ResultsStore(tmp_path)
    for path in paths:
        record = store.load(path)
        same = record.client.model_copy(update={"offered_records": record.client.records_acked})
        path.write_text(record.model_copy(update={"client": same}).model_dump_json())
    built = build_report(load_report_input(tmp_path))
    assert "Every run acked the load it offered (within 1%)" in built.html
    assert not any("offered" in name and "time" not in name for name in built.pngs), sorted(built.pngs)


def test_an_unclean_run_is_named_not_called_failed(tmp_path: Path) -> None:
    paths = _sweep(tmp_path)
    store = ResultsStore(tmp_path)
    record = store.load(paths[0])
    paths[0].write_text(record.model_copy(update={"status": "unclean"}).model_dump_json())
    html = build_report(load_report_input(tmp_path), title="t").html
    assert "All 3 runs passed; no acked record lost." in html and "runs failed" not in html
    assert "1 run(s) not a clean measurement: filebeat-like" in html


def test_a_series_of_thousands_of_brokers_keeps_a_short_legend() -> None:
    # a hand-edited series of 2,000 brokers got a legend entry each: tens of seconds, and
    # matplotlib's two-line "constrained_layout not applied" warning on stderr
    import types

    import matplotlib.pyplot as plt

    from tuner.render.report_plots import MAX_LEGEND_BROKERS, _broker_lines

    points = [(0.0, 1.0), (60.0, 2.0)]
    ranges = {"PRODUCE_REQUESTS_RATE": [RangeSeries({"broker": str(b)}, points) for b in range(2000)]}
    series = RunSeries.from_ranges("s/r", 0.0, 60.0, 5.0, 60.0, {}, ranges)
    fig, ax = plt.subplots()
    _broker_lines(ax, [types.SimpleNamespace(series=series)], "PRODUCE_REQUESTS_RATE", 0.0, {})  # type: ignore[list-item]
    assert len(ax.get_lines()) == 2000 and len(ax.get_legend_handles_labels()[1]) == MAX_LEGEND_BROKERS
    plt.close(fig)


def test_a_librarys_warning_never_reaches_stderr(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recwarn: pytest.WarningsRecorder,
) -> None:
    import warnings

    from tuner.cli.app import main
    from tuner.render import report_plots

    paths = _sweep(tmp_path / "results")
    drawn = report_plots._png

    def warned(fig: object) -> bytes:
        warnings.warn("constrained_layout not applied", UserWarning, stacklevel=1)
        return drawn(fig)

    monkeypatch.setattr(report_plots, "_png", warned)
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--results", str(paths[0].parents[1]), "--out", str(tmp_path / "r.html")])
    assert exit_info.value.code == 0 and capsys.readouterr().err == ""
    assert not [w for w in recwarn if "constrained_layout" in str(w.message)]  # ignored, not shown


@pytest.mark.parametrize("value", [1e308, -1e300])
def test_a_point_past_its_bound_is_one_prometheus_line_not_a_traceback(value: float) -> None:
    """`kbt report --prometheus` over a server answering 1e308 was a ValidationError traceback (and a
    sweep's series capture would have ended the sweep); save_series makes the KbtError a problem line."""
    from tuner.measure.prometheus import PrometheusError

    ranges = {"BYTES_IN_RATE": [RangeSeries({"broker": "1"}, [(0.0, 1.0), (5.0, value)])]}
    with pytest.raises(PrometheusError) as exc:
        RunSeries.from_ranges("s/r", 0.0, 60.0, 5.0, 60.0, {}, ranges)
    assert exc.value.message.startswith(
        "Prometheus answered BYTES_IN_RATE with a point kbt cannot keep: points[1][1]"
    )
    assert "\n" not in exc.value.message


def test_a_timeline_without_broker_lines_draws_without_a_warning() -> None:
    """Runs whose saved series hold no broker line (records older than the Prometheus asked): the
    legend call made matplotlib warn "No artists with labels found" (shown under KBT_DEBUG=1)."""
    import types
    import warnings

    from tuner.render.report_plots import broker_timeline

    series = RunSeries.from_ranges("s/r", 0.0, 60.0, 5.0, 60.0, {}, {})
    client = types.SimpleNamespace(window_start=0.0, window_end=60.0)
    record = types.SimpleNamespace(client=client, stress=None)
    entry = types.SimpleNamespace(series=series, record=record, label="r", started=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = broker_timeline([entry])  # type: ignore[list-item]
    assert png is not None and png.startswith(b"\x89PNG")


def test_the_per_run_charts_of_thousands_of_runs_stay_one_size_and_name_a_bounded_few(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 5,000 records drew a figure an inch per run, a bar and a label each: 77 s and 1.4 GB of memory
    import types

    import matplotlib.pyplot as plt

    from tuner.render import report_plots

    record = ResultsStore(tmp_path).load(_sweep(tmp_path)[0])
    many = [types.SimpleNamespace(record=record, label=f"run-{i}", series=None) for i in range(3000)]
    drawn: list[object] = []

    def kept(fig: object) -> bytes:
        drawn.append(fig)
        return b""

    monkeypatch.setattr(report_plots, "_png", kept)
    report_plots.latency_percentiles(many)  # type: ignore[arg-type]
    report_plots.offered_vs_achieved(many)  # type: ignore[arg-type]
    for fig in drawn:
        (ax,) = fig.axes  # type: ignore[attr-defined]
        assert fig.get_figwidth() <= report_plots.MAX_FIGURE_INCHES  # type: ignore[attr-defined]
        assert len(ax.get_xticklabels()) <= report_plots.MAX_RUN_LABELS
        assert not ax.patches and ax.get_xlabel().startswith("3000 runs; one in")  # markers, not bars
        plt.close(fig)  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14))
def test_the_pareto_front_is_every_point_no_other_beats(raw: list[tuple[int, int]]) -> None:
    points = [(float(x), float(y)) for x, y in raw]
    beaten = {
        i
        for i, (x, y) in enumerate(points)
        for j, (ox, oy) in enumerate(points)
        if j != i and ox <= x and oy <= y and (ox < x or oy < y)
    }
    assert pareto_front(points) == sorted(set(range(len(points))) - beaten, key=lambda i: (points[i], i))
