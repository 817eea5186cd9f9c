"""The request model: client rules, the simulator against closed forms and measured sweeps."""

from __future__ import annotations

import math

import pytest

from tuner.model.batchfill import floor_requests
from tuner.model.predict import predict
from tuner.model.simulate import batch_cap, queue_batches, simulate
from tuner.model.traffic import Traffic, traffic_of
from tuner.spec.clients import ClientProfile, profile_of
from tuner.spec.clients import rules_of as rules_for
from tuner.spec.clients.java import JavaProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.workload import WorkloadSpec

QUNAR = Traffic(producers=24, rate=40, message_bytes=1620, partitions=(24,), brokers=3)


def _fb(name: str, **settings: object) -> ClientProfile:
    """A Filebeat profile run on the Sarama emulation (no harvester, up to 6 requests in flight)."""
    settings = {"input.engine": "emulated", **settings}
    return profile_of({"name": name, "client": "filebeat", "filebeat": settings})


def _real(name: str, **settings: object) -> ClientProfile:
    """A Filebeat profile run by real Filebeat 7.17 (its queue defaults where nothing is set)."""
    settings = {"input.engine": "real", **settings}
    return profile_of({"name": name, "client": "filebeat", "filebeat": settings})


def test_librdkafka_sticky_window_defaults_to_twice_linger_for_every_partitioner() -> None:
    rules = rules_for(LibrdkafkaProfile(name="x", linger_ms=100, partitioner="random"))
    assert rules.kind == "librdkafka"
    assert rules.partitioning.keyless == "sticky_time"
    assert rules.partitioning.sticky_ms == 200
    off = rules_for(
        LibrdkafkaProfile(name="x", linger_ms=100, overrides={"sticky.partitioning.linger.ms": "0"})
    )
    assert off.partitioning.keyless == "random"
    assert rules_for(LibrdkafkaProfile(name="x", linger_ms=0)).partitioning.keyless == "random"


def test_batch_cap_is_count_or_bytes() -> None:
    rules = rules_for(LibrdkafkaProfile(name="x", batch_messages=64))
    assert rules.kind == "librdkafka"
    assert batch_cap(rules, 1620) == 64
    big = rules_for(LibrdkafkaProfile(name="x", batch_messages=100_000, batch_bytes=100_000))
    assert big.kind == "librdkafka"
    assert batch_cap(big, 1000) == (100_000 - 61) // 1012


def test_a_librdkafka_batch_goes_on_bytes_not_on_the_count_that_fits() -> None:
    """One 500 KB event fits a 1 MB batch once, but the batch is not full: it waits linger.ms (the
    held-out 500 KB runs measured 213 ms at linger 200); a second event that does not fit sends it."""
    slow = Traffic(producers=2, rate=2, message_bytes=500_000, partitions=(3,), brokers=1)
    profile = LibrdkafkaProfile(name="x", linger_ms=200, batch_bytes=1_000_000)
    assert batch_cap(rules_for(profile), 500_000) == 1
    assert 200 <= predict(slow, profile).p99_ms - 30 <= 201  # 30: the uncalibrated service p99
    fast = Traffic(producers=1, rate=50, message_bytes=500_000, partitions=(1,), brokers=1)
    got = predict(fast, profile)
    assert got.requests_per_s == pytest.approx(50, rel=0.02)  # one event per request, no waiting
    assert got.p99_ms - 30 <= 25  # the next event (20 ms later) pushes the batch out


def mean_batch_size(mu: float, linger_s: float, cap: int) -> float:
    """E[1 + min(Poisson(mu * linger_s), cap - 1)] = 1 + sum over k < cap - 1 of P(X > k).

    A partition receiving Poisson arrivals at `mu` msgs/s whose batch opens with a message and
    closes after `linger_s` or at `cap` messages holds that many messages; every message lands in
    exactly one batch, so the partition sends mu / E[size] batches per second."""
    mean = mu * linger_s
    if cap <= 1 or mean <= 0:
        return 1.0
    if mean > 50 * cap:  # the cap always binds
        return float(cap)
    term = math.exp(-mean)
    cdf, total = term, 0.0
    for k in range(cap - 1):
        tail = 1.0 - cdf
        if tail < 1e-12 and k > mean:
            break
        total += tail
        term *= mean / (k + 1)
        cdf += term
    return 1.0 + total


def test_truncated_poisson_closed_form() -> None:
    assert mean_batch_size(10, 0.0, 100) == pytest.approx(1.0)
    assert mean_batch_size(10, 0.5, 10_000) == pytest.approx(6.0, rel=1e-6)  # 1 + E[Poisson(5)]
    assert mean_batch_size(1e6, 1.0, 64) == 64


def random_partition_requests(traffic: Traffic, linger_s: float, cap: int) -> float:
    """Produce requests/s of a one-partition-per-request client (librdkafka) whose records go to a
    uniformly random partition each (keyed, or keyless with sticky partitioning off), under
    Poisson arrivals."""
    topics = len(traffic.partitions)
    total = 0.0
    for partitions in traffic.partitions:
        mu = traffic.rate / topics / partitions  # one producer, one partition
        total += partitions * mu / mean_batch_size(mu, linger_s, cap)
    return total * traffic.producers


def test_simulator_agrees_with_truncated_poisson() -> None:
    # Random partitions (sticky off) and Poisson arrivals: exactly the closed form's assumptions.
    for linger_ms, cap in ((200, 10_000), (200, 4)):
        traffic = Traffic(4, 200, 1000, (12,), 3, arrivals="poisson")
        profile = LibrdkafkaProfile(
            name="x",
            linger_ms=linger_ms,
            batch_messages=cap,
            overrides={"sticky.partitioning.linger.ms": "0"},
        )
        sim = simulate(traffic, rules_for(profile))
        simulated = sum(sim.per_producer_rps()) * traffic.producers
        closed = random_partition_requests(traffic, linger_ms / 1000, cap)
        assert simulated == pytest.approx(closed, rel=0.05), (linger_ms, cap)


@pytest.mark.parametrize(
    ("profile", "measured"),
    [
        # docs/benchmarks.md "## Sweep engine": librdkafka on the Qunar-like workload, 3 brokers.
        (
            LibrdkafkaProfile(name="filebeat-like", linger_ms=0, batch_messages=64, partitioner="random"),
            952.9,
        ),
        (LibrdkafkaProfile(name="snappy", linger_ms=100, batch_messages=10_000, partitioner="sticky"), 223.3),
        (LibrdkafkaProfile(name="zstd", linger_ms=500, batch_messages=10_000, partitioner="sticky"), 47.6),
        # filebeat-profiles measured by `kbt sweep loadtests/filebeat-small-logs.yaml` (Sarama engine).
        (
            _fb(
                "filebeat-default",
                **{
                    "queue.mem.events": "3200",
                    "queue.mem.flush.min_events": "1600",
                    "queue.mem.flush.timeout": "10s",
                },
            ),
            51.7,
        ),
        (
            _fb(
                "filebeat-7x",
                **{
                    "queue.mem.events": "4096",
                    "queue.mem.flush.min_events": "2048",
                    "queue.mem.flush.timeout": "1s",
                },
            ),
            495.5,
        ),
        (_fb("filebeat-low-latency", **{"queue.mem.flush.timeout": "0s"}), 960.0),
        (
            _fb(
                "filebeat-small-logs",
                **{
                    "output.kafka.bulk_max_size": "2048",
                    "output.kafka.bulk_flush_frequency": "500ms",
                    "output.kafka.partition.random.group_events": "2048",
                    "queue.mem.events": "4096",
                    "queue.mem.flush.min_events": "2048",
                    "queue.mem.flush.timeout": "0s",
                },
            ),
            46.4,
        ),
    ],
)
def test_model_reproduces_measured_sweeps(profile: ClientProfile, measured: float) -> None:
    predicted = predict(QUNAR, profile).requests_per_s
    assert predicted == pytest.approx(measured, rel=0.05)


SMALL = Traffic(producers=4, rate=40, message_bytes=1590, partitions=(24,), brokers=3)
BURSTY = Traffic(producers=4, rate=400, message_bytes=1590, partitions=(24,), brokers=3)
_HELD = {
    "output.kafka.bulk_flush_frequency": "200ms",
    "output.kafka.partition.random.group_events": "4096",
    "queue.mem.flush.timeout": "600ms",
    "input.backoff": "100ms",
    "input.max_backoff": "200ms",
}


@pytest.mark.parametrize(
    ("traffic", "profile", "measured"),
    [
        # docs/benchmarks.md "## Real Filebeat": broker-side produce requests/s of real Filebeat
        # 7.17.29 pods (the runs the harvester and queue constants were fitted on).
        (QUNAR, _real("defaults"), 148.0),
        (QUNAR, _real("one-partition", **{"output.kafka.partition.random.group_events": "4096"}), 48.5),
        (QUNAR, _real("one-partition-held", **_HELD), 39.4),
        (BURSTY, _real("one-partition-held", **_HELD), 6.8),
        (BURSTY, _real("defaults"), 36.8),
        (BURSTY, _real("defaults-filestream", **{"input.type": "filestream"}), 23.2),
        (
            SMALL,
            _real("q7x-filestream", **{"input.type": "filestream", "queue.mem.flush.timeout": "1s"}),
            11.5,
        ),
    ],
)
def test_model_reproduces_real_filebeat_runs(
    traffic: Traffic, profile: ClientProfile, measured: float
) -> None:
    assert predict(traffic, profile).requests_per_s == pytest.approx(measured, rel=0.10)


def test_real_filebeat_reads_in_bursts_and_keeps_one_request_in_flight() -> None:
    real, emulated = rules_for(_real("r")), rules_for(_fb("e"))
    assert real.kind == emulated.kind == "filebeat"
    assert (real.read_backoff_ms, real.in_flight, real.queue_batch, real.queue_timeout_ms) == (
        1000,
        1,
        2048,
        1000,
    )
    assert (emulated.read_backoff_ms, emulated.in_flight, emulated.queue_batch) == (0, 6, 2048)
    # A faster harvester means smaller bursts: more requests at once-per-burst sending.
    at_once = {"queue.mem.flush.timeout": "0s"}
    fast = _real("fast", **at_once, **{"input.backoff": "100ms", "input.max_backoff": "200ms"})
    slow = predict(SMALL, _real("slow", **at_once))
    assert predict(SMALL, fast).requests_per_s > 1.5 * slow.requests_per_s


def test_requests_fall_and_latency_rises_with_linger() -> None:
    preds = [
        predict(QUNAR, LibrdkafkaProfile(name="x", linger_ms=linger, partitioner="sticky"))
        for linger in (0, 50, 200, 800)
    ]
    rates = [p.requests_per_s for p in preds]
    p99s = [p.p99_ms for p in preds]
    assert rates == sorted(rates, reverse=True) and rates[0] > 10 * rates[-1]
    assert p99s == sorted(p99s)
    # The first record of a batch waits the whole linger.
    assert preds[-1].p99_ms >= 800


def test_java_sends_one_request_per_broker_per_flush() -> None:
    keyed = Traffic(8, 400, 500, (24,), 3, key_cardinality=10_000)
    java = predict(keyed, JavaProfile(name="j", linger_ms=100, batch_bytes=1_000_000))
    rdk = predict(keyed, LibrdkafkaProfile(name="r", linger_ms=100, partitioner="hash"))
    # Every producer has records for every broker each linger: ~ producers x brokers / linger.
    assert java.requests_per_s == pytest.approx(8 * 3 / 0.1, rel=0.15)
    # librdkafka sends each of the 24 partitions separately.
    assert rdk.requests_per_s > 5 * java.requests_per_s


def test_queue_batches_fill_or_time_out() -> None:
    times = [i * 0.1 for i in range(100)]  # 10 events/s
    # 0.95 s timeout, room for 2048: a batch of the 10 events that arrived in time.
    batches = queue_batches(times, 2048, 0.95)
    assert [end - start for _, start, end in batches[:3]] == [10, 10, 10]
    assert batches[0][0] == pytest.approx(0.95)
    # Fills first: 5 events per batch, released at the 5th event.
    filled = queue_batches(times, 5, 10.0)
    assert [end - start for _, start, end in filled[:2]] == [5, 5]
    assert filled[0][0] == pytest.approx(0.4)
    # No timeout: each event alone when they arrive apart.
    assert len(queue_batches(times, 2048, 0.0)) == 100


def test_busiest_broker_follows_partition_leadership() -> None:
    traffic = Traffic(4, 100, 1000, (4,), 3)  # broker 0 leads 2 of 4 partitions
    pred = predict(traffic, LibrdkafkaProfile(name="x", linger_ms=50, partitioner="sticky"))
    assert pred.busiest_broker_requests_per_s == pytest.approx(pred.requests_per_s / 2, rel=1e-6)


def test_floor_and_closed_loop() -> None:
    assert floor_requests(24, 3, 1.0) == (72.0, 24.0)
    workload = WorkloadSpec.model_validate(
        {
            "name": "w",
            "topics": [{"name": "t", "partitions": 3}],
            "rate_per_producer": "max",
            "message": {"kind": "generated", "bytes": 100},
            "duration_s": 5,
        }
    )
    from tuner.core.errors import BadInput

    with pytest.raises(BadInput, match="closed loop"):
        traffic_of(workload, 3)
