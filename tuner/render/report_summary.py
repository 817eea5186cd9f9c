"""The report's opening box: what a person takes in within ten seconds, before the evidence.

The verdict (did every run deliver every acked record), the recommendation per client kind, how
many times fewer produce requests it sends, and what was lost. Figures come from the run records
and the recommendation document only; nothing here is estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tuner.model.search import describe_profile
from tuner.render.report_data import ReportInput, RunEntry, figures


@dataclass(frozen=True)
class Line:
    label: str
    text: str
    good: bool | None = None  # colours the line: True green, False red, None plain


@dataclass
class Summary:
    headline: str
    good: bool
    lines: list[Line] = field(default_factory=list)


def _ok(entry: RunEntry) -> bool:
    r = entry.record
    if r.stress is not None:
        return r.stress.verdict in ("held", "aborted") and r.delivery.lost == 0
    return r.status == "ok"


def _fewer_in_sweeps(report: ReportInput) -> list[Line]:
    """Without a recommendation: the fewest vs the most produce requests/s among a sweep's healthy
    runs, which ran side by side on the same lab and offered load."""
    out = []
    for group, entries in report.groups().items():
        healthy = [e for e in entries if e.record.tuning_result and e.record.status == "ok"]
        rated = [(figures(e.record).client_requests_per_s, e) for e in healthy]
        rated = [(rate, e) for rate, e in rated if rate and rate > 0]
        if len(rated) < 2:
            continue
        low, best = min(rated, key=lambda x: x[0])
        high, worst = max(rated, key=lambda x: x[0])
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
            lines.append(Line(f"recommended ({c.status})", settings, c.status != "rejected"))
            reduction = c.reduction_measured or c.reduction_predicted
            if reduction:
                kind = "measured" if c.reduction_measured else "predicted"
                lines.append(
                    Line(
                        f"{c.client}",
                        f"{reduction:.1f}x fewer produce requests than {rec.baseline.name} ({kind})",
                        True,
                    )
                )
    lines += _fewer_in_sweeps(report) if rec is None else []
    unread = sum(e.record.delivery.unread for e in unverified)
    verified = "" if not unverified else f"; {len(unverified)} run(s) not verified"
    verified += f" ({unread:,} acked records unread, not counted lost)" if unread else ""
    lines.append(Line("lost", f"{lost:,} of {acked:,} acked records (each read back){verified}", lost == 0))
    return Summary(headline=headline, good=good, lines=lines)
