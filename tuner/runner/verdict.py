"""Judge a finished run: delivery first (lost > 0 fails it, whatever its speed), then whether it is a
clean measurement, then the rest.

Status: "failed" (delivery or the run itself went wrong), "unverified" (nothing lost so far, but the
read-back ended before it reached every acked record: the unread ones are neither lost nor verified),
"unclean" (delivered, but the figures do not describe the plan: the client could not keep its
schedule, or client and broker disagree on the request count), else "ok". Only "ok" runs calibrate
the model and back recommendations."""

from __future__ import annotations

from tuner.model.evidence import schedule_slip
from tuner.spec.clients import kind_of
from tuner.spec.sweep import RunPlan
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.figures import BrokerWindow, ClientResult, DeliveryResult
from tuner.store.record import Status

# Client and broker produce-request counts must agree this closely (the measurement-truth check);
# an open-loop run that sent this much less than its schedule could not keep up (client saturated).
REQUEST_COUNT_TOLERANCE = THRESHOLDS.request_count_tolerance
OFFERED_SHORTFALL = THRESHOLDS.offered_shortfall
SEND_LAG_P99_MS = THRESHOLDS.send_lag_p99_ms


def judge(
    plan: RunPlan, client: ClientResult, delivery: DeliveryResult, broker: BrokerWindow | None
) -> tuple[Status, list[str]]:
    failures: list[str] = []
    unclean: list[str] = []  # why the figures are not a clean measurement
    unverified: list[str] = []  # the read-back was cut short before it reached every acked record
    notes: list[str] = []
    if delivery.unfinished:
        took = f" in {delivery.read_back_s:.0f} s" if delivery.read_back_s is not None else ""
        unverified.append(
            f"read-back cut short{took}: {delivery.unread} acked records unread (not counted lost),"
            f" {delivery.consumed} of {delivery.acked} read"
        )
    elif not delivery.verified:
        failures.append("delivery was not verified")
    if delivery.lost > 0:
        failures.append(f"{delivery.lost} acked records lost")
    if client.records_failed > 0 or delivery.failed > 0:
        failures.append(f"{max(client.records_failed, delivery.failed)} records failed delivery")
    if delivery.indeterminate > 0:
        notes.append(f"{delivery.indeterminate} records with unknown outcome (timed out)")
    if delivery.duplicates > 0:
        notes.append(f"{delivery.duplicates} duplicate records")
    if client.records_acked == 0:
        failures.append("no records acked in the measured window")
    rate = plan.workload.rate_per_producer
    if rate != "max" and client.offered_records > 0:
        shortfall = 1 - client.records_sent / client.offered_records
        if shortfall > OFFERED_SHORTFALL:
            unclean.append(f"client sent {shortfall:.0%} less than offered (client saturated)")
        # A driver that stalled (a starved or collecting JVM) offers less than its schedule.
        scheduled = float(rate) * plan.workload.producers * client.window_s
        behind = 1 - client.offered_records / scheduled if scheduled > 0 else 0.0
        if behind > OFFERED_SHORTFALL:
            unclean.append(
                f"the driver offered {behind:.0%} less than the schedule"
                f" ({client.offered_records} of {scheduled:.0f} records: driver stalled)"
            )
    lag = client.send_lag_ms.p99 if client.send_lag_ms is not None else None
    if lag is not None and lag > SEND_LAG_P99_MS:
        unclean.append(f"client behind schedule: send lag p99 {lag:.0f} ms (limit {SEND_LAG_P99_MS:g} ms)")
    slip = schedule_slip(rate, client.send_lag_ms)
    if slip is not None:  # bursts, not the plan's arrivals: no test of the model (kept as measured)
        notes.append(f"{slip}: model truth leaves it out")
    if broker is None:
        notes.append("no broker measurement")
    else:
        multi_partition = kind_of(plan.profile).multi_partition_requests
        _, broker_total = broker.run_produce_requests(multi_partition)
        mismatch = request_count_mismatch(client.produce_requests_total, broker_total)
        others = other_clients_requests(broker, multi_partition)
        if others is not None:
            notes.append(
                f"the brokers served {others:.0f} more produce requests than the run's own partition"
                " appends allow (other clients on the cluster): client and broker request counts"
                " not compared"
            )
        elif broker_total is not None and mismatch is not None and mismatch > REQUEST_COUNT_TOLERANCE:
            unclean.append(
                f"client and broker produce request counts differ by {mismatch:.1%}"
                f" ({client.produce_requests_total} vs {broker_total:.0f})"
            )
    slo = plan.slo
    p99 = client.delivery_latency_ms.p99
    if slo.p99_ms is not None and p99 is not None and p99 > slo.p99_ms:
        notes.append(f"p99 {p99:.0f} ms above the SLO {slo.p99_ms:g} ms")
    rss = client.max_producer_rss_mb
    if slo.max_producer_memory_mb is not None and rss is not None and rss > slo.max_producer_memory_mb:
        notes.append(f"producer memory {rss:.0f} MB above the SLO {slo.max_producer_memory_mb:g} MB")
    status: Status = "failed" if failures else "unverified" if unverified else "unclean" if unclean else "ok"
    return status, failures + unverified + unclean + notes


def other_clients_requests(broker: BrokerWindow, multi_partition: bool) -> float | None:
    """Produce requests the brokers served beyond what the run itself can have sent, or None.

    A client whose requests carry several partitions is counted by the brokers' per-request
    counter, which also counts every other client's produce requests (another group's run beside
    this one, a shared cluster's own traffic). The run's requests cannot outnumber its partition
    appends (each request appends at least one of its partitions), so a per-request count above the
    appends, past the tolerance, is other clients': comparing it with the client's count would
    call the run unclean for traffic that is not its own. One-partition clients are counted on
    their own topics and need no such test."""
    if not multi_partition:
        return None
    total, appends = broker.produce_requests_total, broker.topic_produce_requests_total
    if total is None or appends is None or total <= appends * (1 + REQUEST_COUNT_TOLERANCE):
        return None
    return total - appends


def request_count_mismatch(client: float | None, broker: float | None) -> float | None:
    """Relative difference |client - broker| / broker, or None when either side is unknown (real
    Filebeat counts no requests: its client count is 0)."""
    if not client or broker is None or broker <= 0:
        return None
    return abs(client - broker) / broker
