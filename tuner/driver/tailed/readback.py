"""Read a tailed-pods run's topic back while it runs (real Filebeat, the collector): every event's
id, its intended write time and the broker's append time (the topic uses LogAppendTime, so the
record timestamp is when the leader appended it, which with acks 1 or all is the moment Filebeat's
batch was acknowledged). Delivery is judged by the one checker (tuner.driver.delivery.check): lost =
written - read back, duplicates, order.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from tuner.core.kafka_clients import Connection, new_consumer
from tuner.driver.delivery.check import Marks
from tuner.driver.latency_buckets import new_histogram

# The line the writer wrote: `<t_us> <pod>-<seq> ...`, as the event's `message` (JSON codec).
MESSAGE = re.compile(rb'"message":"(\d+) (\d+)-(\d+) ')
# The same line anywhere in a record that carries several (an OTLP export: the line is its body).
LINES = re.compile(rb"(\d{16}) (\d+)-(\d+) ")


@dataclass
class Tally:
    """What the read-back saw (delivery: the one checker's Marks, keyed (pod, seq)) and, for the
    events meant to be written inside the measured window, their bytes and latencies."""

    window: tuple[float, float]
    marks: Marks = field(default_factory=Marks)
    bytes_in_window: int = 0
    events_in_window: int = 0
    ack_us: HdrHistogram = field(default_factory=new_histogram)
    line: re.Pattern[bytes] = MESSAGE  # finds a line's id in a record (LINES: every line in it)

    def add(self, partition: int, value: bytes, timestamp: tuple[int, int]) -> None:
        found = list(self.line.finditer(value)) if self.line is LINES else [self.line.search(value)]
        if found == [None]:
            self.marks.see(partition, None)
            return
        for match in found:
            assert match is not None
            self._add_line(partition, match, len(value) // len(found), timestamp[1])

    def _add_line(self, partition: int, match: re.Match[bytes], size: int, ts_ms: int) -> None:
        t_us, pod, seq = int(match.group(1)), int(match.group(2)), int(match.group(3))
        if not self.marks.see(partition, (pod, seq)):
            return
        start, end = self.window
        if not start * 1e6 <= t_us < end * 1e6:
            return
        self.events_in_window += 1
        self.bytes_in_window += size
        self.ack_us.record_value(max(1, ts_ms * 1000 - t_us))


class ReadBack:
    """A consumer thread over every partition of `topic` from the beginning (the topic is fresh)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int,
        window: tuple[float, float],
        line: re.Pattern[bytes] = MESSAGE,
        security: Mapping[str, str] | None = None,  # the run's client security (librdkafka)
    ) -> None:
        from confluent_kafka import TopicPartition

        self.tally = Tally(window=window, line=line)
        self._consumer = new_consumer(
            Connection(bootstrap, security or {}),
            {
                "group.id": f"kbt-readback-{topic}",
                "enable.auto.commit": False,
                "enable.partition.eof": False,
                "fetch.wait.max.ms": 50,
            },
        )
        self._partitions = [TopicPartition(topic, p, 0) for p in range(partitions)]
        self._consumer.assign(self._partitions)
        self.caught_up = False  # set by close(): had the read reached every partition's end?
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, name="kbt-readback", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                batch = self._consumer.consume(num_messages=1000, timeout=0.2)
                with self._lock:
                    for msg in batch:
                        if msg.error() is not None or msg.value() is None:
                            continue
                        self.tally.add(msg.partition() or 0, msg.value() or b"", msg.timestamp())
        except Exception as exc:  # reported by the driver, never a thread traceback
            self.error = str(exc)

    def distinct(self) -> int:
        with self._lock:
            return self.tally.marks.distinct

    def wait_for(self, count: int, deadline: float) -> bool:
        """Until `count` distinct events were read back or the deadline (epoch seconds)."""
        while time.time() < deadline and self.error is None:
            if self.distinct() >= count:
                return True
            time.sleep(0.2)
        return self.distinct() >= count

    def close(self) -> Tally:
        self._stop.set()
        self._thread.join(timeout=10)
        self.caught_up = not self._thread.is_alive() and self._at_end()
        self._consumer.close()
        return self.tally

    def _at_end(self) -> bool:
        """Whether the consumer's position is at the high watermark of every partition (an event it
        did not read by then is not in the topic). Unknown counts as not at the end."""
        try:
            positions = self._consumer.position(self._partitions)
            for tp in positions:
                _, high = self._consumer.get_watermark_offsets(tp, timeout=10)
                if high > 0 and tp.offset < high:  # a partition never read has a negative position
                    return False
        except Exception:  # no answer: the read cannot be said to be complete
            return False
        return True
