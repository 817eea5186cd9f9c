"""What `kbt report` reads and how it groups it: run records (with their time series when saved),
the recommendation when there is one, and the per-run figures every section shows.

Records come through the results store only. A record, series or recommendation file that cannot
be read is left out with a one-line note in the report, never a crash.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.errors import BadInput, KbtError
from tuner.core.inputs import check_directory, read_json
from tuner.spec.clients import kind_of
from tuner.store.recommendation import RECOMMENDATION_KIND, Recommendation, load_recommendation
from tuner.store.record import RunRecord
from tuner.store.results import OtherDocument, ResultsStore
from tuner.store.run_series import RunSeries, load_run_series
from tuner.store.stress_section import StressStep


@dataclass(frozen=True)
class RunEntry:
    record: RunRecord
    path: Path
    series: RunSeries | None

    @property
    def label(self) -> str:
        r = self.record
        if r.stress is not None:
            return f"{r.stress.profile_label} {r.stress.stage.label}"
        return r.name


def run_anchor(run_id: str) -> str:
    """The id a run's row in the report is named from (`Anchors` makes it unique)."""
    return "run-" + "".join(c if c.isalnum() else "-" for c in run_id)


class Anchors:
    """The ids of one report page, each given once: a run's row (a record copied beside another
    keeps its run_id; two run ids or sweep names can read alike once cut to an id's characters)
    gets the next free `-2`, `-3`; a link to a run id goes to the row of its first record."""

    def __init__(self, runs: list[RunEntry], taken: tuple[str, ...] = ()) -> None:
        self._taken = set(taken)
        self._rows: dict[Path, str] = {}
        self._first: dict[str, str] = {}
        for entry in runs:
            anchor = self.unique(run_anchor(entry.record.run_id))
            self._rows[entry.path] = anchor
            self._first.setdefault(entry.record.run_id, anchor)

    def unique(self, base: str) -> str:
        """`base`, or `base-N` with the lowest N >= 2 no id of the page has yet."""
        anchor, n = base, 2
        while anchor in self._taken:
            anchor, n = f"{base}-{n}", n + 1
        self._taken.add(anchor)
        return anchor

    def row(self, entry: RunEntry) -> str:
        """The id of the entry's row in its sweep's run table."""
        return self._rows[entry.path]

    def link(self, run_id: str) -> str | None:
        """The row a link to `run_id` goes to (None: no record of it is in the report)."""
        return self._first.get(run_id)


@dataclass
class ReportInput:
    root: Path
    runs: list[RunEntry] = field(default_factory=list)
    recommendation: Recommendation | None = None
    recommendation_path: Path | None = None
    problems: list[str] = field(default_factory=list)

    def groups(self) -> dict[str, list[RunEntry]]:
        """The runs by sweep name (a stress run's stages: by the stress test's name)."""
        out: dict[str, list[RunEntry]] = {}
        for entry in self.runs:
            out.setdefault(entry.record.sweep, []).append(entry)
        return out


def _store_for(results: Path) -> tuple[ResultsStore, str | None]:
    """RESULTS may be the results directory or one sweep's directory inside it."""
    if (
        results.is_dir()
        and any(p.suffix == ".json" for p in results.glob("*.json"))
        and not any(p.is_dir() and any(p.glob("*.json")) for p in results.iterdir() if p.name != "series")
    ):
        store = ResultsStore(results.parent)
        return store, results.name
    return ResultsStore(results), None


def _find_recommendation(results: Path) -> Path | None:
    """The newest recommendation document at the top of the results directory, if any."""
    found: list[tuple[float, Path]] = []
    for path in sorted(results.glob("*.json")):
        try:
            data = read_json(path, "recommendation")
        except BadInput:  # not ours to judge here: only a recommendation is looked for
            continue
        created = data.get("created_at") if isinstance(data, dict) else None
        if isinstance(data, dict) and data.get("kind") == RECOMMENDATION_KIND:
            found.append((float(created) if isinstance(created, int | float) else 0.0, path))
    return max(found)[1] if found else None


def load_report_input(results: Path, recommendation: Path | None = None) -> ReportInput:
    check_directory(results, "results directory")
    store, sweep = _store_for(results)
    report = ReportInput(root=results)
    for path in store.paths(sweep):
        try:
            record = store.load(path)
        except OtherDocument:  # a recommendation written beside the records: found below
            continue
        except KbtError as exc:
            report.problems.append(f"left out {path.name}: {exc.message}")
            continue
        try:
            series = load_run_series(path)
        except KbtError as exc:
            report.problems.append(f"no time series for {record.run_id}: {exc.message}")
            series = None
        report.runs.append(RunEntry(record, path, series))
    report.runs.sort(key=lambda e: (e.record.client.started_at, e.record.index))
    if not report.runs and report.problems:  # say why, not "none": the files are there
        more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
        first = report.problems[0].split(": ", 1)[-1]  # the reader's message names the file
        raise BadInput(f"{results}: no readable run records: {first}{more}")
    if not report.runs:
        raise BadInput(f"{results}: no run records (run 'kbt sweep' or 'kbt stress' first)")
    found = recommendation or _find_recommendation(results)
    if found is not None:
        try:
            report.recommendation = load_recommendation(found)
            report.recommendation_path = found
        except KbtError as exc:
            if recommendation is not None:
                raise
            report.problems.append(f"recommendation left out: {exc.message}")
    return report


# ---- per-run figures ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFigures:
    offered_per_s: float
    acked_per_s: float
    client_requests_per_s: float | None  # None: the client does not count them (real Filebeat)
    broker_requests_per_s: float | None
    records_per_request: float | None
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    p999_ms: float | None
    network_idle: float | None
    network_idle_min: float | None
    handler_idle: float | None
    broker_cpu_cores: float | None
    request_queue: float | None  # the busiest broker's mean request queue over the window
    lost: int
    duplicates: int
    verified: bool
    unread: int  # a read-back cut short: acked records not reached (never counted lost)


def request_rates(records: Sequence[RunRecord]) -> list[float | None]:
    """One produce request rate per run, all from one source so they compare: the clients' own
    counts when every client counted, else the brokers' count of each run's requests (real
    Filebeat and the collector count none)."""
    figs = [figures(r) for r in records]
    if all(f.client_requests_per_s is not None for f in figs):
        return [f.client_requests_per_s for f in figs]
    return [f.broker_requests_per_s for f in figs]


def rated(entries: Sequence[RunEntry]) -> list[tuple[float, RunEntry]]:
    """(produce request rate, run) of the runs that have one (request_rates), in order."""
    rates = request_rates([e.record for e in entries])
    return [(rate, e) for rate, e in zip(rates, entries, strict=True) if rate is not None]


def figures(record: RunRecord) -> RunFigures:
    c, b, d = record.client, record.broker, record.delivery
    multi = kind_of(record.plan.profile).multi_partition_requests
    lat = c.delivery_latency_ms
    return RunFigures(
        offered_per_s=c.offered_records / c.window_s,
        acked_per_s=c.records_per_s,
        client_requests_per_s=c.requests_per_s,
        broker_requests_per_s=b.run_produce_requests_per_s(multi) if b else None,
        records_per_request=c.records_per_request,
        p50_ms=lat.p50,
        p90_ms=lat.p90,
        p99_ms=lat.p99,
        p999_ms=lat.p999,
        network_idle=b.network_idle_ratio if b else None,
        network_idle_min=b.network_idle_ratio_min if b else None,
        handler_idle=b.request_handler_idle_ratio if b else None,
        broker_cpu_cores=b.cpu_cores if b else None,
        request_queue=max(b.values("request_queue_size"), default=None) if b else None,
        lost=d.lost,
        duplicates=d.duplicates,
        verified=d.verified,
        unread=d.unread,
    )


def achieved_offered(entries: list[RunEntry], within: float = 0.01) -> bool:
    """Every run acked the load it offered (within `within`): a bar pair per run would say nothing."""
    for e in entries:
        f = figures(e.record)
        if f.offered_per_s <= 0 or abs(f.acked_per_s - f.offered_per_s) > within * f.offered_per_s:
            return False
    return bool(entries)


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both axes (lower x and lower y), by x. One pass
    over the points sorted by x: a point is on the front when its y is its x's lowest and below
    every lower x's (thousands of runs: comparing each pair grew with their square)."""
    order = sorted(range(len(points)), key=lambda i: (points[i], i))
    front: list[int] = []
    best = math.inf  # the lowest y of every smaller x
    at = 0
    while at < len(order):
        x = points[order[at]][0]
        end = at
        while end < len(order) and points[order[end]][0] == x:
            end += 1
        low = points[order[at]][1]  # sorted by y within an x
        if low < best:
            front += [i for i in order[at:end] if points[i][1] == low]
        best = min(best, low)
        at = end
    return front


@dataclass(frozen=True)
class Comparison:
    """A before/after pair of runs and why these two."""

    before: RunEntry
    after: RunEntry
    why: str


def comparisons(report: ReportInput) -> list[Comparison]:
    """Before/after pairs: the recommendation's baseline vs recommended runs when it names them;
    else in stress runs the current vs recommended profile at the highest step both ran to its end
    (held or failed, not aborted part way); else per
    sweep its first run vs its run with the fewest produce requests/s (healthy runs only)."""
    by_id = {e.record.run_id: e for e in report.runs}
    out: list[Comparison] = []
    rec = report.recommendation
    if rec is not None:
        for client in rec.clients:
            before = by_id.get(client.baseline_measured.run_id) if client.baseline_measured else None
            after = by_id.get(client.measured.run_id) if client.measured else None
            if before and after:
                why = f"recommendation for {client.client}: baseline vs recommended"
                out.append(Comparison(before, after, why))
    if out:
        return out
    for group, entries in report.groups().items():
        healthy = [e for e in entries if e.record.tuning_result or e.record.stress is not None]
        stress = [e for e in healthy if e.record.stress is not None]
        if stress:
            by_label: dict[str, dict[str, RunEntry]] = {}
            for e in stress:
                assert e.record.stress is not None
                # judged and run to its end (an aborted or interrupted stage ran only in part)
                if e.record.stress.stage.judged and e.record.stress.verdict in ("held", "failed"):
                    by_label.setdefault(e.record.stress.profile_label, {})[e.record.stress.stage.label] = e
            labels = list(by_label)
            if len(labels) >= 2:
                one, two = labels[0], labels[1]
                common = [s for s in by_label[one] if s in by_label[two]]
                if common:
                    stage = common[-1]
                    why = f"{group}: {one} vs {two} at stage {stage}"
                    out.append(Comparison(by_label[one][stage], by_label[two][stage], why))
            continue
        if len(healthy) >= 2:  # a sweep's runs (no stress stage among them)
            first = min(healthy, key=lambda e: e.record.index)
            rates = rated(healthy)
            best = min(rates, key=lambda x: x[0])[1] if rates else first
            if best is not first:
                why = f"{group}: first run vs the run with the fewest produce requests/s"
                out.append(Comparison(first, best, why))
    return out


# ---- stress runs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileSummary:
    """One profile's run through a stress timeline, as `kbt stress` sums it up."""

    label: str
    profile: str  # the profile's own name
    held: StressStep | None  # the highest ramp step held before the first one that did not
    first_failed: StressStep | None  # the first judged step that did not hold
    problems: list[str]  # that step's reasons (failed gates, notes)
    spike: str | None  # the spike's verdict, if the run got that far


def profile_runs(entries: Sequence[RunEntry]) -> dict[tuple[str, float], list[RunEntry]]:
    """A stress test's stage records by profile run (label and t0), in run order."""
    runs: dict[tuple[str, float], list[RunEntry]] = {}
    for e in entries:
        if e.record.stress is not None:
            runs.setdefault((e.record.stress.profile_label, e.record.stress.t0), []).append(e)
    return runs


def stress_summaries(entries: list[RunEntry]) -> list[ProfileSummary]:
    """Per profile run (label and t0), in run order: the same highest step held as the CLI's."""
    out = []
    for (label, _), stages in profile_runs(entries).items():
        stages = sorted(stages, key=lambda e: e.record.index)
        held: StressStep | None = None
        failed: RunEntry | None = None
        for e in stages:
            step = e.record.stress
            assert step is not None
            if step.stage.kind not in ("step", "hold"):
                continue
            if step.verdict != "held":
                failed = e
                break
            held = step
        spikes = [s for e in stages if (s := e.record.stress) is not None and s.stage.kind == "spike"]
        out.append(
            ProfileSummary(
                label=label,
                profile=stages[0].record.plan.profile.name,
                held=held,
                first_failed=failed.record.stress if failed else None,
                problems=list(failed.record.problems) if failed else [],
                spike=spikes[0].verdict if spikes else None,
            )
        )
    return out
