"""Source vs replay of a capture, the acceptance lines of scripts/bench_capture.sh:

    python -m tuner.render.capture_check OUT

OUT holds `source-diagnosis.json` and `replay-diagnosis.json` (`kbt diagnose --json` over the
capture's window on each lab) and `capture/` and `replay-capture/` (`kbt capture` of each). Per
broker: produce requests/s, bytes per request and records/s, the replay's divided by the capture's
lab scale; then each group of both captures side by side."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput
from tuner.core.inputs import read_text
from tuner.render.script import run_script

REQUESTS_TOLERANCE = 0.10
RECORDS_TOLERANCE = 0.05


def _load(path: Path) -> Any:
    try:
        return json.loads(read_text(path, "capture check input"))
    except ValueError:
        raise BadInput(f"{path}: not JSON") from None


def _brokers(diagnosis: Any, scale: float) -> dict[str, dict[str, float]]:
    out = {}
    for b in diagnosis["snapshot"]["brokers"]:
        req, byt, rec = b.get("produce_requests_per_s"), b.get("bytes_in_per_s"), b.get("messages_in_per_s")
        if req and byt is not None and rec is not None:
            out[b["broker"]] = {"requests": req / scale, "bytes": byt / req, "records": rec / scale}
    return out


def check_lines(out: Path) -> tuple[list[str], bool]:
    """The lines, and whether every broker's figures are within the tolerances."""
    plan = _load(out / "capture" / "capture.json")["plan"]
    replay_plan = _load(out / "replay-capture" / "capture.json")["plan"]
    source = _brokers(_load(out / "source-diagnosis.json"), 1.0)
    replay = _brokers(_load(out / "replay-diagnosis.json"), plan["scale"])
    lines = [
        f"per broker, source -> replay (replay / scale {plan['scale']:.4g}); within"
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
    for side, groups in (("source", plan["groups"]), ("replay", replay_plan["groups"])):
        for g in sorted(groups, key=lambda g: g["kind"]):
            lines.append(
                f"  {side}: {g['kind']:<10} {g['producers']:>3} producers"
                f"  {g['records_per_s']:8.1f} records/s  {g['requests_per_s']:7.1f} requests/s"
                f"  {g['bytes_per_request']:7.0f} B/request  ({g['name']})"
            )
    kinds = sorted(g["kind"] for g in plan["groups"]), sorted(g["kind"] for g in replay_plan["groups"])
    ok = ok and kinds[0] == kinds[1]
    lines.append(f"same groups: {'yes' if kinds[0] == kinds[1] else 'no'} ({', '.join(kinds[0])})")
    return lines, ok


def main(argv: list[str]) -> int:
    def work() -> int:
        try:
            lines, ok = check_lines(Path(argv[0]))
        except KeyError as exc:  # a file without a figure kbt writes
            raise BadInput(str(exc)) from None
        print("\n".join(lines))
        return 0 if ok else 1

    return run_script(len(argv) == 1, "python -m tuner.render.capture_check OUT", work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
