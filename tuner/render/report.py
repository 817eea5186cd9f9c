"""`kbt report`: one self-contained HTML page from run records, their time series and the
recommendation.

Sections: the recommendation and its evidence (when a recommendation document exists), then per
sweep or stress run: a run table, offered vs achieved, broker pressure over time per broker,
latency percentiles per run/step, the Pareto plot of produce requests/s vs p99, and finally the
before/after comparisons of profiles.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from tuner import __version__
from tuner.model.comparison import reduction_of
from tuner.model.search import describe_profile
from tuner.render import report_plots as plots
from tuner.render.recommendation import band_text
from tuner.render.report_data import (
    Anchors,
    ReportInput,
    RunEntry,
    achieved_offered,
    comparisons,
    figures,
    stress_summaries,
)
from tuner.render.report_html import Section, esc, img, num, page, table
from tuner.render.report_summary import build_summary
from tuner.render.sweep_table import lost_cell
from tuner.store.recommendation import ClientRecommendation, Measured, Prediction, Recommendation
from tuner.store.stress_section import StressStep

# The page's own ids (the template's summary, the sections below): no run or sweep takes one.
PAGE_IDS = ("summary", "recommendation", "before-after")


@dataclass
class Report:
    html: str = ""
    pngs: dict[str, bytes] = field(default_factory=dict)  # file name -> PNG, in page order


def _status(entry: RunEntry) -> str:
    r = entry.record
    text = r.stress.verdict if r.stress is not None else r.status
    good = text in ("ok", "held")
    extra = " (degraded)" if r.degraded else (" (fault run)" if r.fault else "")
    return f'<span class="{"ok" if good else "bad"}">{esc(text)}{esc(extra)}</span>'


def _run_cell(e: RunEntry, ids: Anchors, home: bool) -> str:
    """A run's first cell: its row's id in its sweep's table (`home`), elsewhere a link to that row."""
    if home:
        return f'<a id="{esc(ids.row(e))}"></a>{esc(e.label)}'
    return f'<a href="#{esc(ids.row(e))}">{esc(e.label)}</a>'


def _run_table(entries: list[RunEntry], ids: Anchors, home: bool = True) -> str:
    head = [
        "run", "profile", "status", "offered/s", "acked/s", "produce req/s (client)", "(broker)",
        "msgs/req", "p50 ms", "p99 ms", "p99.9 ms", "net idle", "net idle min", "handler idle",
        "broker CPU", "lost/dup",
    ]  # fmt: skip
    rows = []
    for e in entries:
        f = figures(e.record)
        rows.append([
            _run_cell(e, ids, home), esc(e.record.plan.profile.name),
            _status(e), num(f.offered_per_s), num(f.acked_per_s), num(f.client_requests_per_s),
            num(f.broker_requests_per_s),
            num(f.records_per_request), num(f.p50_ms), num(f.p99_ms), num(f.p999_ms), num(f.network_idle, 3),
            num(f.network_idle_min, 3), num(f.handler_idle, 3), num(f.broker_cpu_cores, 2),
            lost_cell(f.lost, f.duplicates, f.unread) + ("" if f.verified else " (unverified)"),
        ])  # fmt: skip
    return table(head, rows, left=3)


def _lag_mean(step: StressStep, mode: str) -> float | None:
    values = [c.whole.lag_mean for c in step.consumers if c.mode == mode and c.whole.lag_mean is not None]
    return max(values) if values else None


def _stress_table(entries: list[RunEntry]) -> str:
    rows = []
    for e in entries:
        s = e.record.stress
        if s is None:
            continue
        f = figures(e.record)
        remote = s.remote.fetch_requests_per_s if s.remote else None
        rows.append([
            esc(s.profile_label), esc(s.stage.label), esc(s.stage.kind), num(s.offered_msgs_per_s, 0),
            num(f.acked_per_s, 0), _status(e), num(s.realtime_e2e_p99_ms(False), 0),
            num(s.realtime_e2e_p99_ms(True), 0), num(remote, 1), num(_lag_mean(s, "realtime"), 0),
            num(_lag_mean(s, "lagging"), 0), esc("; ".join(e.record.problems) or "-"),
        ])  # fmt: skip
    head = [
        "profile", "stage", "kind", "offered msgs/s", "acked msgs/s", "verdict",
        "real-time e2e p99 ms, no lagging readers", "with lagging readers", "remote fetch req/s",
        "lag mean, real-time (records)", "lag mean, lagging (records)", "failed gates and notes",
    ]  # fmt: skip
    summary = []
    for p in stress_summaries(entries):
        if p.held is None:
            line = f"{p.label} ({p.profile}): no step held"
        else:
            rate = p.held.stage.multiplier * p.held.baseline_msgs_per_s
            line = (
                f"{p.label} ({p.profile}): highest step held {p.held.stage.name}"
                f" (x{p.held.stage.multiplier:g} = {rate:,.0f} msgs/s)"
            )
        if p.first_failed is not None:
            line += f"; {p.first_failed.stage.name} {p.first_failed.verdict}"
            if p.problems:
                line += f": {'; '.join(p.problems)}"
        if p.spike is not None:
            line += f"; spike {p.spike}"
        summary.append(f"<p><b>{esc(line)}</b></p>")
    note = (
        '<p class="note">Real-time e2e: record timestamp to consumed, in the stage half without and'
        " with the lagging group reading (lagging_readers: split). Lag: records behind the high"
        " watermark (librdkafka statistics), mean over the stage.</p>"
    )
    return "".join(summary) + table(head, rows, left=3) + note


_FIGURES_HEAD = ["", "produce req/s", "p99 ms", "network idle", "meets SLO", "run"]


def _predicted_cells(p: Prediction) -> list[str]:
    return [num(p.requests_per_s), num(p.p99_ms), num(p.network_idle_ratio, 3), "", ""]


def _measured_cells(m: Measured | None, ids: Anchors) -> list[str]:
    if m is None:
        return ["n/a"] * 5
    row = ids.link(m.run_id)  # a run not in these results: named, not linked to nothing
    return [
        num(m.requests_per_s),
        num(m.p99_ms),
        num(m.network_idle_ratio, 3),
        "yes" if m.meets_slo else "no",
        f'<a href="#{esc(row)}">{esc(m.run_id)}</a>' if row is not None else esc(m.run_id),
    ]


def _recommendation(rec: Recommendation, source: str, ids: Anchors) -> list[str]:
    out = [
        f'<h2 id="recommendation">Recommendation</h2><p class="note">from {esc(source)}, objective:'
        f" {esc(rec.objective)}, {rec.brokers} brokers, workload {esc(rec.workload.name)}</p>"
    ]
    slo = rec.slo
    margin = f" (aiming {rec.slo_margin:.0%} below)" if rec.slo_margin else ""
    out.append(
        f"<p>SLO: p99 &le; {num(slo.p99_ms)} ms{margin},"
        f" producer memory &le; {num(slo.max_producer_memory_mb)} MB</p>"
    )
    client: ClientRecommendation
    for client in rec.clients:
        out.append(
            f"<h3>{esc(client.client)}: {esc(client.status)}{', at the edge' if client.at_edge else ''}"
            f" &mdash; profile {esc(client.profile.name)}</h3>"
        )
        props = [[f"<code>{esc(k)}</code>", f"<code>{esc(v)}</code>"] for k, v in client.properties.items()]
        out.append(table(["setting", "value"], props, left=2))
        p = client.predicted
        out.append(table(_FIGURES_HEAD, [
            ["predicted", *_predicted_cells(p)], ["measured", *_measured_cells(client.measured, ids)],
            ["baseline measured", *_measured_cells(client.baseline_measured, ids)],
        ]))  # fmt: skip
        if (cut := reduction_of(rec, client)) is not None:
            out.append(f"<p>{esc(cut.sentence())}.</p>")
        if client.safer is not None:
            t = client.safer
            out.append(
                f"<p>At the edge: the next safer setting is {esc(describe_profile(t.profile))}"
                f" ({esc(t.reason)}).</p>"
            )
            out.append(table(_FIGURES_HEAD, [
                ["safer, predicted", *_predicted_cells(t.predicted)],
                ["safer, measured", *_measured_cells(t.measured, ids)],
            ]))  # fmt: skip
        if rec.error_bands_from is not None:
            out.append(f"<p>Model uncertainty: {esc(band_text(p))}.</p>")
        if client.band_doubt:
            out.append(f"<p>The bands could change the ranking: {esc(client.band_doubt)}.</p>")
        if client.evidence:
            links = ", ".join(esc(r) for r in client.evidence)
            out.append(f"<p>Evidence (run ids): {links}</p>")
        out.extend(f'<p class="note">{esc(n)}</p>' for n in client.notes)
    if rec.model_truth:
        rows = [
            [
                esc(t.client),
                str(t.runs),
                num(100 * t.median_abs_error, 1, "%"),
                num(100 * t.max_abs_error, 1, "%"),
                str(t.off_schedule),
            ]
            for t in rec.model_truth
        ]
        out.append("<h3>Model vs measurement (produce requests/s)</h3>")
        out.append(table(["client", "runs", "median error", "max error", "off schedule, left out"], rows))
    out.extend(f'<p class="note">{esc(n)}</p>' for n in rec.notes)
    return out


def _newest(groups: dict[str, list[RunEntry]], most: int) -> set[str]:
    """The `most` groups whose newest run is newest: the ones the report draws charts for (each
    group's charts take about a second: a directory of thousands of sweeps took an hour)."""
    newest = sorted(groups, key=lambda g: max(e.record.created_at for e in groups[g]), reverse=True)
    return set(newest[:most])


def build_report(report: ReportInput, title: str = "kbt report") -> Report:
    body: list[str] = []
    pngs: dict[str, bytes] = {}  # file name -> PNG, in page order

    def plot(png: bytes | None, name: str, alt: str) -> None:
        if png is not None:
            slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")
            pngs[f"{len(pngs) + 1:02d}-{slug}.png"] = png
            body.append(img(png, alt))

    groups = report.groups()
    ids = Anchors(report.runs, taken=PAGE_IDS)
    charted = _newest(groups, plots.MAX_CHARTED_GROUPS)
    sections: list[Section] = []
    body.append(
        f'<p class="note">{len(report.runs)} run record(s) in {len(groups)} sweep/stress run(s) from'
        f" <code>{esc(report.root)}</code>; generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by kbt"
        f" {esc(__version__)}.</p>"
    )
    for problem in report.problems:
        body.append(f'<p class="note">note: {esc(problem)}</p>')
    if report.recommendation is not None:
        sections.append(Section("recommendation", "recommendation"))
        body += _recommendation(report.recommendation, str(report.recommendation_path), ids)
    else:
        body.append('<p class="note">No recommendation document in the results directory (kbt recommend'
                    " writes one); that section is left out.</p>")  # fmt: skip
    for group, entries in groups.items():
        is_stress = any(e.record.stress is not None for e in entries)
        anchor = ids.unique("group-" + re.sub(r"[^A-Za-z0-9_-]+", "-", group))
        sections.append(Section(anchor, f"{'stress' if is_stress else 'sweep'} {group}"))
        body.append(f'<h2 id="{esc(anchor)}">{"Stress" if is_stress else "Sweep"} {esc(group)}</h2>')
        if is_stress:
            body.append(_stress_table(entries))
        body.append(_run_table(entries, ids))
        missing = [e.label for e in entries if e.series is None]
        if missing:
            body.append(f'<p class="note">No time series saved for: {esc(", ".join(missing))}.</p>')
        if group not in charted:
            body.append(f'<p class="note">Charts are drawn for the {len(charted)} newest of the {len(groups)}'
                        " sweeps and stress runs; this one is in its tables only.</p>")  # fmt: skip
            continue
        body.append("<h3>Offered vs achieved</h3>")
        if achieved_offered(entries):  # equal bars say nothing: one line says it
            body.append('<p class="note">Every run acked the load it offered (within 1%): the load was'
                        " the same on both sides of every comparison below.</p>")  # fmt: skip
        else:
            plot(plots.offered_vs_achieved(entries), f"{group}-offered", f"{group}: offered vs achieved")
        plot(
            plots.offered_over_time(entries), f"{group}-offered-time", f"{group}: offered vs acked over time"
        )
        body.append("<h3>Request rate and idle ratios over time, per broker</h3>")
        timeline = plots.stress_timeline(entries) if is_stress else plots.broker_timeline(entries)
        plot(timeline, f"{group}-brokers", f"{group}: broker pressure over time")
        body.append("<h3>Latency percentiles per " + ("step" if is_stress else "run") + "</h3>")
        plot(plots.latency_percentiles(entries), f"{group}-latency", f"{group}: latency percentiles")
        if not is_stress:
            sweep_runs = [e for e in entries if e.record.tuning_result]
            body.append("<h3>Pareto: produce requests/s vs p99</h3>")
            png = plots.pareto(sweep_runs)
            if png is None:
                body.append('<p class="note">Needs two or more healthy runs.</p>')
            plot(png, f"{group}-pareto", f"{group}: Pareto produce requests vs p99")
    pairs = comparisons(report)
    sections.append(Section("before-after", "before / after"))
    body.append('<h2 id="before-after">Before / after</h2>')
    if not pairs:
        body.append('<p class="note">No pair of runs to compare (needs two healthy runs of a sweep,'
                    " current and recommended stress profiles, or a recommendation).</p>")  # fmt: skip
    for pair in pairs:
        body.append(f"<h3>{esc(pair.why)}</h3>")
        body.append(_run_table([pair.before, pair.after], ids, home=False))
        if pair.after.record.sweep in charted:
            plot(plots.before_after(pair), f"before-after-{pair.after.label}", f"before/after: {pair.why}")
    return Report(html=page(title, body, build_summary(report), sections), pngs=pngs)
