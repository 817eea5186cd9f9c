"""What every kbt producer inside locust shares (`kbt stress` and the plain locust file).

- `ProcessShare`: one locust process's share: its worker index, the payload pool (built once per
  process), the producer numbering (`worker << WORKER_SHIFT | the user's number in its process`).
- `OpenLoopProducer` (abstract): one confluent-kafka producer ("pod") per locust user on an open
  loop: record `seq` is due at `start_at + seq * interval` (late records are sent at once, so a
  generator behind its schedule shows as latency, never as a lower offered rate), or bursts when
  the interval is 0 (rate `max`); the schedule ends at `end`. Each record is a pool event stamped
  with its id (`pid << ID_SHIFT | seq`); only `poll(0)` on the user's greenlet, never a blocking
  call. Delivery reports fire one locust request event each, timed from the intended send time.
- `drain`: serve delivery reports without blocking the other greenlets, bounded.

Import only inside locust processes (importing locust monkey-patches the process for gevent).
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Sequence

import gevent
from confluent_kafka import KafkaError, KafkaException, Message, Producer
from locust import User, task
from locust.env import Environment
from locust.runners import WorkerRunner

from tuner.driver.payload import ID_SHIFT, SEQ_MASK, WORKER_SHIFT, Payloads, build_pool, id_of
from tuner.spec.workload import WorkloadSpec

BURST = 100  # rate max: records between polls
MAX_SLEEP_S = 0.005
IDLE_SLEEP_S = 0.05  # after the schedule's end: serve the last delivery reports until stopped
DRAIN_POLL_S = 0.01


class ProcessShare:
    """What the producer users of one locust process share."""

    def __init__(self) -> None:
        self.pool: list[bytes] | None = None
        self.counter = itertools.count()

    @staticmethod
    def worker_index(environment: Environment) -> int:
        runner = environment.runner
        return max(0, int(getattr(runner, "worker_index", 0))) if isinstance(runner, WorkerRunner) else 0

    def slot(self, environment: Environment, workload: WorkloadSpec) -> tuple[int, int, list[bytes]]:
        """A new user's worker index, producer id and the process's payload pool (built once)."""
        worker = self.worker_index(environment)
        if self.pool is None:
            self.pool = build_pool(workload, seed=worker + 1)
        return worker, (worker << WORKER_SHIFT) | (next(self.counter) & ((1 << WORKER_SHIFT) - 1)), self.pool


class OpenLoopProducer(User):
    """One producer on the open-loop schedule `schedule()` sets (from the subclass's `on_start`)."""

    abstract = True
    producer: Producer
    pid: int
    interval: float
    start_at: float

    def schedule(
        self, producer: Producer, pid: int, pool: list[bytes], workload: WorkloadSpec, topics: Sequence[str],
        interval: float, start_at: float, end: float = float("inf"),
    ) -> None:  # fmt: skip
        """Produce `workload`'s events from `pool` to `topics` (round robin by sequence), one record
        every `interval` seconds from `start_at` (0: bursts) until `end`."""
        self.producer = producer
        self.pid = pid
        self.interval = interval
        self.start_at = start_at
        self.end = end
        self.topics = list(topics)
        self.payloads = Payloads(pool, workload.keys, random.Random(pid))
        self.offset = random.randrange(len(pool))  # users start at different pool events
        self.seq = 0

    # ---- hooks -------------------------------------------------------------------------------------

    def on_sent(self, due: float, now: float) -> None:
        """Record `seq` went to the producer's queue (due at `due`, sent at `now`)."""

    # ---- the loop ----------------------------------------------------------------------------------

    def _send(self, seq: int, due: float, now: float) -> bool:
        pool = self.payloads.pool
        event = pool[(self.offset + seq) % len(pool)]
        key, value = self.payloads.stamped(event, self.pid << ID_SHIFT | seq)
        try:
            self.producer.produce(self.topics[seq % len(self.topics)], value, key)
        except BufferError:  # local queue full: serve callbacks, retry on the next turn
            return False
        self.on_sent(due, now)
        return True

    @task
    def produce(self) -> None:
        producer, interval, end = self.producer, self.interval, self.end
        while True:
            now = time.time()
            due = self.start_at + self.seq * interval if interval > 0 else now
            if due >= end:
                producer.poll(0)
                gevent.sleep(IDLE_SLEEP_S)
            elif interval > 0:  # every record due by now (and before the end), late ones too
                while due <= now and due < end and self._send(self.seq, due, now):
                    self.seq += 1
                    due = self.start_at + self.seq * interval
                producer.poll(0)
                gevent.sleep(min(MAX_SLEEP_S, max(0.0, due - time.time())))
            else:
                for _ in range(BURST):
                    if not self._send(self.seq, now, now):
                        break
                    self.seq += 1
                producer.poll(0)
                gevent.sleep(0)

    # ---- delivery reports (from poll(0) on this greenlet) ------------------------------------------

    def record_of(self, msg: Message) -> tuple[int, float] | None:
        """The delivered record's id and its intended send time (None: not one of kbt's records)."""
        ident = id_of(msg.value() or b"")
        if ident is None:
            return None
        rid = int(ident, 16)
        return rid, self.start_at + (rid & SEQ_MASK) * self.interval

    def fire(self, name: str, latency_s: float, size: int, err: KafkaError | None) -> None:
        """One locust request event for a delivery report."""
        self.environment.events.request.fire(
            request_type="produce", name=name, response_time=latency_s * 1000,
            response_length=size if err is None else 0,
            exception=None if err is None else KafkaException(err), context={},
        )  # fmt: skip


def drain(producers: Sequence[Producer], pending: Callable[[], int], deadline: float) -> None:
    """Serve delivery reports (poll(0) + gevent sleeps) until nothing is `pending` or the deadline."""
    while pending() and time.time() < deadline:
        for producer in producers:
            producer.poll(0)
        gevent.sleep(DRAIN_POLL_S)


__all__ = ["OpenLoopProducer", "ProcessShare", "drain"]
