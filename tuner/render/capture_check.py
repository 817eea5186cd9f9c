"""Source vs replay of a capture, the acceptance lines of scripts/bench_capture.sh:

    python -m tuner.render.capture_check OUT

OUT holds `source-diagnosis.json` and `replay-diagnosis.json` (`kbt diagnose --json` over the
capture's window on each lab) and `capture/` and `replay-capture/` (`kbt capture` of each). Per
broker: produce requests/s, bytes per request and records/s, the replay's divided by the capture's
lab scale; then each group of both captures side by side. Each file is read through the model kbt
reads it with (tuner.render.capture `read_capture`, tuner.render.diagnosis `read_diagnosis`): a
damaged one is one line naming its field."""

from __future__ import annotations

import sys
from pathlib import Path

from tuner.model.capture import CapturePlan
from tuner.model.diagnosis import Diagnosis
from tuner.render.capture import read_capture
from tuner.render.diagnosis import read_diagnosis
from tuner.render.script import run_script

REQUESTS_TOLERANCE = 0.10
RECORDS_TOLERANCE = 0.05


def _plan(folder: Path) -> CapturePlan:
    """A capture's plan, read as every reader of capture.json reads it (its record held to what a
    capture can be)."""
    return read_capture(folder)[1]


def _brokers(diagnosis: Diagnosis, scale: float) -> dict[str, dict[str, float]]:
    """Per broker with produce requests: requests/s and records/s over `scale`, bytes per request."""
    out = {}
    for b in diagnosis.snapshot.brokers:
        req, byt, rec = b.produce_requests_per_s, b.bytes_in_per_s, b.messages_in_per_s
        if req is not None and req > 0 and byt is not None and rec is not None:
            out[b.broker] = {"requests": req / scale, "bytes": byt / req, "records": rec / scale}
    return out


def check_lines(out: Path) -> tuple[list[str], bool]:
    """The lines, and whether every broker's figures are within the tolerances."""
    plan, replay_plan = _plan(out / "capture"), _plan(out / "replay-capture")
    diagnoses = [out / "source-diagnosis.json", out / "replay-diagnosis.json"]
    source_diagnosis, replay_diagnosis = (read_diagnosis(path, str(path)) for path in diagnoses)
    source = _brokers(source_diagnosis, 1.0)
    replay = _brokers(replay_diagnosis, plan.scale)
    lines = [
        f"per broker, source -> replay (replay / scale {plan.scale:.4g}); within"
        f" {REQUESTS_TOLERANCE:.0%} (requests, bytes per request) and {RECORDS_TOLERANCE:.0%} (records):"
    ]
    ok = bool(source) and set(source) == set(replay)
    for broker in sorted(source):
        s, r = source[broker], replay.get(broker)
        if r is None:
            lines.append(f"  broker {broker}: no replay figures")
            continue
        offs = {k: (r[k] - s[k]) / s[k] if s[k] else float("inf") for k in ("requests", "bytes", "records")}
        good = (
            abs(offs["requests"]) <= REQUESTS_TOLERANCE
            and abs(offs["bytes"]) <= REQUESTS_TOLERANCE
            and abs(offs["records"]) <= RECORDS_TOLERANCE
        )
        ok = ok and good
        lines.append(
            f"  broker {broker}: produce requests/s {s['requests']:.1f} -> {r['requests']:.1f}"
            f" ({offs['requests']:+.1%}),"
            f" bytes/request {s['bytes']:.0f} -> {r['bytes']:.0f} ({offs['bytes']:+.1%}),"
            f" records/s {s['records']:.1f} -> {r['records']:.1f} ({offs['records']:+.1%})"
            f"  {'ok' if good else 'OUTSIDE'}"
        )
    lines.append(
        "groups, source capture | replay capture (kind, producers, records/s, requests/s, B/request):"
    )
    for side, groups in (("source", plan.groups), ("replay", replay_plan.groups)):
        for g in sorted(groups, key=lambda g: g.kind):
            lines.append(
                f"  {side}: {g.kind:<10} {g.producers:>3} producers"
                f"  {g.records_per_s:8.1f} records/s  {g.requests_per_s:7.1f} requests/s"
                f"  {g.bytes_per_request:7.0f} B/request  ({g.name})"
            )
    kinds = sorted(g.kind for g in plan.groups), sorted(g.kind for g in replay_plan.groups)
    ok = ok and kinds[0] == kinds[1]
    lines.append(f"same groups: {'yes' if kinds[0] == kinds[1] else 'no'} ({', '.join(kinds[0])})")
    return lines, ok


def main(argv: list[str]) -> int:
    def work() -> int:
        lines, ok = check_lines(Path(argv[0]))
        print("\n".join(lines))
        return 0 if ok else 1

    return run_script(len(argv) == 1, "python -m tuner.render.capture_check OUT", work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
