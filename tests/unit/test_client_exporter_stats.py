"""The librdkafka client exporter's mapping of a statistics JSON onto the contract series (no
server: the registry is read directly), produce requests counted as deltas of librdkafka's totals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tuner.driver.client_exporter import ClientExporter
from tuner.driver.rdkafka_stats import Emission

pytestmark = pytest.mark.wall_clock  # asserts a wall-clock bound: CI runs it at normal priority


def _stats(produce: int, throttle_max: int, throttle_cnt: int = 3) -> Emission:
    broker: dict[str, Any] = {
        "nodeid": 2,
        "req": {"Produce": produce},
        "int_latency": {"cnt": 10, "p50": 4000, "p99": 9000},
        "rtt": {"cnt": 10, "p50": 1500, "p99": 3000},
        "throttle": {"cnt": throttle_cnt, "max": throttle_max},
    }
    bootstrap = {"nodeid": -1, "req": {"Produce": 0}}
    topics = {"t": {"batchcnt": {"cnt": 4, "sum": 40}, "batchsize": {"sum": 4000}}}
    return Emission.parse(json.dumps({"brokers": {"b2": broker, "boot": bootstrap}, "topics": topics}))


def test_stats_map_onto_the_contract() -> None:
    exporter = ClientExporter("run-1", "librdkafka")
    exporter.on_stats("p0", _stats(produce=7, throttle_max=0))
    exporter.on_stats("p0", _stats(produce=12, throttle_max=250))
    value = exporter.registry.get_sample_value
    labels = {"run": "run-1", "producer": "p0", "client": "librdkafka"}
    assert value("kbt_client_produce_requests_total", {**labels, "broker": "2"}) == 12
    assert value("kbt_client_produce_requests_total", {**labels, "broker": "-1"}) is None
    assert value("kbt_client_records_per_request", labels) == 10
    assert value("kbt_client_batch_bytes", labels) == 1000
    # librdkafka's latencies are microseconds, its throttle milliseconds: exported in seconds
    assert value("kbt_client_queue_latency_seconds", {**labels, "quantile": "0.99"}) == 0.009
    assert value("kbt_client_rtt_seconds", {**labels, "broker": "2", "quantile": "0.5"}) == 0.0015
    assert value("kbt_client_produce_throttle_time_max_seconds", labels) == 0.25


def test_no_throttled_response_reads_zero() -> None:
    """librdkafka's throttle window counts only throttled responses: none is a 0, not a gap."""
    exporter = ClientExporter("run-1", "librdkafka")
    labels = {"run": "run-1", "producer": "p0", "client": "librdkafka"}
    exporter.on_stats("p0", _stats(produce=1, throttle_max=300))
    exporter.on_stats("p0", _stats(produce=2, throttle_max=0, throttle_cnt=0))
    assert exporter.registry.get_sample_value("kbt_client_produce_throttle_time_max_seconds", labels) == 0


def test_an_exporter_that_is_not_serving_waits_for_no_scrape() -> None:
    exporter = ClientExporter("run-1", "librdkafka")
    assert exporter.await_scrape(30.0) is False  # at once: nothing can scrape it


def _scrape(exporter: ClientExporter, write_fails: bool = False) -> bytes:
    """What wsgiref does with one Prometheus scrape, without the socket: call the app, write the
    body, close it (inside the except clause when a write failed)."""
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/metrics", "QUERY_STRING": "", "wsgi.input": None}
    body = exporter._app(environ, lambda status, headers: None)
    written = b"".join(body)
    if write_fails:
        try:
            raise BrokenPipeError
        except BrokenPipeError:
            body.close()  # type: ignore[attr-defined]
    else:
        body.close()  # type: ignore[attr-defined]
    return written


def test_a_scrape_delivered_after_the_wait_began_ends_it() -> None:
    import threading
    import time

    exporter = ClientExporter("run-1", "librdkafka")
    exporter.serving = True
    exporter.on_delivery("p0", 5, 500, 0, 5)
    _scrape(exporter)  # a scrape before the wait does not count
    timer = threading.Timer(0.2, lambda: _scrape(exporter))
    started = time.monotonic()
    timer.start()
    assert exporter.await_scrape(20.0) is True
    assert time.monotonic() - started < 10.0
    timer.join()
    assert exporter.await_scrape(0.3) is False  # no scrape came


def test_a_scrape_read_but_not_delivered_does_not_end_the_wait() -> None:
    """The final figures were read but the response never got out (the process ended mid-write, or
    the write failed): the wait goes on for a scrape that is delivered."""
    import threading

    exporter = ClientExporter("run-1", "librdkafka")
    exporter.serving = True
    exporter.on_delivery("p0", 7, 700, 0, 7)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/metrics", "QUERY_STRING": "", "wsgi.input": None}
    threading.Timer(0.1, lambda: b"".join(exporter._app(environ, lambda s, h: None))).start()
    assert exporter.await_scrape(0.5) is False  # read, never closed: not delivered
    threading.Timer(0.1, lambda: _scrape(exporter, write_fails=True)).start()
    assert exporter.await_scrape(0.5) is False
    body: list[bytes] = []
    threading.Timer(0.1, lambda: body.append(_scrape(exporter))).start()
    assert exporter.await_scrape(20.0) is True
    assert b'kbt_client_records_acked_total{client="librdkafka",producer="p0",run="run-1"} 7.0' in body[0]
