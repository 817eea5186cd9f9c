"""Packet loss with `tc netem`, when the kernel has it.

Many kernels (this project's CI among them) ship without the sch_netem qdisc: `netem_status()`
finds out without touching the host's network (it probes inside a private network namespace) and
says why, so the scenario is skipped with that reason. Where netem exists, `netem_loss` puts a prio
qdisc on the loopback device whose fourth band drops packets, and steers only the lab's broker ports
into that band; everything else on loopback passes untouched. It refuses to replace a qdisc that is
already there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tuner.core.errors import EnvironmentProblem

UNKNOWN_QDISC = "Specified qdisc kind is unknown"
DEVICE = "lo"


def _run(cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=20)


def netem_status() -> tuple[bool, str]:
    """(True, "") when `tc netem` can be used here, else (False, the reason in one line)."""
    tc = shutil.which("tc")
    if tc is None:
        return False, "tc (iproute2) is not installed"
    if os.geteuid() != 0:
        return False, "tc netem needs root (CAP_NET_ADMIN) to shape the loopback device"
    unshare = shutil.which("unshare")
    if unshare is not None:  # a throw-away network namespace: the host's loopback is not touched
        probe = _run([unshare, "-n", tc, "qdisc", "add", "dev", DEVICE, "root", "netem", "delay", "1ms"])
        if probe.returncode == 0:
            return True, ""
        if UNKNOWN_QDISC in probe.stderr:
            return False, f"tc netem is not available on this kernel (sch_netem missing: '{UNKNOWN_QDISC}')"
    if Path("/sys/module/sch_netem").exists() or _run(["modinfo", "sch_netem"]).returncode == 0:
        return True, ""
    return False, "tc netem is not available on this kernel (no sch_netem module)"


def netem_commands(ports: Sequence[int], percent: float) -> list[list[str]]:
    """The tc commands that drop `percent`% of packets to and from `ports` on loopback only."""
    priomap = ["1", "2", "2", "2", "1", "2", "0", "0", "1", "1", "1", "1", "1", "1", "1", "1"]  # bands 0-2
    cmds = [
        ["tc", "qdisc", "add", "dev", DEVICE, "root", "handle", "1:", "prio", "bands", "4",
         "priomap", *priomap],
        ["tc", "qdisc", "add", "dev", DEVICE, "parent", "1:4", "handle", "40:", "netem", "loss",
         f"{percent:g}%"],
    ]  # fmt: skip
    for port in ports:
        for field in ("sport", "dport"):
            cmds.append(
                ["tc", "filter", "add", "dev", DEVICE, "parent", "1:0", "protocol", "ip", "prio", "1",
                 "u32", "match", "ip", field, str(port), "0xffff", "flowid", "1:4"]
            )  # fmt: skip
    return cmds


@contextmanager
def netem_loss(ports: Sequence[int], percent: float) -> Iterator[None]:
    available, why = netem_status()
    if not available:
        raise EnvironmentProblem(why)
    current = _run(["tc", "qdisc", "show", "dev", DEVICE]).stdout
    if current.strip() and "noqueue" not in current:
        raise EnvironmentProblem(f"{DEVICE} already has a qdisc ({current.split()[1]}); not replacing it")
    try:
        for cmd in netem_commands(ports, percent):
            out = _run(cmd)
            if out.returncode != 0:
                raise EnvironmentProblem(f"{' '.join(cmd[:6])} failed: {out.stderr.strip()[:200]}")
        yield
    finally:
        _run(["tc", "qdisc", "del", "dev", DEVICE, "root", "handle", "1:"])
