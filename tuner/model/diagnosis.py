"""Classify a live cluster snapshot: why are the brokers' threads busy, and how bad is it.

Per broker, from what Prometheus measured over the window (tuner.measure.cluster_snapshot), the
thresholds (tuner.model.diagnosis_config, where the rule is written down) and, when given, the
fitted broker cost model (tuner.model.cost). Every finding carries its evidence as numbers and as
one sentence an operator can act on:

    network threads saturated by small produce requests: average produce request is 3.0 KB
    (1.9 records); batching to 16 KB requests can cut produce requests ~5x
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from tuner.core.errors import ExitStatus
from tuner.core.frozen import Frozen
from tuner.model.cost import BrokerCostModel
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.diagnosis_scrape import unmeasured_broker
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot

Status = Literal["healthy", "warning", "critical"]
Kind = Literal[
    "small_requests",
    "network_bytes",
    "handler_threads",
    "cpu_or_pauses",
    "disk_flush",
    "large_fetches",
    "no_data",
]
_RANK: dict[Status, int] = {"healthy": 0, "warning": 1, "critical": 2}
EXIT: dict[Status, ExitStatus] = {
    "healthy": ExitStatus.OK,
    "warning": ExitStatus.WARNING,
    "critical": ExitStatus.CRITICAL,
}
CAUSE_LABEL: dict[Kind, str] = {
    "small_requests": "small requests",
    "network_bytes": "network bytes",
    "handler_threads": "handler threads",
    "cpu_or_pauses": "CPU or GC pauses",
    "disk_flush": "disk flush",
    "large_fetches": "large fetches",
    "no_data": "no data",
}


class Finding(Frozen):
    kind: Kind
    severity: Status
    summary: str  # one line, with the evidence in it
    advice: str = ""
    evidence: dict[str, float] = Field(default_factory=dict)


class BrokerDiagnosis(Frozen):
    broker: str
    status: Status
    cause: str  # "healthy" or the label of the leading finding
    findings: list[Finding] = Field(default_factory=list)
    small_request_bytes: float  # the size limit used for this broker
    requests_cut: float | None = None  # "batching can cut requests ~Nx"
    predicted_idle_after: tuple[float, float] | None = None  # cost model, after that cut


class TopicNote(Frozen):
    topic: str
    partition_appends_per_s: float  # once per partition batch, not per request
    bytes_per_partition_append: float | None
    small: bool


class ModelSummary(Frozen):
    network_r2: float
    handler_r2: float
    n: int
    break_even_request_bytes: float | None


class Diagnosis(Frozen):
    status: Status
    headline: str
    brokers: list[BrokerDiagnosis]
    topics: list[TopicNote] = Field(default_factory=list)
    small_request_source: Literal["thresholds", "cost model", "default"]
    thresholds: DiagnoseThresholds
    cost_model: ModelSummary | None = None
    snapshot: ClusterSnapshot

    @property
    def exit_status(self) -> ExitStatus:
        return EXIT[self.status]


def fmt_bytes(n: float) -> str:
    for unit, size in (("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def small_request_limit(
    thresholds: DiagnoseThresholds, model: BrokerCostModel | None
) -> tuple[float, Literal["thresholds", "cost model", "default"]]:
    """The average produce request size below which requests count as small, and where it came from."""
    if thresholds.small_request_bytes is not None:
        return thresholds.small_request_bytes, "thresholds"
    even = model.network.break_even_request_bytes if model is not None else None
    if even is not None and math.isfinite(even):
        return min(
            max(even, thresholds.small_request_bytes_floor), thresholds.small_request_bytes_cap
        ), "cost model"
    if even is not None:  # bytes cost nothing in the fit: every request is "small"; use the cap
        return thresholds.small_request_bytes_cap, "cost model"
    return thresholds.small_request_bytes_default, "default"


def _idle_status(idle: float | None, t: DiagnoseThresholds) -> Status:
    if idle is None:
        return "healthy"
    if idle < t.critical_idle:
        return "critical"
    return "warning" if idle < t.warning_idle else "healthy"


def diagnose_broker(
    s: BrokerSnapshot, t: DiagnoseThresholds, model: BrokerCostModel | None, limit: float
) -> BrokerDiagnosis:
    findings: list[Finding] = []
    net_status = _idle_status(s.network_idle_ratio, t)
    hnd_status = _idle_status(s.request_handler_idle_ratio, t)
    net_busy = net_status != "healthy"
    threads = s.network_threads or t.default_network_threads
    reqs = s.produce_requests_per_s or 0.0
    per_thread = reqs / threads
    bpr = s.bytes_per_produce_request
    cut = after = None
    if s.network_idle_ratio is None and s.request_handler_idle_ratio is None:
        findings.append(Finding(kind="no_data", severity="warning", summary="no idle ratios for this broker"))
    if bpr is not None and bpr < limit and per_thread >= t.min_requests_per_thread_s:
        target = max(t.target_request_bytes, limit)
        cut = target / bpr
        records = s.records_per_produce_request
        what = "network threads saturated by small produce requests" if net_busy else "small produce requests"
        rec = f" ({records:.1f} records)" if records is not None else ""
        summary = (
            f"{what}: average produce request is {fmt_bytes(bpr)}{rec}, {reqs:.0f} req/s = "
            f"{per_thread:.0f}/s per network thread; batching to {fmt_bytes(target)} requests can cut "
            f"produce requests ~{cut:.0f}x"
        )
        evidence = {"bytes_per_request": bpr, "requests_per_s": reqs, "requests_per_thread_s": per_thread}
        if model is not None and s.bytes_in_per_s is not None:
            after = model.predict_idle(reqs / cut, s.bytes_in_per_s)
            now = model.predict_idle(reqs, s.bytes_in_per_s)
            summary += f" (cost model: network idle {now[0]:.2f} -> {after[0]:.2f})"
        findings.append(
            Finding(
                kind="small_requests",
                severity=_worst(net_status, hnd_status, "warning"),
                summary=summary,
                advice="raise the producers' linger / flush frequency and batch size (kbt recommend)",
                evidence=evidence,
            )
        )
    if s.log_flush_time_p99_ms is not None and s.log_flush_time_p99_ms >= t.flush_p99_ms:
        local = f", produce local time p99 {s.produce_local_p99_ms:.0f} ms" if s.produce_local_p99_ms else ""
        findings.append(
            Finding(
                kind="disk_flush",
                severity=_worst(hnd_status, "warning"),
                summary=f"slow disk: log flush p99 {s.log_flush_time_p99_ms:.0f} ms{local}",
                advice="check the log disks (latency, other tenants); batching does not fix a slow disk",
                evidence={"log_flush_p99_ms": s.log_flush_time_p99_ms},
            )
        )
    queue_p99 = s.produce_request_queue_p99_ms
    idle = s.request_handler_idle_ratio
    if hnd_status != "healthy" or (s.request_queue_size or 0.0) >= t.request_queue:
        findings.append(
            Finding(
                kind="handler_threads",
                severity=_worst(hnd_status, "warning"),
                summary=(
                    f"request handler threads short: handler idle {_f(idle)}, request queue "
                    f"{_f(s.request_queue_size, 1)} on average (max {_f(s.request_queue_size_max, 0)}), "
                    f"produce requests wait {_f(queue_p99, 0)} ms for a handler (p99)"
                ),
                advice="fewer requests (batching) or more num.io.threads; check produce local time",
                evidence={"handler_idle": idle or 0.0, "request_queue": s.request_queue_size or 0.0},
            )
        )
    elif queue_p99 is not None and queue_p99 >= t.request_queue_p99_ms:
        cpu = f", broker JVM on {s.cpu_cores:.2f} cores" if s.cpu_cores is not None else ""
        findings.append(
            Finding(
                kind="cpu_or_pauses",
                severity="warning",
                summary=(
                    f"produce requests wait {queue_p99:.0f} ms for a handler (p99) although the handlers "
                    f"are {_f(idle)} idle: the broker is short of CPU or pausing (GC){cpu}"
                ),
                advice="check the host's CPU (steal, other tenants) and the broker's GC pauses",
                evidence={"request_queue_p99_ms": queue_p99, "handler_idle": idle or 0.0},
            )
        )
    per_fetch = s.bytes_per_fetch_request
    out_in = (s.bytes_out_per_s or 0.0) / s.bytes_in_per_s if s.bytes_in_per_s else None
    if (
        net_busy
        and per_fetch is not None
        and per_fetch >= t.large_fetch_bytes
        and (out_in or 0) >= t.fetch_out_in_ratio
    ):
        findings.append(
            Finding(
                kind="large_fetches",
                severity=net_status,
                summary=(
                    f"network threads busy with large fetches: {fmt_bytes(per_fetch)} per fetch request, "
                    f"bytes out {out_in:.1f}x bytes in"
                ),
                advice="look for lagging consumers re-reading old data; more network threads or brokers",
                evidence={"bytes_per_fetch": per_fetch, "out_in_ratio": out_in or 0.0},
            )
        )
    if net_busy and not any(f.kind in ("small_requests", "large_fetches") for f in findings):
        findings.append(
            Finding(
                kind="network_bytes",
                severity=net_status,
                summary=(
                    f"network threads busy moving bytes: network idle {_f(s.network_idle_ratio)}, "
                    f"{fmt_bytes(s.bytes_in_per_s or 0)}/s in, {fmt_bytes(s.bytes_out_per_s or 0)}/s out, "
                    f"average produce request {fmt_bytes(bpr or 0)}"
                ),
                advice="more num.network.threads or brokers; compression cuts the bytes",
                evidence={"network_idle": s.network_idle_ratio or 0.0},
            )
        )
    status = _worst(net_status, hnd_status, *(f.severity for f in findings))
    findings.sort(key=lambda f: -_RANK[f.severity])
    return BrokerDiagnosis(
        broker=s.broker,
        status=status,
        cause=CAUSE_LABEL[findings[0].kind] if findings else "healthy",
        findings=findings,
        small_request_bytes=limit,
        requests_cut=cut,
        predicted_idle_after=after,
    )


def diagnose(
    snapshot: ClusterSnapshot, thresholds: DiagnoseThresholds, model: BrokerCostModel | None = None
) -> Diagnosis:
    limit, source = small_request_limit(thresholds, model)
    brokers = [
        diagnose_broker(b, thresholds, model, limit) if b.measured else unmeasured_broker(b, limit)
        for b in snapshot.brokers
    ]
    status = _worst("healthy", *(b.status for b in brokers))
    topics = [
        TopicNote(
            topic=t.topic,
            partition_appends_per_s=t.partition_appends_per_s,
            bytes_per_partition_append=t.bytes_per_partition_append,
            small=t.bytes_per_partition_append is not None and t.bytes_per_partition_append < limit,
        )
        for t in snapshot.topics
    ]
    summary = None
    if model is not None:
        summary = ModelSummary(
            network_r2=model.network.r2,
            handler_r2=model.handler.r2,
            n=model.n,
            break_even_request_bytes=model.network.break_even_request_bytes,
        )
    return Diagnosis(
        status=status,
        headline=headline(status, brokers),
        brokers=brokers,
        topics=topics,
        small_request_source=source,
        thresholds=thresholds,
        cost_model=summary,
        snapshot=snapshot,
    )


def headline(status: Status, brokers: list[BrokerDiagnosis]) -> str:
    if not brokers:
        return "no brokers"
    if status == "healthy":
        return f"healthy: {len(brokers)} broker(s), no finding"
    worst = max(brokers, key=lambda b: (_RANK[b.status], b.requests_cut or 0))
    affected = [b.broker for b in brokers if b.status != "healthy"]
    what = worst.findings[0].summary if worst.findings else worst.cause
    return f"{status}: broker(s) {', '.join(affected)}: {what}"


def _worst(*statuses: Status) -> Status:
    return max(statuses, key=lambda s: _RANK[s])


def _f(value: float | None, digits: int = 2) -> str:
    return "?" if value is None else f"{value:.{digits}f}"
