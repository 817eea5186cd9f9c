"""Where a local broker's network threads spend their time, read from the kernel beside Kafka's meter.

Kafka's NetworkProcessorAvgIdlePercent is the share of time a network thread waits in select. Time
it is not in select can be three different things, and only the kernel tells them apart:

- its own work (CPU time: /proc/<pid>/task/<tid>/schedstat, first field);
- blocked: asleep on a futex, which for a network thread under load is the put into a full request
  queue (ArrayBlockingQueue.put parks on a condition; a sample of `wchan` reads futex_*);
- runqueue wait: runnable but waiting for a core (schedstat, second field): host contention, which
  the idle meter also counts as busy.

The request handlers are sampled the same way, with one more state: uninterruptible sleep (D),
waiting for the disk. What remains of their busy time is off CPU inside a request (parked: the
pressure lab's stated service time, or a lock).

A ThreadSampler reads schedstat once a second and each thread's state and wchan every
`tick_s` (cheap: three small /proc reads a thread), plus host CPU (/proc/stat) and the load average,
and `figures(start, end)` turns the samples inside a window into a ThreadWindow. Kafka names its
threads in Java and the kernel keeps 15 characters ("data-plane-kafk" for network threads and
request handlers alike), so thread ids are matched to names once with `jcmd <pid> Thread.print`.
Linux only; a broker that is not a local process (another cluster) has no ThreadWindow.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tuner.core.broker_figures import ThreadTime, ThreadWindow

NETWORK_THREAD = "data-plane-kafka-network-thread-"
HANDLER_THREAD = "data-plane-kafka-request-handler-"
_DUMP_LINE = re.compile(r'^"([^"]+)".*?nid=0x([0-9a-f]+)', re.MULTILINE)
SCHEDSTAT_EVERY_S = 1.0
TICK_S = 0.05


def thread_ids(pid: int, prefixes: tuple[str, ...] = (NETWORK_THREAD, HANDLER_THREAD)) -> dict[str, int]:
    """Java thread name -> kernel thread id for the threads whose names start with `prefixes`
    (empty when jcmd is missing or the JVM does not answer)."""
    jcmd = shutil.which("jcmd")
    if jcmd is None:
        return {}
    try:
        out = subprocess.run(
            [jcmd, str(pid), "Thread.print"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return {name: int(nid, 16) for name, nid in _DUMP_LINE.findall(out) if name.startswith(prefixes)}


@dataclass
class _Counters:
    t: float
    sched: dict[str, tuple[int, int]]  # name -> (run ns, runqueue wait ns)
    host_busy: int
    host_total: int
    load: float


@dataclass
class _State:
    t: float
    states: dict[str, str]  # name -> select | blocked | disk | running | other


def _classify(task: Path) -> str:
    stat = task.joinpath("stat").read_text()
    state = stat[stat.rindex(")") + 2]
    if state == "R":
        return "running"
    if state == "D":
        return "disk"
    wchan = task.joinpath("wchan").read_text()
    if "epoll" in wchan or "poll" in wchan or "select" in wchan:
        return "select"
    if "futex" in wchan:
        return "blocked"
    return "other"


def _host() -> tuple[int, int]:
    cpu = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = cpu[3] + cpu[4]  # idle + iowait
    return sum(cpu) - idle, sum(cpu)


@dataclass
class ThreadSampler:
    """Samples the named threads of process `pid` from a background thread until `stop()`."""

    pid: int
    tids: dict[str, int]
    tick_s: float = TICK_S
    counters: list[_Counters] = field(default_factory=list)
    states: list[_State] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def for_broker(cls, pid: int) -> ThreadSampler | None:
        """A sampler of the broker's network and handler threads, or None when they cannot be found
        (no jcmd, not Linux, the process gone)."""
        if not Path(f"/proc/{pid}/task").is_dir():
            return None
        tids = thread_ids(pid)
        if not any(name.startswith(NETWORK_THREAD) for name in tids):
            return None
        return cls(pid, tids)

    def _task(self, tid: int) -> Path:
        return Path(f"/proc/{self.pid}/task/{tid}")

    def _read_counters(self) -> _Counters:
        sched = {}
        for name, tid in self.tids.items():
            run_ns, wait_ns, _ = self._task(tid).joinpath("schedstat").read_text().split()
            sched[name] = (int(run_ns), int(wait_ns))
        busy, total = _host()
        return _Counters(time.time(), sched, busy, total, os.getloadavg()[0])

    def _loop(self) -> None:
        next_counters = 0.0
        while not self._stop.is_set():
            try:
                now = time.monotonic()
                if now >= next_counters:
                    self.counters.append(self._read_counters())
                    next_counters = now + SCHEDSTAT_EVERY_S
                states = {name: _classify(self._task(tid)) for name, tid in self.tids.items()}
                self.states.append(_State(time.time(), states))
            except (OSError, ValueError, IndexError):
                return  # the broker went away: keep what was sampled
            self._stop.wait(self.tick_s)

    def start(self) -> ThreadSampler:
        self._thread = threading.Thread(target=self._loop, name="kbt-thread-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def figures(self, start: float, end: float) -> ThreadWindow | None:
        """The window [start, end] from the samples inside it (None: fewer than two counter reads)."""
        inside = [c for c in self.counters if start <= c.t <= end]
        if len(inside) < 2:
            return None
        a, b = inside[0], inside[-1]
        span = max(b.t - a.t, 1e-9)
        states = [s for s in self.states if start <= s.t <= end]
        times = []
        for name in sorted(self.tids, key=_thread_order):
            seen = [s.states[name] for s in states if name in s.states]
            n = max(len(seen), 1)
            times.append(
                ThreadTime(
                    name=name,
                    cpu=(b.sched[name][0] - a.sched[name][0]) / 1e9 / span,
                    runqueue_wait=(b.sched[name][1] - a.sched[name][1]) / 1e9 / span,
                    in_select=seen.count("select") / n,
                    blocked=seen.count("blocked") / n,
                    disk=seen.count("disk") / n,
                    running=seen.count("running") / n,
                    samples=len(seen),
                )
            )
        return ThreadWindow(
            start=start,
            end=end,
            network=[t for t in times if t.name.startswith(NETWORK_THREAD)],
            handlers=[t for t in times if t.name.startswith(HANDLER_THREAD)],
            host_cpu_busy=(b.host_busy - a.host_busy) / max(1, b.host_total - a.host_total),
            host_cores=os.cpu_count(),
            load_avg_1m=sum(c.load for c in inside) / len(inside),
        )


def _thread_order(name: str) -> tuple[str, int]:
    """Threads by name with their trailing number numerically (handler-2 before handler-10)."""
    match = re.search(r"(\d+)$", name)
    return (name[: match.start()], int(match.group(1))) if match else (name, -1)
