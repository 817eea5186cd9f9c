"""A capture calibrated by its first replay: each group's linger inferred again so that the replay,
not the model, lands on the source's produce request rate (the model's error at the inferred linger
taken as a factor near it). `scripts/bench_capture.sh` runs a second replay from the result.

    python -m tuner.render.calibrate CAPTURE REPLAY_CAPTURE OUT

CAPTURE is a `kbt capture --out` directory of the source; REPLAY_CAPTURE one of the replay of its
sweeps (its groups' topics are the source's under kbt's `kbt-<topic>-r<i>-<stamp>` names, the
prefix not doubled); OUT gets
the calibrated capture, laid out as `kbt capture` writes one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.writes import atomic_write_all
from tuner.model.capture import CapturedGroup, CapturePlan, shape
from tuner.render.capture import RECORD_FILE, capture_files, read_capture
from tuner.render.script import run_script
from tuner.store.capture import CaptureRecord

# A replay off by more than this factor either way is not a model's error near a setting: a replay
# that did not run as planned (its notes say why) is not calibrated from.
MAX_FACTOR = 10.0


def _replayed(group: CapturedGroup, replay: CapturePlan) -> CapturedGroup | None:
    """The replay's group of the same kind writing the source group's topics under kbt's names."""
    # kbt adds its prefix to a topic's name unless the name has it already (a source that was
    # itself kbt's runs), then the run's `-r<i>-<stamp>`
    names = [re.compile(rf"^(?:kbt-)?{re.escape(t)}-r\d+-") for t in group.topics]
    found = [
        g for g in replay.groups if g.kind == group.kind and any(n.match(t) for n in names for t in g.topics)
    ]
    return found[0] if len(found) == 1 else None


def calibration(plan: CapturePlan, replay: CapturePlan) -> tuple[dict[str, float], list[str]]:
    """Per group with an inferred linger: the model's prediction at it over what the replay sent
    (both at the source's scale); and a line per group saying what was found."""
    factors: dict[str, float] = {}
    lines: list[str] = []
    for group in plan.groups:
        if group.linger_ms is None or not group.predicted_requests_per_s:
            lines.append(f"{group.name}: no linger inferred, nothing to calibrate")
            continue
        other = _replayed(group, replay)
        if other is None or other.requests_per_s <= 0:
            lines.append(
                f"{group.name}: not found once in the replay (kind {group.kind}, topics {group.topics})"
            )
            continue
        sent = other.requests_per_s / plan.scale  # the replay ran the source scaled by the plan
        factor = group.predicted_requests_per_s / sent
        if not 1 / MAX_FACTOR <= factor <= MAX_FACTOR:
            lines.append(
                f"{group.name}: the replay sent {sent:.4g} requests/s, {1 / factor:.3g}x the model:"
                " not calibrated from"
            )
            continue
        factors[group.name] = factor
        model = group.predicted_requests_per_s
        lines.append(
            f"{group.name}: source {group.requests_per_s:.4g} requests/s, model {model:.4g} at linger"
            f" {group.linger_ms:g} ms, replay {sent:.4g} ({sent / group.requests_per_s - 1:+.1%})"
        )
    return factors, lines


def calibrated(capture: Path, replay_capture: Path) -> tuple[CaptureRecord, CapturePlan, list[str]]:
    record, plan = read_capture(capture)
    _, replay = read_capture(replay_capture)
    if plan.options is None:
        raise BadInput(f"{capture / RECORD_FILE}: written before captures kept their options; capture again")
    factors, lines = calibration(plan, replay)
    new = shape(record, plan.options.model_copy(update={"calibration": factors}))
    for group in new.groups:
        if group.name in factors and group.linger_ms is None:  # the capture changed since its plan
            lines.append(f"{group.name}: no linger inferred at the calibrated rate")
        elif group.name in factors:
            lines.append(
                f"{group.name}: linger {group.linger_ms:g} ms for the replay to send the source's rate"
            )
    return record, new, lines


def main(argv: list[str]) -> int:
    def work() -> int:
        capture, replay, out = (Path(a) for a in argv)
        record, plan, lines = calibrated(capture, replay)
        atomic_write_all(capture_files(out, record, plan), "calibrated capture")
        print("\n".join(lines))
        print(f"calibrated capture: {out}")
        return 0

    return run_script(len(argv) == 3, "python -m tuner.render.calibrate CAPTURE REPLAY_CAPTURE OUT", work)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
