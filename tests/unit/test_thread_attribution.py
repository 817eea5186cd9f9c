"""Thread sampling from /proc (on this test process's own threads) and the attribution of a network
thread's busy time (request queue, own work, host contention) from figures."""

from __future__ import annotations

import os
import select
import socket
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.measure.attribution import attribute
from tuner.measure.broker_window import BrokerStats, BrokerWindow
from tuner.measure.threads import NETWORK_THREAD, ThreadSampler, ThreadTime, ThreadWindow
from tuner.spec.thresholds import THRESHOLDS

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc only")


def test_sampler_tells_select_from_a_futex_from_running() -> None:
    """Three real threads: one in select (Kafka's idle), one parked on a lock (the queue put), one
    spinning (own work). The sampler must put each in its own column."""
    stop = threading.Event()
    a, b = socket.socketpair()
    ids: dict[str, int] = {}

    def in_select() -> None:
        ids[NETWORK_THREAD + "select"] = threading.get_native_id()
        while not stop.is_set():
            select.select([a], [], [], 0.5)

    def blocked() -> None:
        ids[NETWORK_THREAD + "blocked"] = threading.get_native_id()
        stop.wait()

    def spinning() -> None:
        ids[NETWORK_THREAD + "spinning"] = threading.get_native_id()
        while not stop.is_set():
            sum(range(1000))

    threads = [threading.Thread(target=f, daemon=True) for f in (in_select, blocked, spinning)]
    for t in threads:
        t.start()
    while len(ids) < 3:
        time.sleep(0.01)
    sampler = ThreadSampler(os.getpid(), dict(ids), tick_s=0.02).start()
    started = time.time()
    time.sleep(2.5)
    sampler.stop()
    stop.set()
    a.close()
    b.close()
    window = sampler.figures(started - 1, time.time() + 1)
    assert window is not None
    by_name = {t.name.removeprefix(NETWORK_THREAD): t for t in window.network}
    assert by_name["select"].in_select > 0.8 and by_name["select"].cpu < 0.2
    assert by_name["blocked"].blocked > 0.8 and by_name["blocked"].cpu < 0.2
    # runnable: on a core, or waiting for one (on a busy host mostly the latter)
    spinning = by_name["spinning"]
    assert spinning.running > 0.5 and spinning.cpu + spinning.runqueue_wait > 0.5
    assert window.host_cores == os.cpu_count() and window.load_avg_1m is not None
    assert 0.0 <= (window.host_cpu_busy or 0.0) <= 1.0


def _window(cpu: float, wait: float, blocked: float, in_select: float, host: float) -> ThreadWindow:
    thread = ThreadTime(
        name=NETWORK_THREAD + "1", cpu=cpu, runqueue_wait=wait, in_select=in_select, blocked=blocked,
        running=max(0.0, 1 - in_select - blocked), samples=100,
    )  # fmt: skip
    return ThreadWindow(start=0, end=30, network=[thread], host_cpu_busy=host, host_cores=2, load_avg_1m=3.0)


def _broker(idle: float, at_cap: float) -> BrokerWindow:
    stats = BrokerStats(broker="1", network_idle_ratio=idle, request_queue_at_cap_share=at_cap)
    return BrokerWindow(start=0, end=30, step_s=2, brokers=[stats], request_queue_cap=16)


def test_the_three_causes() -> None:
    queue = attribute(_window(cpu=0.05, wait=0.02, blocked=0.5, in_select=0.4, host=0.6), _broker(0.4, 0.9))
    host = attribute(_window(cpu=0.05, wait=0.5, blocked=0.02, in_select=0.4, host=1.0), _broker(0.4, 0.0))
    work = attribute(_window(cpu=0.5, wait=0.02, blocked=0.02, in_select=0.4, host=0.6), _broker(0.4, 0.0))
    calm = attribute(_window(cpu=0.01, wait=0.01, blocked=0.0, in_select=0.95, host=0.3), _broker(0.95, 0.0))
    assert queue is not None and queue.cause == "request queue full"
    assert host is not None and host.cause == "host contention"
    assert work is not None and work.cause == "own work"
    assert calm is not None and calm.cause == "not under pressure"
    assert queue.why.startswith("request queue full: network idle 0.40") and "at cap 90%" in queue.why
    # a blocked thread with a queue that was not at its cap is not called a full queue
    not_full = attribute(
        _window(cpu=0.05, wait=0.02, blocked=0.5, in_select=0.4, host=0.6), _broker(0.4, 0.1)
    )
    assert not_full is not None and not_full.cause != "request queue full"


@settings(max_examples=200, deadline=None)
@given(
    cpu=st.floats(0, 1),
    wait=st.floats(0, 1),
    blocked=st.floats(0, 1),
    in_select=st.floats(0, 1),
    host=st.floats(0, 1),
    idle=st.one_of(st.none(), st.floats(0, 1)),
    at_cap=st.one_of(st.none(), st.floats(0, 1)),
)
def test_attribution_is_total_and_consistent(
    cpu: float,
    wait: float,
    blocked: float,
    in_select: float,
    host: float,
    idle: float | None,
    at_cap: float | None,
) -> None:
    stats = BrokerStats(broker="1", network_idle_ratio=idle, request_queue_at_cap_share=at_cap)
    broker = BrokerWindow(start=0, end=30, step_s=2, brokers=[stats])
    found = attribute(_window(cpu, wait, blocked, in_select, host), broker)
    assert found is not None
    assert all(0.0 <= v <= 1.0 for v in (found.blocked, found.own_cpu, found.runqueue_wait))
    if found.cause == "host contention":
        assert host >= THRESHOLDS.host_busy_contended
    if found.cause == "request queue full":
        assert at_cap is not None and at_cap >= THRESHOLDS.request_queue_full_share
    if found.cause == "not under pressure":
        assert 1 - found.busy >= THRESHOLDS.network_idle_warning
    assert "\n" not in found.why


def test_no_network_threads_no_attribution() -> None:
    assert attribute(ThreadWindow(start=0, end=1), None) is None
