"""A pressure sweep's closing lines: before -> after on the pressure lab, read at a glance.

    python -m tuner.render.pressure_summary RESULTS_DIR   # the run records of one pressure sweep

The baseline is the run named "filebeat-like", the other run is the batched one; each line is one
figure, before -> after: network idle (Kafka's meter, mean over the window), the request queue (mean,
share of the window at its cap), broker CPU, produce requests/s on the broker, records lost, and
the attribution's cause (tuner/measure/attribution.py) with the load average it was measured at.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.text import fixed_or_dash
from tuner.render.script import run_script
from tuner.spec.clients import kind_of
from tuner.store import ResultsStore
from tuner.store.record import RunRecord

BASELINE = "filebeat-like"


def _queue(record: RunRecord) -> str:
    broker = record.broker
    stats = broker.brokers[0] if broker and broker.brokers else None
    if stats is None:
        return "-"
    share = stats.request_queue_at_cap_share
    at_cap = "" if share is None else f", at cap {share:.0%}"
    return f"{fixed_or_dash(stats.request_queue_size, 1)} mean{at_cap}"


def _cause(record: RunRecord) -> str:
    a = record.attribution
    if a is None:
        return "-"
    return f"{a.cause} (load {fixed_or_dash(a.threads.load_avg_1m, 1)})"


def closing_lines(before: RunRecord, after: RunRecord) -> list[str]:
    """One line per figure, before -> after."""
    b, a = before.broker, after.broker
    cap = b.request_queue_cap if b is not None else None
    offered = before.client.offered_records / before.client.window_s

    def broker(field: str, digits: int) -> tuple[str, ...]:
        """The brokers' figure `field`, before and after."""
        return tuple(fixed_or_dash(getattr(x, field) if x else None, digits) for x in (b, a))

    rows = [
        ("network idle", *broker("network_idle_ratio", 2)),
        (f"request queue (cap {cap or '-'})", _queue(before), _queue(after)),
        ("broker CPU (cores)", *broker("cpu_cores", 2)),
        ("produce requests/s", *broker("produce_requests_per_s", 0)),
        (
            "lost (of acked)",
            f"{before.delivery.lost} (of {before.delivery.acked:,})",
            f"{after.delivery.lost} (of {after.delivery.acked:,})",
        ),
        ("cause", _cause(before), _cause(after)),
    ]
    width = max(len(name) for name, _, _ in rows)
    settings = kind_of(after.plan.profile).describe(after.plan.profile)
    head = (
        f"pressure lab, {before.name} -> {after.name} ({settings}), same offered load {offered:,.0f} msgs/s:"
    )
    return [head] + [f"  {name:<{width}}  {x} -> {y}" for name, x, y in rows]


def main(argv: list[str]) -> int:
    def work() -> int:
        records = ResultsStore(Path(argv[0])).records()
        before = [r for r in records if r.name == BASELINE]
        after = [r for r in records if r.name != BASELINE]
        if not before or not after:
            raise BadInput(f"{argv[0]} needs a {BASELINE!r} run and one other run")
        print("\n".join(closing_lines(before[-1], after[-1])))
        return 0

    return run_script(len(argv) == 1, "python -m tuner.render.pressure_summary RESULTS_DIR", work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
