"""The report's opening box: what a person takes in within ten seconds, before the evidence.

The verdict (did every run deliver every acked record), the recommendation per client kind, how
many times fewer produce requests it sends, and what was lost; then the before/after that matters,
side by side from the report's first comparison (produce requests/s, network idle, request queue,
broker CPU, p99, lost). Figures come from the run records and the recommendation document only;
nothing here is estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tuner.core.text import fixed_or_dash
from tuner.model.comparison import comparable_rates, reduction_of
from tuner.model.search import describe_profile
from tuner.render.report_data import Comparison, ReportInput, RunEntry, comparisons, figures, rated


@dataclass(frozen=True)
class Line:
    label: str
    text: str
    good: bool | None = None  # colours the line: True green, False red, None plain


@dataclass(frozen=True)
class Change:
    metric: str
    before: str
    after: str
    change: str
    good: bool | None = None


@dataclass(frozen=True)
class BeforeAfter:
    why: str
    before: str  # run labels
    after: str
    rows: list[Change]


@dataclass
class Summary:
    headline: str
    good: bool
    lines: list[Line] = field(default_factory=list)
    before_after: BeforeAfter | None = None


def _change(
    before: float | None, after: float | None, lower_is_better: bool | None, digits: int = 2
) -> tuple[str, bool | None]:
    """`5.2x lower` / `+0.41` style change and whether it is an improvement (None: neutral)."""
    if before is None or after is None:
        return "", None
    if lower_is_better is None or before <= 0 or after <= 0:
        delta = after - before
        good = None if lower_is_better is None or delta == 0 else (delta < 0) == lower_is_better
        return f"{delta:+,.{digits}f}", good
    if after < before:
        return f"{before / after:.1f}x lower", lower_is_better
    if after > before:
        return f"{after / before:.1f}x higher", not lower_is_better
    return "same", None


def before_after(pair: Comparison) -> BeforeAfter:
    """The figures a person puts on a slide, before and after."""
    b, a = figures(pair.before.record), figures(pair.after.record)
    rows: list[Change] = []

    def add(metric: str, x: float | None, y: float | None, digits: int, lower: bool | None) -> None:
        text, good = _change(x, y, lower, digits)
        rows.append(Change(metric, fixed_or_dash(x, digits), fixed_or_dash(y, digits), text, good))

    # The same count as the recommendation's comparison (tuner/model/comparison.py): the clients'
    # when both counted, else the brokers'; never a ratio of one over the other.
    rates = comparable_rates(
        b.client_requests_per_s, b.broker_requests_per_s, a.client_requests_per_s, a.broker_requests_per_s
    )
    counted = {"client": " (client)", "brokers": " (broker)", None: ""}[rates and rates[2]]
    add("produce requests/s" + counted, rates and rates[0], rates and rates[1], 1, True)
    idle_b, idle_a = b.network_idle, a.network_idle
    text, good = _change(idle_b, idle_a, None, 3)
    if idle_b is not None and idle_a is not None and idle_a != idle_b:
        good = idle_a > idle_b
    rows.append(Change("network thread idle", fixed_or_dash(idle_b, 3), fixed_or_dash(idle_a, 3), text, good))
    add("request queue (busiest broker)", b.request_queue, a.request_queue, 1, True)
    add("broker CPU, cores", b.broker_cpu_cores, a.broker_cpu_cores, 2, True)
    add("p99 delivery latency, ms", b.p99_ms, a.p99_ms, 0, None)
    rows.append(Change("lost", f"{b.lost:,}", f"{a.lost:,}", "", a.lost == 0 and b.lost == 0))
    return BeforeAfter(pair.why, pair.before.label, pair.after.label, rows)


def _ok(entry: RunEntry) -> bool:
    r = entry.record
    if r.stress is not None:
        return r.stress.verdict in ("held", "aborted") and r.delivery.lost == 0
    return r.status != "failed"  # an unclean run delivered: it is named below, not called failed


def _fewer_in_sweeps(report: ReportInput) -> list[Line]:
    """Without a recommendation: the fewest vs the most produce requests/s among a sweep's healthy
    runs, which ran side by side on the same lab and offered load."""
    out = []
    for group, entries in report.groups().items():
        healthy = [e for e in entries if e.record.tuning_result and e.record.status == "ok"]
        rates = [(rate, e) for rate, e in rated(healthy) if rate > 0]
        if len(rates) < 2:
            continue
        low, best = min(rates, key=lambda x: x[0])
        high, worst = max(rates, key=lambda x: x[0])
        if high <= low:
            continue
        out.append(
            Line(
                f"sweep {group}",
                f"{best.label}: {high / low:.1f}x fewer produce requests than {worst.label}"
                f" ({low:,.1f} vs {high:,.1f} req/s, measured side by side)",
                True,
            )
        )
    return out


def build_summary(report: ReportInput) -> Summary:
    entries = report.runs
    failed = [e for e in entries if not _ok(e)]
    lost = sum(e.record.delivery.lost for e in entries)
    acked = sum(e.record.delivery.acked for e in entries)
    unverified = [e for e in entries if not e.record.delivery.verified]
    if not entries:
        headline, good = "No run records.", False
    elif failed:
        names = ", ".join(e.label for e in failed[:5]) + (", ..." if len(failed) > 5 else "")
        headline, good = f"{len(failed)} of {len(entries)} runs failed: {names}.", False
    else:
        headline, good = f"All {len(entries)} runs passed; no acked record lost.", True
    lines: list[Line] = []
    rec = report.recommendation
    if rec is not None:
        for c in rec.clients:
            settings = describe_profile(c.profile)
            edge = ", at the edge" if c.at_edge else ""
            lines.append(
                Line(f"recommended ({c.status}{edge})", settings, c.status != "rejected" and not c.at_edge)
            )
            if c.at_edge:
                note = next((n for n in c.notes if n.startswith("at the edge")), "")
                lines.append(Line(f"{c.client} margin", note.removeprefix("at the edge: "), False))
            if (cut := reduction_of(rec, c)) is not None:
                lines.append(Line(f"{c.client}", cut.sentence(), True))
    lines += _fewer_in_sweeps(report) if rec is None else []
    unread = sum(e.record.delivery.unread for e in unverified)
    unclean = [e.label for e in entries if e.record.stress is None and e.record.status == "unclean"]
    if unclean:
        names = ", ".join(unclean[:5]) + (", ..." if len(unclean) > 5 else "")
        lines.append(Line("unclean", f"{len(unclean)} run(s) not a clean measurement: {names}", None))
    verified = "" if not unverified else f"; {len(unverified)} run(s) not verified"
    verified += f" ({unread:,} acked records unread, not counted lost)" if unread else ""
    lines.append(Line("lost", f"{lost:,} of {acked:,} acked records (each read back){verified}", lost == 0))
    pairs = comparisons(report)
    return Summary(headline, good, lines, before_after(pairs[0]) if pairs else None)
