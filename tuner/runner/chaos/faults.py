"""The hands of a chaos run: find the leader, kill / bounce / pause brokers, add toxics, lock the
remote tier, wait for the ISR to heal, and put everything back afterwards.

A `FaultContext` lives for one run. Its fault script runs in a thread beside the load; every wait is
bounded by the run's deadline and by a stop event (Ctrl-C), and `restore()` undoes whatever the
script left (restart killed brokers, resume paused ones, remove toxics, unlock directories).
Control traffic (metadata, watermarks, reads during the fault) uses the lab's direct listeners, so
a network fault never blinds the script.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import ConfigResource

from tuner.core.errors import KbtError
from tuner.core.kafka_clients import Connection, admin_client, new_consumer, outcome, served
from tuner.lab import Lab, LabState, load_state
from tuner.lab import faults as lab_faults
from tuner.lab.health import silent_logger
from tuner.lab.toxiproxy import STREAMS, Toxiproxy, proxy_name
from tuner.store.fault import FaultEvent

REPLICA_LAG_DEFAULT_MS = 30000
METADATA_TIMEOUT_S = 5.0


class Stopped(Exception):
    """The fault script must end now (deadline reached, load over, run interrupted): str() says why."""


class FaultContext:
    def __init__(self, lab_dir: Path, topics: list[str], min_isr: int, stop: threading.Event) -> None:
        self.lab_dir = Path(lab_dir)
        self.lab = Lab.at(self.lab_dir)
        self.state: LabState = load_state(self.lab_dir)
        self.topics = topics
        self.topic = topics[0]
        self.min_isr = min_isr
        self.stop = stop
        self.events: list[FaultEvent] = []
        self.t0 = time.time()  # reset to the first record's arrival by wait_for_load()
        self.deadline = float("inf")
        # What the script left to undo: changed and undone by the script's thread alone.
        self.dead: set[int] = set()  # brokers this run stopped and must start again
        self.paused: set[int] = set()
        self.locked: list[Path] = []
        self.toxics: list[tuple[str, str]] = []  # (proxy, toxic name)
        self.lock = threading.Lock()  # the events: noted by the script and by the load's hold
        self.on_note: Callable[[float, str], None] | None = None  # progress display
        self.admin = admin_client(self.connection, self._conf({"socket.timeout.ms": 5000}))
        config = self.state.config
        self.proxy = Toxiproxy(config.toxiproxy_api_port) if config.via_toxiproxy else None

    @property
    def connection(self) -> Connection:
        """The lab's direct listeners (around any proxy), for kbt's own clients."""
        return Connection(self.state.direct_bootstrap_servers)

    def _conf(self, extra: dict[str, Any]) -> dict[str, Any]:
        return {"logger": silent_logger("kbt.chaos.client"), **extra}

    # ---- time ----------------------------------------------------------------------------------
    def now(self) -> float:
        return time.time() - self.t0

    def note(self, what: str) -> None:
        event = FaultEvent(at_s=round(self.now(), 1), what=what)
        with self.lock:
            self.events.append(event)
        if self.on_note is not None:
            self.on_note(event.at_s, what)

    def wait(self, seconds: float) -> None:
        """Sleep, unless the run is stopping or the deadline comes first (then raise Stopped)."""
        end = min(time.time() + seconds, self.deadline)
        if self.stop.wait(max(0.0, end - time.time())):
            raise Stopped("stopped: the load ended or the run was interrupted")
        if time.time() >= self.deadline:
            raise Stopped("cut short: the load reached its longest allowed duration")

    def wait_until(self, predicate: Callable[[], Any], timeout_s: float) -> Any:
        """Poll `predicate` (every second) until truthy; returns its value, or None after `timeout_s`."""
        end = time.time() + timeout_s
        while True:
            value = predicate()
            if value:
                return value
            if time.time() >= end:
                return None
            self.wait(min(1.0, max(0.05, end - time.time())))

    def wait_for_load(self, timeout_s: float, duration_s: float) -> None:
        """Block until records reach the topic; from then on times are relative to that moment."""
        end = time.monotonic() + timeout_s
        while self.high_watermarks_total() <= 0:
            if self.stop.wait(0.5):
                raise Stopped("stopped before any record reached the topic")
            if time.monotonic() > end:
                raise Stopped(f"no record reached the topic within {timeout_s:.0f} s")
        self.t0 = time.time()
        self.deadline = self.t0 + duration_s
        self.note("records are flowing")

    # ---- cluster views ---------------------------------------------------------------------------
    def _partitions(self) -> dict[int, Any]:
        # the admin client's logger gets librdkafka's lines only when it is polled: served at each
        # look (the ISR watch's, once a second), they no longer queue for the whole run
        served(self.admin)
        meta = self.admin.list_topics(self.topic, timeout=METADATA_TIMEOUT_S)
        return dict(meta.topics[self.topic].partitions)

    def leader(self, partition: int = 0) -> int:
        found = self.wait_until(lambda: self._safe(lambda: self._partitions()[partition].leader), 30)
        if found is None or found < 0:
            raise Stopped("partition 0 has no leader")
        return int(found)

    def in_sync(self) -> bool:
        replicas = self._safe(self._partitions)
        return bool(replicas) and all(len(p.isrs) == len(p.replicas) for p in replicas.values())

    def under_min_isr(self) -> int | None:
        """Partitions of the run's topic with fewer in-sync replicas than min.insync.replicas (or no
        leader): writes with acks=all cannot succeed there. None when the metadata did not answer."""
        replicas = self._safe(self._partitions)
        if replicas is None:
            return None
        return sum(1 for p in replicas.values() if p.leader < 0 or len(p.isrs) < self.min_isr)

    def high_watermarks_total(self) -> int:
        consumer = new_consumer(
            self.connection, self._conf({"group.id": f"kbt-chaos-{uuid.uuid4().hex[:8]}"})
        )
        try:
            total = 0
            for partition in self._safe(self._partitions) or {}:
                _low, high = consumer.get_watermark_offsets(
                    TopicPartition(self.topic, partition), timeout=METADATA_TIMEOUT_S
                )
                total += high
            return total
        except KafkaException:
            return 0
        finally:
            consumer.close()

    def replica_lag_max_ms(self, node: int) -> int:
        """replica.lag.time.max.ms as broker `node` runs it."""
        resource = ConfigResource(ConfigResource.Type.BROKER, str(node))
        served(self.admin)
        try:
            futures = self.admin.describe_configs([resource], request_timeout=METADATA_TIMEOUT_S)
            entries = outcome(next(iter(futures.values())), METADATA_TIMEOUT_S + 1, f"describe broker {node}")
            return int(entries["replica.lag.time.max.ms"].value)
        except (KbtError, KeyError, ValueError):  # no answer in time was a TimeoutError traceback
            return REPLICA_LAG_DEFAULT_MS

    @staticmethod
    def _safe(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (KafkaException, KeyError):
            return None

    def wait_in_sync(self, timeout_s: float = 120.0) -> None:
        started = time.time()
        if self.wait_until(self.in_sync, timeout_s):
            self.note(f"every replica back in sync after {time.time() - started:.0f} s")
        else:
            self.note(f"replicas still out of sync after {timeout_s:.0f} s")

    # ---- brokers ----------------------------------------------------------------------------------
    def _refresh(self) -> LabState:
        self.state = load_state(self.lab_dir)
        return self.state

    def kill(self, node: int, sig: signal.Signals = signal.SIGKILL, why: str = "") -> None:
        pid = lab_faults.signal_broker(self._refresh(), node, sig)
        self.dead.add(node)
        self.note(f"{sig.name} broker {node}{' (' + why + ')' if why else ''}")
        if not lab_faults.wait_exited(pid, 90 if sig == signal.SIGTERM else 15):
            lab_faults.signal_broker(self._refresh(), node, signal.SIGKILL)
            lab_faults.wait_exited(pid, 15)
            self.note(f"broker {node} did not stop on {sig.name}: SIGKILL")
        elif sig == signal.SIGTERM:
            self.note(f"broker {node} shut down cleanly")

    def start(self, node: int) -> None:
        self.lab.start_broker(node)
        self.dead.discard(node)
        self.note(f"broker {node} started again")

    def pause(self, node: int) -> None:
        lab_faults.signal_broker(self._refresh(), node, signal.SIGSTOP)
        self.paused.add(node)
        self.note(f"SIGSTOP broker {node}")

    def resume(self, node: int) -> None:
        lab_faults.signal_broker(self._refresh(), node, signal.SIGCONT)
        self.paused.discard(node)
        self.note(f"SIGCONT broker {node}")

    def other_brokers(self, *exclude: int) -> list[int]:
        return [b.id for b in self.state.brokers if b.id not in exclude]

    # ---- network (Toxiproxy) ---------------------------------------------------------------------
    def toxic(self, kind: str, attributes: dict[str, Any], nodes: list[int] | None = None,
              streams: tuple[str, ...] = STREAMS, quiet: bool = False) -> None:  # fmt: skip
        if self.proxy is None:
            raise Stopped("the lab is not behind Toxiproxy")
        for node in nodes if nodes is not None else [b.id for b in self.state.brokers]:
            for stream in streams:
                name = f"kbt-{kind}-{stream}"
                self.proxy.add_toxic(proxy_name(node), name, kind, stream, attributes)
                self.toxics.append((proxy_name(node), name))
        if not quiet:
            where = "every broker" if nodes is None else f"broker {', '.join(map(str, nodes))}"
            self.note(f"toxic {kind} {attributes} on {where} ({'+'.join(streams)})")

    def clear_toxics(self, quiet: bool = False) -> None:
        toxics, self.toxics = self.toxics, []
        if self.proxy is not None:
            for proxy, name in toxics:
                try:
                    self.proxy.remove_toxic(proxy, name)
                except Exception:
                    self.proxy.reset()  # removes every toxic
        if toxics and not quiet:
            self.note("toxics removed")

    # ---- remote tier ----------------------------------------------------------------------------
    def lock_remote(self) -> None:
        root = self.state.remote_storage_dir
        count = lab_faults.lock_dir(self.lab_dir, root)
        self.locked.append(root)
        self.note(f"remote tier made unwritable ({count} directories)")

    def unlock_remote(self) -> None:
        locked, self.locked = self.locked, []
        for root in locked:
            lab_faults.unlock_dir(self.lab_dir, root)
            self.note("remote tier writable again")

    # ---- cleanup ---------------------------------------------------------------------------------
    def restore(self) -> list[str]:
        """Undo whatever the script left; returns problems (cleanup reports, never raises)."""
        problems: list[str] = []

        def attempt(what: str, step: Callable[[], None]) -> None:
            try:
                step()
            except Exception as exc:
                problems.append(f"could not {what}: {exc}")

        attempt("remove toxics", self.clear_toxics)
        for node in sorted(self.paused):
            attempt(f"resume broker {node}", partial(self.resume, node))
        attempt("unlock the remote tier", self.unlock_remote)
        for node in sorted(self.dead):
            attempt(f"start broker {node}", partial(self.start, node))
        return problems
