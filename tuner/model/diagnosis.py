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
from typing import Annotated, Literal

from pydantic import Field

from tuner.core.errors import ExitStatus
from tuner.core.frozen import Frozen
from tuner.core.units import Count, Entries, Figure, PerRequest, Rate, Ratio, Size, Text
from tuner.model.clients import ClientEstimate, attribute_clients
from tuner.model.cost import BrokerCostModel
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.diagnosis_scrape import unmeasured_broker
from tuner.store.snapshot import BrokerSnapshot, ClusterSnapshot

Status = Literal["healthy", "warning", "critical"]
Kind = Literal[
    "request_queue_full",
    "small_requests",
    "network_bytes",
    "handler_threads",
    "cpu_or_pauses",
    "disk_flush",
    "large_fetches",
    "unexplained_idle",
    "meter_warmup",
    "no_data",
]
_RANK: dict[Status, int] = {"healthy": 0, "warning": 1, "critical": 2}
EXIT: dict[Status, ExitStatus] = {
    "healthy": ExitStatus.OK,
    "warning": ExitStatus.WARNING,
    "critical": ExitStatus.CRITICAL,
}
CAUSE_LABEL: dict[Kind, str] = {
    "request_queue_full": "request queue full",
    "small_requests": "small requests",
    "network_bytes": "network bytes",
    "handler_threads": "handler threads",
    "cpu_or_pauses": "CPU or GC pauses",
    "disk_flush": "disk flush",
    "large_fetches": "large fetches",
    "unexplained_idle": "low idle without the traffic to explain it",
    "meter_warmup": "idle meter warm-up",
    "no_data": "no data",
}
QUEUE_FULL_CAUSE = "request queue full: the handlers cannot keep up with the produce request count"


class Finding(Frozen):
    kind: Kind
    severity: Status
    summary: Text  # one line, with the evidence in it
    advice: Text = ""
    evidence: Annotated[dict[Text, Figure], Entries] = Field(default_factory=dict)


class BrokerDiagnosis(Frozen):
    broker: Text
    status: Status
    cause: Text  # "healthy" or the label of the leading finding
    findings: Annotated[list[Finding], Entries] = Field(default_factory=list)
    small_request_bytes: Size  # the size limit used for this broker
    requests_cut: PerRequest | None = None  # "batching can cut requests ~Nx": target bytes / 1 at most
    predicted_idle_after: tuple[Ratio, Ratio] | None = None  # cost model, after that cut


class TopicNote(Frozen):
    topic: Text
    partition_appends_per_s: Rate  # once per partition batch, not per request
    bytes_per_partition_append: Size | None
    small: bool


class ModelSummary(Frozen):
    network_r2: Ratio
    handler_r2: Ratio
    n: Count
    break_even_request_bytes: Size | None


class Diagnosis(Frozen):
    status: Status
    headline: Text
    brokers: Annotated[list[BrokerDiagnosis], Entries]
    topics: Annotated[list[TopicNote], Entries] = Field(default_factory=list)
    small_request_source: Literal["thresholds", "cost model", "default"]
    thresholds: DiagnoseThresholds
    cost_model: ModelSummary | None = None
    # the clients the per-client quota sensors saw, busiest first (tuner.model.clients)
    clients: Annotated[list[ClientEstimate], Entries] = Field(default_factory=list)
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


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _idle_status(idle: float | None, t: DiagnoseThresholds) -> Status:
    if idle is None:
        return "healthy"
    if idle < t.critical_idle:
        return "critical"
    return "warning" if idle < t.warning_idle else "healthy"


def warming_up(s: BrokerSnapshot, t: DiagnoseThresholds, window_start: float | None) -> float | None:
    """Seconds the broker had run when the window opened, when that is within the idle meter's
    warm-up (its network idle then includes start-up padding); None otherwise."""
    if s.started_at is None or window_start is None:
        return None
    age = window_start - s.started_at
    return age if age < t.idle_meter_warmup_s else None


def queue_full(s: BrokerSnapshot, t: DiagnoseThresholds) -> bool:
    """The mean request queue sits at (near) its cap, queued.max.requests."""
    return (s.request_queue_size or 0.0) >= t.request_queue_near_fraction * t.queued_max_requests


def quiet(s: BrokerSnapshot, t: DiagnoseThresholds, threads: int) -> bool:
    """Traffic too small to keep a network thread busy."""
    reqs = (s.produce_requests_per_s or 0.0) + (s.fetch_requests_per_s or 0.0)
    moved = (s.bytes_in_per_s or 0.0) + (s.bytes_out_per_s or 0.0)
    return reqs / threads < t.quiet_requests_per_thread_s and moved / threads < t.quiet_bytes_per_thread_s


def idle_after_cut(idle: float | None, cut: float) -> float | None:
    """Network idle after a cut in produce requests by `cut`x, without a cost model: every busy
    second of the network threads (their own work per request and the time blocked on a full queue)
    scaled by the request count. Busy time that is not the requests' (a busy host, replication) does
    not scale, so this is an estimate; a cost model fitted on runs (--cost-model) predicts it."""
    if idle is None or cut <= 0:
        return None
    return min(1.0, 1.0 - (1.0 - idle) / cut)


def _traffic_text(s: BrokerSnapshot) -> str:
    return (
        f"{s.produce_requests_per_s or 0:.0f} produce req/s, {fmt_bytes(s.bytes_in_per_s or 0)}/s in, "
        f"{fmt_bytes(s.bytes_out_per_s or 0)}/s out"
    )


def diagnose_broker(
    s: BrokerSnapshot,
    t: DiagnoseThresholds,
    model: BrokerCostModel | None,
    limit: float,
    window_start: float | None = None,
) -> BrokerDiagnosis:
    findings: list[Finding] = []
    threads = s.network_threads or t.default_network_threads
    warm = warming_up(s, t, window_start)
    # In a broker's first minute both idle ratios read low: the network meter from its start-up
    # padding, the handlers' from a counter younger than the window.
    net_idle = None if warm is not None else s.network_idle_ratio
    hnd_idle = None if warm is not None else s.request_handler_idle_ratio
    net_status = _idle_status(net_idle, t)
    hnd_status = _idle_status(hnd_idle, t)
    full = queue_full(s, t)
    # A low network idle with too little traffic to cause it and no full queue is not a traffic
    # problem: it never leads to "critical", nor to a cause its own numbers contradict.
    unexplained = net_status != "healthy" and not full and quiet(s, t, threads)
    if unexplained:
        net_status = "warning"
    net_busy = net_status != "healthy" and not unexplained
    reqs = s.produce_requests_per_s or 0.0
    per_thread = reqs / threads
    bpr = s.bytes_per_produce_request
    cut = after = None
    if s.network_idle_ratio is None and s.request_handler_idle_ratio is None:
        findings.append(Finding(kind="no_data", severity="warning", summary="no idle ratios for this broker"))
    if warm is not None and (s.network_idle_ratio is not None or s.request_handler_idle_ratio is not None):
        when = (
            f"the broker had run {warm:.0f} s when the window opened"
            if warm >= 0
            else f"the broker started {-warm:.0f} s into the window"
        )
        findings.append(
            Finding(
                kind="meter_warmup",
                severity="healthy",
                summary=(
                    f"idle meter warm-up: {when}; Kafka's idle ratios read low for its first "
                    f"~{t.idle_meter_warmup_s:.0f} s (network idle {_f(s.network_idle_ratio)}, handler idle "
                    f"{_f(s.request_handler_idle_ratio)} measured), so they are left out"
                ),
                advice="diagnose again with a window that opens after the warm-up",
                evidence={"seconds_since_start": warm},
            )
        )
    target = max(t.target_request_bytes, limit)
    # under one byte a request is a vanishing bytes rate, not a request size (no cut to promise)
    if bpr and 1.0 <= bpr < target and (full or (bpr < limit and per_thread >= t.min_requests_per_thread_s)):
        cut = target / bpr
        if model is not None and s.bytes_in_per_s is not None:
            after = model.predict_idle(reqs / cut, s.bytes_in_per_s)
        elif full and net_idle is not None and hnd_idle is not None:
            after = (idle_after_cut(net_idle, cut) or 0.0, idle_after_cut(hnd_idle, cut) or 0.0)
    if full:
        findings.append(_queue_full_finding(s, model, t, net_idle, hnd_idle, cut, after, target))
    elif bpr is not None and bpr < limit and per_thread >= t.min_requests_per_thread_s and cut is not None:
        records = s.records_per_produce_request
        what = "network threads saturated by small produce requests" if net_busy else "small produce requests"
        rec = f" ({records:.1f} records)" if records is not None else ""
        summary = (
            f"{what}: average produce request is {fmt_bytes(bpr)}{rec}, {reqs:.0f} req/s = "
            f"{per_thread:.0f}/s per network thread; batching to {fmt_bytes(target)} requests can cut "
            f"produce requests ~{cut:.0f}x"
        )
        evidence = {"bytes_per_request": bpr, "requests_per_s": reqs, "requests_per_thread_s": per_thread}
        if model is not None and s.bytes_in_per_s is not None and after is not None:
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
    idle = hnd_idle
    if full:
        pass  # the queue-full finding says it, with the handler figures
    elif hnd_status != "healthy" or (s.request_queue_size or 0.0) >= t.request_queue:
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
    # bytes out per byte in; a vanishing bytes-in rate gives no ratio (as in store.snapshot._ratio)
    bytes_in = s.bytes_in_per_s or 0.0
    out_in = (s.bytes_out_per_s or 0.0) / bytes_in if bytes_in >= 1.0 else None
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
    if unexplained:
        findings.append(_unexplained_finding(s, t, threads))
    elif net_busy and not any(
        f.kind in ("request_queue_full", "small_requests", "large_fetches") for f in findings
    ):
        findings.append(
            Finding(
                kind="network_bytes",
                severity=net_status,
                summary=(
                    f"network threads busy moving bytes: network idle {_f(net_idle)}, "
                    f"{fmt_bytes(s.bytes_in_per_s or 0)}/s in, {fmt_bytes(s.bytes_out_per_s or 0)}/s out, "
                    f"average produce request {fmt_bytes(bpr or 0)}"
                ),
                advice="more num.network.threads or brokers; compression cuts the bytes",
                evidence={"network_idle": net_idle or 0.0},
            )
        )
    status = _worst(net_status, hnd_status, *(f.severity for f in findings))
    findings.sort(key=lambda f: (-_RANK[f.severity], f.kind != "request_queue_full"))
    return BrokerDiagnosis(
        broker=s.broker,
        status=status,
        cause=CAUSE_LABEL[findings[0].kind] if findings else "healthy",
        findings=findings,
        small_request_bytes=limit,
        requests_cut=cut,
        predicted_idle_after=after,
    )


def _queue_full_finding(
    s: BrokerSnapshot,
    model: BrokerCostModel | None,
    t: DiagnoseThresholds,
    net_idle: float | None,
    hnd_idle: float | None,
    cut: float | None,
    after: tuple[float, float] | None,
    target: float,
) -> Finding:
    bpr = s.bytes_per_produce_request
    summary = (
        f"{QUEUE_FULL_CAUSE}: request queue {_f(s.request_queue_size, 1)} on average of "
        f"queued.max.requests {t.queued_max_requests} (max {_f(s.request_queue_size_max, 0)}), handler "
        f"idle {_f(hnd_idle)}, network idle {_f(net_idle)} (network threads blocked "
        f"on the full queue count as busy), {s.produce_requests_per_s or 0:.0f} produce req/s of "
        f"{fmt_bytes(bpr or 0)}"
    )
    evidence = {
        "request_queue": s.request_queue_size or 0.0,
        "queued_max_requests": float(t.queued_max_requests),
        "handler_idle": hnd_idle or 0.0,
        "requests_per_s": s.produce_requests_per_s or 0.0,
    }
    if bpr is not None:
        evidence["bytes_per_request"] = bpr
    if cut is not None:
        summary += f"; batching to {fmt_bytes(target)} requests can cut produce requests ~{cut:.0f}x"
        evidence["requests_cut"] = cut
        if after is not None:
            how = "cost model" if model is not None else "busy time scaled by the request count"
            summary += f", network idle {_f(net_idle)} -> ~{after[0]:.2f} after it ({how})"
            evidence["predicted_network_idle_after"] = after[0]
    return Finding(
        kind="request_queue_full",
        # A full queue stops the network threads reading: critical whatever the idle meters say.
        severity="critical",
        summary=summary,
        advice=(
            "cut the produce request count (batching: kbt recommend), or give the handlers more capacity "
            "(num.io.threads, faster log appends)"
        ),
        evidence=evidence,
    )


def _unexplained_finding(s: BrokerSnapshot, t: DiagnoseThresholds, threads: int) -> Finding:
    reqs = (s.produce_requests_per_s or 0.0) + (s.fetch_requests_per_s or 0.0)
    moved = (s.bytes_in_per_s or 0.0) + (s.bytes_out_per_s or 0.0)
    none = (s.produce_requests_per_s or 0.0) < 1 and moved < 1024  # fetches of idle followers aside
    what = "no traffic" if none else "too little traffic to keep a network thread busy"
    cpu = f"; the broker JVM used {s.cpu_cores:.2f} cores" if s.cpu_cores is not None else ""
    return Finding(
        kind="unexplained_idle",
        severity="warning",
        summary=(
            f"low network idle {_f(s.network_idle_ratio)} with {what} ({_traffic_text(s)}, request queue "
            f"{_f(s.request_queue_size, 1)}){cpu}: not network load. Kafka's idle meter counts a "
            "network thread waiting for a CPU core as busy (a host busy with other work, GC pauses)"
        ),
        advice="check the host's CPU and load (other processes, steal) and the broker's GC pauses",
        evidence={
            "network_idle": s.network_idle_ratio or 0.0,
            "requests_per_thread_s": reqs / threads,
            "bytes_per_thread_s": moved / threads,
        },
    )


def diagnose(
    snapshot: ClusterSnapshot, thresholds: DiagnoseThresholds, model: BrokerCostModel | None = None
) -> Diagnosis:
    limit, source = small_request_limit(thresholds, model)
    opened = snapshot.end - snapshot.window_s
    brokers = [
        diagnose_broker(b, thresholds, model, limit, opened) if b.measured else unmeasured_broker(b, limit)
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
            # bytes that cost nothing in the fit give no finite break-even (JSON holds no infinity)
            break_even_request_bytes=_finite(model.network.break_even_request_bytes),
        )
    return Diagnosis(
        status=status,
        headline=headline(status, brokers),
        brokers=brokers,
        topics=topics,
        small_request_source=source,
        thresholds=thresholds,
        cost_model=summary,
        clients=attribute_clients(snapshot, max(thresholds.target_request_bytes, limit)),
        snapshot=snapshot,
    )


def headline(status: Status, brokers: list[BrokerDiagnosis]) -> str:
    if not brokers:
        return "no brokers"
    if status == "healthy":
        noted = [b for b in brokers if b.findings]
        if not noted:
            return f"healthy: {len(brokers)} broker(s), no finding"
        return f"healthy: {len(brokers)} broker(s); broker {noted[0].broker}: {noted[0].findings[0].summary}"
    worst = max(brokers, key=lambda b: (_RANK[b.status], b.requests_cut or 0))
    affected = [b.broker for b in brokers if b.status != "healthy"]
    what = worst.findings[0].summary if worst.findings else worst.cause
    return f"{status}: broker(s) {', '.join(affected)}: {what}"


def _worst(*statuses: Status) -> Status:
    return max(statuses, key=lambda s: _RANK[s])


def _f(value: float | None, digits: int = 2) -> str:
    return "?" if value is None else f"{value:.{digits}f}"
