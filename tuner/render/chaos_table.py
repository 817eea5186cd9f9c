"""The results of `kbt chaos`: one row per run (a rich table for the terminal, Markdown for docs)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table

from tuner.store.record import RunRecord


@dataclass(frozen=True)
class ChaosRow:
    scenario: str
    profile: str
    expect: str
    verdict: str
    degraded: bool
    acked: int
    lost: int
    duplicates: int
    out_of_order: int
    failed: int
    indeterminate: int
    acked_per_s: float
    detail: str


def chaos_rows(records: list[RunRecord]) -> list[ChaosRow]:
    rows = [
        ChaosRow(
            scenario=r.fault.scenario if r.fault else r.name,
            profile=str(r.plan.assignments.get("profile", r.plan.profile.name)),
            expect=r.fault.expect if r.fault else "-",
            verdict=r.fault.verdict if r.fault else "-",
            degraded=r.degraded,
            acked=r.delivery.acked,
            lost=r.delivery.lost,
            duplicates=r.delivery.duplicates,
            out_of_order=r.delivery.out_of_order,
            failed=r.delivery.failed,
            indeterminate=r.delivery.indeterminate,
            acked_per_s=r.client.records_per_s,
            detail="; ".join(r.fault.reasons) if r.fault else "; ".join(r.problems),
        )
        for r in records
    ]
    return sorted(rows, key=lambda row: (row.scenario, row.profile))


HEADERS = [
    "scenario", "profile", "expect", "verdict", "degraded", "acked", "lost", "dups", "out of order",
    "failed/timed out", "acked/s", "detail",
]  # fmt: skip


def _cells(row: ChaosRow) -> list[str]:
    return [
        row.scenario,
        row.profile,
        row.expect,
        row.verdict.upper() if row.verdict == "fail" else row.verdict,
        "yes" if row.degraded else "no",
        str(row.acked),
        str(row.lost),
        str(row.duplicates),
        str(row.out_of_order),
        f"{row.failed}/{row.indeterminate}",
        f"{row.acked_per_s:.0f}",
        row.detail,
    ]


Unrecorded = tuple[str, str, str, str]  # scenario, profile, "skipped" | "error", reason


def chaos_table(records: list[RunRecord], skipped: list[Unrecorded], title: str) -> Table:
    """`skipped`: runs the lab could not do, or that ended without a record."""
    table = Table(title=title)
    numeric = ("acked", "lost", "dups", "acked/s")
    for header in HEADERS:
        table.add_column(header, justify="right" if header in numeric else "left")
    for row in chaos_rows(records):
        colour = "green" if row.verdict == "pass" else "red"
        cells = _cells(row)
        cells[3] = f"[{colour}]{cells[3]}[/{colour}]"
        table.add_row(*cells)
    for scenario, profile, what, reason in skipped:
        colour = "yellow" if what == "skipped" else "red"
        table.add_row(scenario, profile, "-", f"[{colour}]{what}[/{colour}]", *["-"] * 7, reason)
    return table


def chaos_markdown(records: list[RunRecord], skipped: list[Unrecorded]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for row in chaos_rows(records):
        lines.append("| " + " | ".join(c.replace("|", "/") for c in _cells(row)) + " |")
    for scenario, profile, what, reason in skipped:
        lines.append("| " + " | ".join([scenario, profile, "-", what, *["-"] * 7, reason]) + " |")
    return "\n".join(lines) + "\n"
