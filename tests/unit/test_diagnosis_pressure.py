"""kbt diagnose in the pressure regime and on the brokers it must not alarm on (issue 25, item 3):
a full request queue leads, and a low idle with no traffic to explain it, or from a broker's
first minute, is never "critical" nor "busy moving bytes"."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import ExitStatus
from tuner.model.diagnosis import diagnose
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.diagnosis_rules import QUEUE_FULL_CAUSE
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot, TopicSnapshot

T = DiagnoseThresholds()
PRESSURE = DiagnoseThresholds(queued_max_requests=16)
END = 10_000.0
WINDOW = 60.0


def _snap(*brokers: BrokerSnapshot, topics: list[TopicSnapshot] | None = None) -> ClusterSnapshot:
    return ClusterSnapshot(
        prometheus="http://prom",
        end=END,
        window_s=WINDOW,
        step_s=1,
        brokers=list(brokers),
        topics=topics or [],
    )


def _pressure(**kw: float) -> BrokerSnapshot:
    """One broker, one network thread, one handler, queued.max.requests 16, 2.5 ms per produce request."""
    base: dict[str, float] = {
        "network_threads": 1,
        "produce_requests_per_s": 420.0,
        "bytes_in_per_s": 420 * 1100.0,
        "messages_in_per_s": 420 * 1.1,
        "network_idle_ratio": 0.41,
        "request_handler_idle_ratio": 0.02,
        "request_queue_size": 15.4,
        "request_queue_size_max": 16,
        "produce_request_queue_p99_ms": 40.0,
        "cpu_cores": 0.45,
        "started_at": END - 3600,
    }
    base.update(kw)
    return BrokerSnapshot(broker="1", **base)  # type: ignore[arg-type]


def _quiet(**kw: float) -> BrokerSnapshot:
    """The snapshot of the issue: a 3-broker lab up a minute, no traffic, network idle 0.11."""
    base: dict[str, float] = {
        "network_threads": 3,
        "produce_requests_per_s": 0.0,
        "bytes_in_per_s": 0.0,
        "bytes_out_per_s": 0.0,
        "fetch_requests_per_s": 2.0,
        "network_idle_ratio": 0.11,
        "request_handler_idle_ratio": 0.97,
        "request_queue_size": 0.0,
        "cpu_cores": 0.05,
        "started_at": END - 3600,
    }
    base.update(kw)
    return BrokerSnapshot(broker="1", **base)  # type: ignore[arg-type]


def test_pressure_broker_is_critical_with_the_queue_cause() -> None:
    topics = [TopicSnapshot(topic="app-logs", partition_appends_per_s=400.0, bytes_in_per_s=400 * 1100.0)]
    d = diagnose(_snap(_pressure(), topics=topics), PRESSURE)
    b = d.brokers[0]
    assert d.status == "critical" and d.exit_status is ExitStatus.CRITICAL
    assert b.cause == "request queue full"
    lead = b.findings[0]
    assert lead.kind == "request_queue_full" and lead.summary.startswith(QUEUE_FULL_CAUSE)
    assert "request queue 15.4 on average of queued.max.requests 16" in lead.summary
    # The expected cut (16 KB / 1.1 KB) and the idle after it, higher than now.
    assert b.requests_cut is not None and 14 < b.requests_cut < 15.5
    assert b.predicted_idle_after is not None and b.predicted_idle_after[0] > 0.9
    assert (
        "can cut produce requests ~15x, network idle 0.41 -> ~0.96 after it (busy time scaled" in lead.summary
    )
    assert d.topics[0].topic == "app-logs" and d.topics[0].small
    assert d.headline.startswith(f"critical: broker(s) 1: {QUEUE_FULL_CAUSE}")


def test_queue_cap_comes_from_the_thresholds() -> None:
    # The same broker judged against Kafka's default cap (500): its queue of 15 is not full; the
    # handlers are short and the requests small.
    d = diagnose(_snap(_pressure()), T)
    kinds = {f.kind for f in d.brokers[0].findings}
    assert "request_queue_full" not in kinds and {"small_requests", "handler_threads"} <= kinds
    assert d.status == "critical"


def test_full_queue_with_big_requests_has_no_cut() -> None:
    d = diagnose(_snap(_pressure(bytes_in_per_s=420 * 40_000.0)), PRESSURE)
    b = d.brokers[0]
    assert b.cause == "request queue full" and b.requests_cut is None
    assert "can cut" not in b.findings[0].summary


def test_no_traffic_low_idle_is_not_critical_nor_bytes() -> None:
    d = diagnose(_snap(_quiet()), T)
    b = d.brokers[0]
    assert d.status == "warning" and d.exit_status is ExitStatus.WARNING
    assert b.cause == "low idle without the traffic to explain it"
    assert "no traffic" in b.findings[0].summary and "moving bytes" not in d.headline
    assert all(f.kind != "network_bytes" for f in b.findings)


def test_fresh_broker_idle_meter_is_left_out() -> None:
    d = diagnose(_snap(_quiet(started_at=END - 70)), T)  # the window opened 10 s after its start
    b = d.brokers[0]
    assert d.status == "healthy" and d.exit_status is ExitStatus.OK
    assert b.cause == "idle meter warm-up" and "left out" in b.findings[0].summary
    assert "warm-up" in d.headline
    # Once the window opens after the warm-up, the same reading is judged (as unexplained).
    assert diagnose(_snap(_quiet(started_at=END - WINDOW - 61)), T).brokers[0].cause != "idle meter warm-up"


def test_fresh_broker_with_a_full_queue_is_still_critical() -> None:
    # The queue gauge has no warm-up: a broker overloaded from its start is diagnosed as such.
    d = diagnose(_snap(_pressure(started_at=END - 70, request_handler_idle_ratio=0.01)), PRESSURE)
    assert d.status == "critical" and d.brokers[0].cause == "request queue full"


def test_busy_network_with_real_bytes_is_still_network_bytes() -> None:
    b = _quiet(bytes_in_per_s=3 * 12e6, produce_requests_per_s=6.0, network_idle_ratio=0.25)
    d = diagnose(_snap(b), T)
    assert d.status == "critical" and d.brokers[0].cause == "network bytes"


ratio = st.floats(0.0, 1.0)
rate = st.one_of(st.just(0.0), st.floats(0.0, 1e5))
volume = st.one_of(st.just(0.0), st.floats(0.0, 1e9))


@settings(max_examples=300, deadline=None)
@given(
    threads=st.integers(1, 8),
    reqs=rate,
    fetches=rate,
    bytes_in=volume,
    bytes_out=volume,
    net=ratio,
    handler=ratio,
    queue=st.floats(0.0, 600.0),
    age=st.floats(0.0, 7200.0),
    cap=st.integers(1, 1000),
)
def test_a_cause_agrees_with_its_own_numbers(
    threads: int,
    reqs: float,
    fetches: float,
    bytes_in: float,
    bytes_out: float,
    net: float,
    handler: float,
    queue: float,
    age: float,
    cap: int,
) -> None:
    t = DiagnoseThresholds(queued_max_requests=cap)
    s = BrokerSnapshot(
        broker="1",
        network_threads=threads,
        produce_requests_per_s=reqs,
        fetch_requests_per_s=fetches,
        bytes_in_per_s=bytes_in,
        bytes_out_per_s=bytes_out,
        network_idle_ratio=net,
        request_handler_idle_ratio=handler,
        request_queue_size=queue,
        started_at=END - age,
    )
    b = diagnose(_snap(s), t).brokers[0]
    kinds = {f.kind for f in b.findings}
    moved = (bytes_in + bytes_out) / threads
    quiet = (reqs + fetches) / threads < t.quiet_requests_per_thread_s and moved < t.quiet_bytes_per_thread_s
    full = queue >= t.request_queue_near_fraction * cap
    warm = age - WINDOW < t.idle_meter_warmup_s
    if "network_bytes" in kinds:
        assert not quiet and not warm
    if (
        b.status == "critical"
    ):  # a full queue, or a trusted idle ratio below the line with the load that explains it
        assert full or (not warm and (handler < t.critical_idle or (net < t.critical_idle and not quiet)))
    assert ("request_queue_full" in kinds) == full
    if full:
        assert b.cause == "request queue full"
    if warm:  # the idle ratios of a broker's first minute are left out, and said so
        assert "unexplained_idle" not in kinds and "meter_warmup" in kinds
        if not full:
            assert b.status != "critical"
