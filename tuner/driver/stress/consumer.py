"""Consumer groups for `kbt stress`, Meituan-style: one OS process per group, its members polled
with `consume(timeout=0)` on one loop.

- realtime: reads at the head; end-to-end latency = consumption time - record timestamp (the
  producer's CreateTime), tallied by the stage (and stage half) it was consumed in.
- lagging: reads data `lag_s` old, which on a tiered topic has moved to the remote tier. On each
  activation (per the plan: the second half of every stage under `lagging_readers: split`) it
  seeks to now - lag_s; when it catches up to within lag_s / 2 of the head it goes back to
  now - lag_s again (a backfill job re-reading minutes-old data), optionally throttled. Paused
  while inactive.

Lag (records behind the high watermark) comes from librdkafka statistics. Every second the process
sends its tally delta to the parent; figures are also exported for Prometheus (consumer_exporter).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from tuner.core.kafka_clients import Connection, new_consumer
from tuner.driver.latency_hist import Latency
from tuner.driver.stress.consumer_exporter import ConsumerExporter
from tuner.driver.stress.consumer_tally import GroupTally
from tuner.driver.stress.plan import StressPlan, lagging_active, second_half
from tuner.spec.workload import ConsumerGroupSpec

STATS_INTERVAL_MS = 1000
REPORT_EVERY_S = 1.0
BATCH = 500
IDLE_SLEEP_S = 0.002
END_GRACE_S = 3.0
E2E_WINDOW = 5000  # recent latencies behind the exported p50/p99


@dataclass(frozen=True)
class ConsumerTask:
    index: int
    group: ConsumerGroupSpec
    plan_json: str
    exporter_port: int | None = None


def group_id(plan: StressPlan, group: ConsumerGroupSpec) -> str:
    return f"kbt-stress-{plan.profile_label}-{group.name}-{plan.t0:.0f}"


class _Member:
    def __init__(self, loop: GroupLoop, n: int) -> None:
        self.loop = loop
        self.name = f"{loop.group.name}-{n}"
        self.lag = 0.0
        plan, group = loop.plan, loop.group
        self.consumer = new_consumer(
            Connection(plan.bootstrap_servers, plan.security_config()),
            {
                "group.id": group_id(plan, group),
                "client.id": f"kbt-{self.name}",
                "auto.offset.reset": "earliest",  # the topics are fresh: nothing is skipped
                "statistics.interval.ms": STATS_INTERVAL_MS,
                "stats_cb": self._on_stats,
                "enable.partition.eof": False,
            },
        )
        self.consumer.subscribe(plan.topics, on_assign=self._on_assign)

    def _on_stats(self, raw: str) -> None:
        topics = json.loads(raw).get("topics", {}).values()
        parts = [part for topic in topics for part in topic.get("partitions", {}).values()]
        # librdkafka's internal partition (-1) and an unknown lag (-1) count nothing
        lags = [int(p.get("consumer_lag", -1)) for p in parts if int(p.get("partition", -1)) >= 0]
        self.lag = float(sum(lag for lag in lags if lag > 0))
        self.loop.lag_sample(self, self.lag)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if self.loop.group.mode != "lagging":
            return
        if self.loop.active:
            consumer.assign(self.loop.offsets_behind(consumer, partitions))
        else:
            consumer.assign(partitions)
            consumer.pause(partitions)


class GroupLoop:
    def __init__(self, task: ConsumerTask, updates: Queue[Any]) -> None:
        self.task = task
        self.plan = StressPlan.model_validate_json(task.plan_json)
        self.group = task.group
        self.updates = updates
        self.tally = GroupTally()
        self.active = self.group.mode == "realtime"
        self.exporter: ConsumerExporter | None = None
        if task.exporter_port is not None:
            exporter = ConsumerExporter(self.plan.run_id, self.group.name, self.group.mode)
            self.exporter = exporter.served(task.exporter_port)
        self.members = [_Member(self, n) for n in range(self.group.consumers)]
        self.recent: deque[float] = deque(maxlen=E2E_WINDOW)
        self.budget_at = time.time()
        self.budget = 0.0

    # ---- where we are on the timeline ------------------------------------------------------------

    def position(self, now: float) -> tuple[int, int, bool]:
        """(stage index, half, lagging readers active) at `now`."""
        stage = self.plan.stage_at(now)
        index = self.plan.stage_index_at(now)
        t_in = now - self.plan.t0 - (stage.start_s if stage else 0.0)
        half = 1 if stage is not None and second_half(stage, t_in) else 0
        return index, half, lagging_active(stage, t_in)

    def lag_sample(self, member: _Member, lag: float) -> None:
        stage, half, _ = self.position(time.time())
        tally = self.tally.half(stage, half)
        tally.lag_sum += lag
        tally.lag_samples += 1
        tally.lag_max = max(tally.lag_max, lag)
        if self.exporter is not None:
            self.exporter.set_lag(member.name, lag)

    # ---- lagging readers ---------------------------------------------------------------------------

    def offsets_behind(self, consumer: Consumer, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """Each partition at the first record written lag_s ago (the end when none is that old)."""
        lag_s = self.group.lag_s or 0.0
        at_ms = int((time.time() - lag_s) * 1000)
        wanted = [TopicPartition(tp.topic, tp.partition, at_ms) for tp in partitions]
        try:
            return list(consumer.offsets_for_times(wanted, timeout=10))
        except KafkaException:
            return partitions

    def _rewind(self, member: _Member, partitions: list[TopicPartition]) -> None:
        for tp in self.offsets_behind(member.consumer, partitions):
            if tp.offset >= 0:
                try:
                    member.consumer.seek(tp)
                except KafkaException:
                    continue  # not fetching yet: the next record triggers another try
        self.tally.half(*self.position(time.time())[:2]).rewinds += 1
        if self.exporter is not None:
            self.exporter.rewound()

    def _set_active(self, active: bool) -> None:
        if active == self.active:
            return
        self.active = active
        for member in self.members:
            assignment = member.consumer.assignment()
            if not assignment:
                continue
            if active:
                self._rewind(member, assignment)
                member.consumer.resume(assignment)
            else:
                member.consumer.pause(assignment)
        if self.exporter is not None:
            self.exporter.set_active(active)

    def _throttled(self, now: float) -> bool:
        cap = self.plan.lagging_max_msgs_per_s
        if cap is None or self.group.mode != "lagging":
            return False
        self.budget = min(cap, self.budget + (now - self.budget_at) * cap)
        self.budget_at = now
        return self.budget < 1

    # ---- the loop ------------------------------------------------------------------------------

    def run(self, stop: Event) -> None:
        next_report = time.time() + REPORT_EVERY_S
        end = self.plan.end + END_GRACE_S
        last = time.time()
        while time.time() < end and not stop.is_set():
            now = time.time()
            stage, half, lagging = self.position(now)
            if self.group.mode == "lagging":
                self._set_active(lagging and now >= self.plan.t0)
                if self.active:
                    self.tally.half(stage, half).active_s += now - last
            last = now
            got = 0
            for member in self.members:
                if self._throttled(now):
                    break
                got += self._consume(member, stage, half)
            if now >= next_report:
                self._report()
                next_report = now + REPORT_EVERY_S
            if got == 0:
                time.sleep(IDLE_SLEEP_S)
        self._report()
        for member in self.members:
            with contextlib.suppress(KafkaException, RuntimeError):
                member.consumer.close()

    def _consume(self, member: _Member, stage: int, half: int) -> int:
        msgs = member.consumer.consume(num_messages=BATCH, timeout=0)
        if not msgs:
            return 0
        now = time.time()
        tally = self.tally.half(stage, half)
        realtime = self.group.mode == "realtime"
        lag_s = self.group.lag_s or 0.0
        good = [msg for msg in msgs if msg.error() is None]
        count, size = len(good), sum(len(msg.value() or b"") for msg in good)
        stale: dict[tuple[str, int], TopicPartition] = {}
        for msg in good:
            age = now - msg.timestamp()[1] / 1000.0
            if realtime:
                tally.e2e.add_s(max(age, 0.0))
                self.recent.append(max(age, 0.0))
            else:
                tally.age_s_sum += age
                if age < lag_s / 2:  # caught up: go back lag_s
                    key = (msg.topic() or "", msg.partition() or 0)
                    stale[key] = TopicPartition(key[0], key[1])
        tally.records += count
        tally.bytes += size
        self.budget -= count
        if stale:
            self._rewind(member, list(stale.values()))
        if self.exporter is not None:
            self.exporter.consumed(member.name, count, size)
            if not realtime and count:
                self.exporter.set_age(age)
        return count

    def _report(self) -> None:
        if self.exporter is not None and self.recent:
            recent = Latency()
            for age_s in self.recent:
                recent.add_s(age_s)
            self.exporter.set_e2e(recent.percentile_ms(50) or 0.0, recent.percentile_ms(99) or 0.0)
        self.updates.put(("update", self.task.index, self.tally.take_delta()))


def consumer_main(task: ConsumerTask, updates: Queue[Any], ready: Queue[Any], stop: Event) -> None:
    """Process entry point (multiprocessing spawn). Ctrl-C is the parent's business: it sets
    `stop`, so this process ignores SIGINT and ends its loop cleanly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        loop = GroupLoop(task, updates)
        ready.put(task.index)
        loop.run(stop)
        updates.put(("done", task.index, {}))
    except Exception as exc:  # reported to the parent as one line
        updates.put(("error", task.index, f"{type(exc).__name__}: {exc}"))
    finally:
        for q in (updates, ready):  # let the queues' feeder threads deliver what was put
            q.close()
            q.join_thread()
        os._exit(0)  # librdkafka threads must not keep the process alive
