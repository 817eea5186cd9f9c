"""Safety on a shared cluster, checked before any load: the target's caps on msgs/s and bytes/s,
and a confirmation before sending to a cluster that is not on loopback (docs/targets.md)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from tuner.core.errors import BadInput
from tuner.spec.workload import WorkloadSpec as Workload
from tuner.target.base import Target


@dataclass(frozen=True)
class Offered:
    """The most a run offers: records/s and bytes/s (None: unbounded or not known)."""

    msgs_per_s: float | None
    bytes_per_s: float | None


def offered(workload: Workload) -> Offered:
    if workload.rate_per_producer == "max":
        return Offered(None, None)
    msgs = workload.producers * float(workload.rate_per_producer)
    size = workload.message.nominal_bytes  # the largest record, when the spec bounds it
    return Offered(msgs, msgs * size if size is not None else None)


def check_caps(target: Target, name: str, load: Offered) -> None:
    """BadInput (before anything is created) when a run would exceed the target's caps."""
    caps, unsized = target.limits, "its bytes/s is not bounded (rate max or records of unknown size)"
    for cap, offers, unit, unbounded in (
        (caps.max_msgs_per_s, load.msgs_per_s, "msgs/s", "rate 'max' is unbounded"),
        (caps.max_bytes_per_s, load.bytes_per_s, "B/s", unsized),
    ):
        if cap is not None and offers is None:
            raise BadInput(f"{name}: {unbounded}; {target.name} caps {cap:g} {unit}")
        if cap is not None and offers is not None and offers > cap:
            raise BadInput(f"{name}: offers {offers:g} {unit}, over {target.name}'s cap of {cap:g}")


def confirm_load(target: Target, summary: str, yes: bool) -> None:
    """Ask before sending load to a cluster that is not on loopback (`--yes` skips; without a
    terminal on stdin, refuse with one line)."""
    if target.loopback or yes:
        return
    if not sys.stdin.isatty():
        raise BadInput(f"{target.name} is not on loopback: refusing to send load without --yes ({summary})")
    sys.stderr.write(f"send {summary} to {target.name} ({target.bootstrap_servers})? [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise BadInput(f"{target.name}: not confirmed, nothing sent")
