"""Start, watch and stop the consumer group processes of one stress run."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue
import time
from typing import Any

from tuner.core.errors import KbtError
from tuner.driver.stress.consumer import ConsumerTask, consumer_main
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.driver.stress.plan import StressPlan

READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0


class ConsumerPool:
    """One process per consumer group in the plan; `tallies` holds what each group reported."""

    def __init__(self, plan: StressPlan) -> None:
        self.plan = plan
        self.ctx = mp.get_context("spawn")  # never fork a process holding librdkafka threads
        self.updates: Any = self.ctx.Queue()
        self.ready: Any = self.ctx.Queue()
        self.stop_event = self.ctx.Event()
        self.tasks = [
            ConsumerTask(
                index=i,
                group=group,
                plan_json=plan.model_dump_json(),
                exporter_port=plan.consumer_ports[i] if i < len(plan.consumer_ports) else None,
            )
            for i, group in enumerate(plan.groups)
        ]
        self.procs: list[Any] = []
        self.tallies: dict[str, GroupTally] = {g.name: GroupTally() for g in plan.groups}
        self.done: set[int] = set()

    def start(self) -> None:
        """Start every group and wait until each has subscribed (bounded)."""
        for task in self.tasks:
            proc = self.ctx.Process(
                target=consumer_main,
                args=(task, self.updates, self.ready, self.stop_event),
                name=f"kbt-consumer-{task.group.name}",
                daemon=True,
            )
            proc.start()
            self.procs.append(proc)
        seen = 0
        deadline = time.monotonic() + READY_TIMEOUT_S
        while seen < len(self.tasks):
            self.poll()
            try:
                self.ready.get(timeout=0.5)
                seen += 1
            except queue.Empty:
                dead = [p for p in self.procs if p.exitcode is not None]
                if dead:
                    self.poll()
                    raise KbtError(f"consumer process {dead[0].name} exited before it was ready") from None
                if time.monotonic() > deadline:
                    raise KbtError(f"consumer groups not ready after {READY_TIMEOUT_S:g} s") from None

    def poll(self) -> None:
        """Merge every report waiting; a group's error becomes a KbtError."""
        while True:
            try:
                kind, index, payload = self.updates.get_nowait()
            except queue.Empty:
                return
            name = self.tasks[index].group.name
            if kind == "error":
                raise KbtError(f"consumer group {name} failed: {payload}")
            if kind == "done":
                self.done.add(index)
            elif payload:
                self.tallies[name].merge(GroupTally.from_wire(payload))

    def wait(self, timeout_s: float) -> bool:
        """Wait for every group to finish by itself (they end at the plan's end); True when all did."""
        deadline = time.monotonic() + timeout_s
        while len(self.done) < len(self.tasks) and time.monotonic() < deadline:
            self.poll()
            if all(p.exitcode is not None for p in self.procs):
                self.poll()
                break
            time.sleep(0.2)
        return len(self.done) >= len(self.tasks)

    def stop(self) -> None:
        """Ask every group to stop, collect their last reports, then make sure they are gone."""
        self.stop_event.set()
        with contextlib.suppress(KbtError):
            self.wait(STOP_GRACE_S)
        for proc in self.procs:
            proc.join(timeout=max(0.1, STOP_GRACE_S / 2))
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=2)
