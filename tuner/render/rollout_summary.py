"""The team's clients before and after a rollout, from their own run records: per client (its
profile's name, kept by the rollout), the delivery p99 against the SLO, records acked and lost, and
the settings each side ran. `kbt compare` gives the brokers' side; this is what the clients saw.

    python -m tuner.render.rollout_summary BEFORE_RESULTS AFTER_RESULTS [--slo-p99 MS]
"""

from __future__ import annotations

import sys
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.numbers import parse_number
from tuner.core.text import or_dash
from tuner.render.script import run_script
from tuner.spec.clients import kind_of
from tuner.store import ResultsStore
from tuner.store.record import RunRecord

WIDTH = 100  # columns a line may take in a pipe
USAGE = "python -m tuner.render.rollout_summary BEFORE_RESULTS AFTER_RESULTS [--slo-p99 MS]"


def _p99(record: RunRecord) -> str:
    return or_dash(record.client.delivery_latency_ms.p99, "{:,.0f} ms")


def _delivery(record: RunRecord) -> str:
    d = record.delivery
    verdict = f"lost {d.lost:,}" if d.verified else "not verified"
    return f"{d.acked:,} acked, {verdict}"


def summary_lines(before: list[RunRecord], after: list[RunRecord], slo_p99_ms: float | None) -> list[str]:
    """One block per client the two sides share (the newest record of each name)."""
    old = {r.name: r for r in sorted(before, key=lambda r: r.created_at)}
    new = {r.name: r for r in sorted(after, key=lambda r: r.created_at)}
    shared = sorted(old.keys() & new.keys())
    if not shared:
        raise BadInput("the two results directories share no client (run names differ)")
    slo = "" if slo_p99_ms is None else f" (SLO {slo_p99_ms:,.0f} ms)"
    lines = []
    for name in shared:
        b, a = old[name], new[name]
        was, now = (kind_of(r.plan.profile).describe(r.plan.profile) for r in (b, a))
        settings = f"  settings       {was} -> {now}"
        if len(settings) > WIDTH:  # the new settings on a line of their own, never a word cut
            settings = f"  settings       {was}\n{'':17}-> {now}"
        lines += [
            f"client {name} ({a.plan.profile.client}), before -> after:",
            *settings.split("\n"),
            f"  delivery p99   {_p99(b)} -> {_p99(a)}{slo}",
            f"  records        {_delivery(b)} -> {_delivery(a)}",
        ]
    return lines


def main(argv: list[str]) -> int:
    def work() -> int:
        try:
            slo = parse_number(argv[3], "--slo-p99") if len(argv) == 4 else None
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        before, after = (ResultsStore(Path(a)).records() for a in argv[:2])
        print("\n".join(summary_lines(before, after, slo)))
        return 0

    fits = len(argv) == 2 or (len(argv) == 4 and argv[2] == "--slo-p99")
    return run_script(fits, USAGE, work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
