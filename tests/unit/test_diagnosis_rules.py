"""Each rule of the broker diagnosis (tuner.model.diagnosis_rules) on its own: the case it names,
and the nearest case it must stay silent on. A healthy baseline broker is changed one figure at a time:
3 network threads, 100 produce requests/s of 40 KB, both idle ratios 0.9, an empty request queue."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.diagnosis_rules import RULES, BrokerFacts, Rule, broker_facts
from tuner.model.finding import Finding, Kind
from tuner.store.snapshot import BrokerSnapshot

T = DiagnoseThresholds()
LIMIT = 4096.0  # small below 4 KB; batching aims at 16 KB
HEALTHY: dict[str, Any] = {
    "broker": "1",
    "network_threads": 3,
    "produce_requests_per_s": 100.0,
    "bytes_in_per_s": 4_000_000.0,  # 40 KB per request
    "network_idle_ratio": 0.9,
    "request_handler_idle_ratio": 0.9,
    "request_queue_size": 0.0,
    "fetch_requests_per_s": 50.0,
    "bytes_out_per_s": 4_000_000.0,
}
BUSY = {"network_idle_ratio": 0.2}  # critical network idle
SMALL = {"produce_requests_per_s": 3000.0, "bytes_in_per_s": 3_000_000.0}  # 1 KB requests, 1000/s per thread


def _facts(window_start: float | None = None, **changed: Any) -> BrokerFacts:
    return broker_facts(BrokerSnapshot(**{**HEALTHY, **changed}), T, None, LIMIT, window_start)


def _rule(kind: Kind) -> Rule:
    return next(r for r in RULES if r.kind == kind)


def _fires(kind: Kind, facts: BrokerFacts, found: list[Finding] | None = None) -> Finding | None:
    finding = _rule(kind).apply(facts, found or [])
    assert finding is None or finding.kind == kind
    return finding


def test_every_kind_of_finding_has_one_rule() -> None:
    assert sorted(r.kind for r in RULES) == sorted(get_args(Kind))


def test_the_healthy_baseline_draws_no_finding() -> None:
    facts = _facts()
    assert [r.kind for r in RULES if r.apply(facts, []) is not None] == []


def test_no_data() -> None:
    assert _fires("no_data", _facts(network_idle_ratio=None, request_handler_idle_ratio=None))
    assert not _fires("no_data", _facts(network_idle_ratio=None))  # the handlers' idle is a figure


def test_meter_warmup_leaves_the_idle_ratios_out() -> None:
    facts = _facts(window_start=1030.0, started_at=1000.0, **BUSY)
    finding = _fires("meter_warmup", facts)
    assert finding is not None and finding.severity == "healthy" and "30 s" in finding.summary
    assert facts.net_idle is None and facts.net_status == "healthy"
    assert not _fires("meter_warmup", _facts(window_start=1100.0, started_at=1000.0))  # past the warm-up


def test_request_queue_full_is_critical_whatever_the_idle_meters_say() -> None:
    finding = _fires("request_queue_full", _facts(request_queue_size=450.0, **SMALL))
    assert finding is not None and finding.severity == "critical"
    assert finding.evidence["requests_cut"] == pytest.approx(16.384)
    assert not _fires("request_queue_full", _facts(request_queue_size=350.0))  # under 80% of 500


def test_small_requests_names_the_cut() -> None:
    finding = _fires("small_requests", _facts(**SMALL, **BUSY))
    assert finding is not None and finding.severity == "critical"
    assert finding.summary.startswith("network threads saturated by small produce requests")
    assert finding.evidence["bytes_per_request"] == pytest.approx(1000.0)
    assert _fires("small_requests", _facts(**SMALL)) is not None  # small, the threads still idle: a warning
    few = {"produce_requests_per_s": 20.0, "bytes_in_per_s": 20_000.0}  # 7 requests/s per thread
    assert not _fires("small_requests", _facts(**few, **BUSY))
    assert not _fires("small_requests", _facts(request_queue_size=450.0, **SMALL))  # the full queue says it


def test_disk_flush() -> None:
    assert _fires("disk_flush", _facts(log_flush_time_p99_ms=500.0))
    assert not _fires("disk_flush", _facts(log_flush_time_p99_ms=150.0))


def test_handler_threads() -> None:
    assert _fires("handler_threads", _facts(request_handler_idle_ratio=0.4))
    assert _fires("handler_threads", _facts(request_queue_size=20.0))
    assert not _fires("handler_threads", _facts(request_queue_size=450.0, request_handler_idle_ratio=0.1))


def test_cpu_or_pauses_is_a_wait_with_idle_handlers() -> None:
    assert _fires("cpu_or_pauses", _facts(produce_request_queue_p99_ms=200.0))
    assert not _fires("cpu_or_pauses", _facts(produce_request_queue_p99_ms=20.0))
    # short handlers explain the wait: the handler rule speaks, not this one
    assert not _fires(
        "cpu_or_pauses", _facts(produce_request_queue_p99_ms=200.0, request_handler_idle_ratio=0.4)
    )


def test_large_fetches() -> None:
    fetches = {"fetch_requests_per_s": 10.0, "bytes_out_per_s": 40_000_000.0}  # 4 MB per fetch, out 10x in
    assert _fires("large_fetches", _facts(**fetches, **BUSY))
    assert not _fires("large_fetches", _facts(**fetches))  # the network threads are not busy


def test_unexplained_idle_is_a_low_idle_without_traffic() -> None:
    quiet = {
        "produce_requests_per_s": 0.0,
        "bytes_in_per_s": 0.0,
        "fetch_requests_per_s": 1.0,
        "bytes_out_per_s": 0.0,
    }
    facts = _facts(**quiet, **BUSY)
    finding = _fires("unexplained_idle", facts)
    assert finding is not None and finding.severity == "warning" and "no traffic" in finding.summary
    assert facts.net_status == "warning" and not facts.net_busy  # never critical, never a traffic cause
    assert not _fires("unexplained_idle", _facts(**BUSY))


def test_busy_threads_without_a_request_count_are_not_blamed_on_bytes() -> None:
    """RequestMetrics left out of the rules: bytes in, no produce request series. Neither "network
    bytes" (average request "0 B") nor "too little traffic" (0 produce req/s) may be said."""
    unmeasured = {"produce_requests_per_s": None, **BUSY}
    facts = _facts(**unmeasured)
    assert not _fires("network_bytes", facts) and not _fires("unexplained_idle", facts)
    finding = _fires("no_data", facts)
    assert finding is not None and finding.severity == "critical"
    assert "no produce request count: small requests cannot be told from bytes" in finding.summary
    # Little bytes in and no request series either: still no claim of quiet traffic.
    assert not _fires("unexplained_idle", _facts(**unmeasured, bytes_in_per_s=100.0, bytes_out_per_s=0.0))
    # A broker nobody produced to has no Produce series and no bytes in: its low idle is unexplained.
    idle = {"produce_requests_per_s": None, "bytes_in_per_s": 0.0, "bytes_out_per_s": 0.0, **BUSY}
    assert _fires("unexplained_idle", _facts(**idle, fetch_requests_per_s=1.0))
    assert _fires("no_data", _facts(**idle, fetch_requests_per_s=1.0)) is None


def test_network_bytes_speaks_only_when_nothing_before_explained_the_busy_threads() -> None:
    facts = _facts(**BUSY)
    assert _fires("network_bytes", facts)
    small = Finding(kind="small_requests", severity="critical", summary="small")
    assert not _fires("network_bytes", facts, [small])
    assert not _fires("network_bytes", _facts())
