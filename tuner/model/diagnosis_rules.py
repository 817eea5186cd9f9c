"""The diagnosis of one broker as a table of named rules (tuner.model.diagnosis applies them).

`broker_facts` reads a broker's snapshot once against the thresholds: its idle statuses (none in the
idle meter's warm-up), whether its request queue is full, whether its traffic is too quiet to explain
a low idle, and the request cut batching can make. Each rule then looks at those facts (and at what the
rules before it found) and gives one finding or none. The order of `RULES` is the order findings
are made; the diagnosis sorts them by severity afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tuner.model.cost import BrokerCostModel
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.model.finding import Finding, Kind, Status, fmt, fmt_bytes, worst
from tuner.store.snapshot import BrokerSnapshot

QUEUE_FULL_CAUSE = "request queue full: the handlers cannot keep up with the produce request count"


@dataclass(frozen=True)
class BrokerFacts:
    """One broker's snapshot read against the thresholds, once for every rule."""

    s: BrokerSnapshot
    t: DiagnoseThresholds
    model: BrokerCostModel | None
    limit: float  # the average produce request size below which requests count as small
    threads: int  # network threads
    warm: float | None  # seconds the broker had run when the window opened, inside the meter's warm-up
    net_idle: float | None  # None in the warm-up
    hnd_idle: float | None
    net_status: Status
    hnd_status: Status
    full: bool  # the request queue sits at its cap
    unexplained: bool  # a low network idle the traffic cannot explain
    target: float  # the request size batching aims at
    cut: float | None  # produce requests batching to `target` can cut, x
    after: tuple[float, float] | None  # (network, handler) idle after that cut

    @property
    def requests_per_s(self) -> float:
        return self.s.produce_requests_per_s or 0.0

    @property
    def per_thread(self) -> float:
        return self.requests_per_s / self.threads

    @property
    def net_busy(self) -> bool:
        """The network threads are busy with traffic (not an unexplained low idle)."""
        return self.net_status != "healthy" and not self.unexplained

    @property
    def handlers_short(self) -> bool:
        return self.hnd_status != "healthy" or (self.s.request_queue_size or 0.0) >= self.t.request_queue


def broker_facts(
    s: BrokerSnapshot,
    t: DiagnoseThresholds,
    model: BrokerCostModel | None,
    limit: float,
    window_start: float | None = None,
) -> BrokerFacts:
    threads = s.network_threads or t.default_network_threads
    warm = warming_up(s, t, window_start)
    # In a broker's first minute both idle ratios read low: the network meter from its start-up
    # padding, the handlers' from a counter younger than the window.
    net_idle = None if warm is not None else s.network_idle_ratio
    hnd_idle = None if warm is not None else s.request_handler_idle_ratio
    net_status = idle_status(net_idle, t)
    # the mean request queue sits at (near) its cap, queued.max.requests
    full = (s.request_queue_size or 0.0) >= t.request_queue_near_fraction * t.queued_max_requests
    # A low network idle with too little traffic to cause it and no full queue is not a traffic
    # problem: it never leads to "critical", nor to a cause its own numbers contradict.
    unexplained = net_status != "healthy" and not full and quiet(s, t, threads)
    if unexplained:
        net_status = "warning"
    reqs = s.produce_requests_per_s or 0.0
    bpr = s.bytes_per_produce_request
    target = max(t.target_request_bytes, limit)
    cut = after = None
    # under one byte a request is a vanishing bytes rate, not a request size (no cut to promise)
    if (
        bpr
        and 1.0 <= bpr < target
        and (full or (bpr < limit and reqs / threads >= t.min_requests_per_thread_s))
    ):
        cut = target / bpr
        if model is not None and s.bytes_in_per_s is not None:
            after = model.predict_idle(reqs / cut, s.bytes_in_per_s)
        elif full and net_idle is not None and hnd_idle is not None:
            after = (idle_after_cut(net_idle, cut), idle_after_cut(hnd_idle, cut))
    return BrokerFacts(
        s, t, model, limit, threads, warm, net_idle, hnd_idle, net_status, idle_status(hnd_idle, t),
        full, unexplained, target, cut, after,
    )  # fmt: skip


def idle_status(idle: float | None, t: DiagnoseThresholds) -> Status:
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


def requests_unmeasured(s: BrokerSnapshot) -> bool:
    """Bytes came in but no produce request was counted: the request series is missing (rules or an
    allowlist leaving RequestMetrics out), not zero. (Kafka makes a request's series at its first
    request: a broker nobody produced to has none, and no bytes in either.)"""
    return s.produce_requests_per_s is None and (s.bytes_in_per_s or 0.0) > 0


def quiet(s: BrokerSnapshot, t: DiagnoseThresholds, threads: int) -> bool:
    """Traffic too small to keep a network thread busy (never said while the request count is unknown)."""
    if requests_unmeasured(s):
        return False
    reqs = (s.produce_requests_per_s or 0.0) + (s.fetch_requests_per_s or 0.0)
    moved = (s.bytes_in_per_s or 0.0) + (s.bytes_out_per_s or 0.0)
    return reqs / threads < t.quiet_requests_per_thread_s and moved / threads < t.quiet_bytes_per_thread_s


def idle_after_cut(idle: float, cut: float) -> float:
    """Network idle after a cut in produce requests by `cut`x, without a cost model: every busy
    second of the network threads (their own work per request and the time blocked on a full queue)
    scaled by the request count. Busy time that is not the requests' (a busy host, replication) does
    not scale, so this is an estimate; a cost model fitted on runs (--cost-model) predicts it."""
    return min(1.0, 1.0 - (1.0 - idle) / cut)


# The rules, in the order they are applied. Each gives one finding or none.


def no_data(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    s = f.s
    if s.network_idle_ratio is None and s.request_handler_idle_ratio is None:
        return Finding(kind="no_data", severity="warning", summary="no idle ratios for this broker")
    if not (f.net_busy and requests_unmeasured(s)):
        return None
    # Busy network threads with no request count: many small requests load them as bytes do.
    return Finding(
        kind="no_data",
        severity=f.net_status,
        summary=(
            f"network threads busy (network idle {fmt(f.net_idle)}, {fmt_bytes(s.bytes_in_per_s or 0)}/s in),"
            " but no produce request count: small requests cannot be told from bytes"
        ),
        advice="export the brokers' RequestMetrics RequestsPerSec (kbt's note names the series)",
        evidence={"network_idle": f.net_idle or 0.0},
    )


def meter_warmup(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    s, warm = f.s, f.warm
    if warm is None or (s.network_idle_ratio is None and s.request_handler_idle_ratio is None):
        return None
    when = (
        f"the broker had run {warm:.0f} s when the window opened"
        if warm >= 0
        else f"the broker started {-warm:.0f} s into the window"
    )
    return Finding(
        kind="meter_warmup",
        severity="healthy",
        summary=(
            f"idle meter warm-up: {when}; Kafka's idle ratios read low for its first "
            f"~{f.t.idle_meter_warmup_s:.0f} s (network idle {fmt(s.network_idle_ratio)}, handler idle "
            f"{fmt(s.request_handler_idle_ratio)} measured), so they are left out"
        ),
        advice="diagnose again with a window that opens after the warm-up",
        evidence={"seconds_since_start": warm},
    )


def request_queue_full(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    if not f.full:
        return None
    s, t = f.s, f.t
    bpr = s.bytes_per_produce_request
    summary = (
        f"{QUEUE_FULL_CAUSE}: request queue {fmt(s.request_queue_size, 1)} on average of "
        f"queued.max.requests {t.queued_max_requests} (max {fmt(s.request_queue_size_max, 0)}), handler "
        f"idle {fmt(f.hnd_idle)}, network idle {fmt(f.net_idle)} (network threads blocked "
        f"on the full queue count as busy), {f.requests_per_s:.0f} produce req/s of "
        f"{fmt_bytes(bpr or 0)}"
    )
    evidence = {
        "request_queue": s.request_queue_size or 0.0,
        "queued_max_requests": float(t.queued_max_requests),
        "handler_idle": f.hnd_idle or 0.0,
        "requests_per_s": f.requests_per_s,
    }
    if bpr is not None:
        evidence["bytes_per_request"] = bpr
    if f.cut is not None:
        summary += f"; batching to {fmt_bytes(f.target)} requests can cut produce requests ~{f.cut:.0f}x"
        evidence["requests_cut"] = f.cut
        if f.after is not None:
            how = "cost model" if f.model is not None else "busy time scaled by the request count"
            summary += f", network idle {fmt(f.net_idle)} -> ~{f.after[0]:.2f} after it ({how})"
            evidence["predicted_network_idle_after"] = f.after[0]
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


def small_requests(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    # Without a full queue, a cut is made only for requests small and frequent enough to cut.
    if f.full or f.cut is None:
        return None  # a full queue's finding names the cut itself
    s, bpr = f.s, f.s.bytes_per_produce_request or 0.0
    records = s.records_per_produce_request
    what = "network threads saturated by small produce requests" if f.net_busy else "small produce requests"
    rec = f" ({records:.1f} records)" if records is not None else ""
    summary = (
        f"{what}: average produce request is {fmt_bytes(bpr)}{rec}, {f.requests_per_s:.0f} req/s = "
        f"{f.per_thread:.0f}/s per network thread; batching to {fmt_bytes(f.target)} requests can cut "
        f"produce requests ~{f.cut:.0f}x"
    )
    if f.model is not None and s.bytes_in_per_s is not None and f.after is not None:
        now = f.model.predict_idle(f.requests_per_s, s.bytes_in_per_s)
        summary += f" (cost model: network idle {now[0]:.2f} -> {f.after[0]:.2f})"
    return Finding(
        kind="small_requests",
        severity=worst(f.net_status, f.hnd_status, "warning"),
        summary=summary,
        advice="raise the producers' linger / flush frequency and batch size (kbt recommend)",
        evidence={
            "bytes_per_request": bpr,
            "requests_per_s": f.requests_per_s,
            "requests_per_thread_s": f.per_thread,
        },
    )


def disk_flush(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    s = f.s
    if s.log_flush_time_p99_ms is None or s.log_flush_time_p99_ms < f.t.flush_p99_ms:
        return None
    local = f", produce local time p99 {s.produce_local_p99_ms:.0f} ms" if s.produce_local_p99_ms else ""
    return Finding(
        kind="disk_flush",
        severity=worst(f.hnd_status, "warning"),
        summary=f"slow disk: log flush p99 {s.log_flush_time_p99_ms:.0f} ms{local}",
        advice="check the log disks (latency, other tenants); batching does not fix a slow disk",
        evidence={"log_flush_p99_ms": s.log_flush_time_p99_ms},
    )


def handler_threads(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    if f.full or not f.handlers_short:
        return None  # a full queue's finding gives the handler figures
    s = f.s
    return Finding(
        kind="handler_threads",
        severity=worst(f.hnd_status, "warning"),
        summary=(
            f"request handler threads short: handler idle {fmt(f.hnd_idle)}, request queue "
            f"{fmt(s.request_queue_size, 1)} on average (max {fmt(s.request_queue_size_max, 0)}), "
            f"produce requests wait {fmt(s.produce_request_queue_p99_ms, 0)} ms for a handler (p99)"
        ),
        advice="fewer requests (batching) or more num.io.threads; check produce local time",
        evidence={"handler_idle": f.hnd_idle or 0.0, "request_queue": s.request_queue_size or 0.0},
    )


def cpu_or_pauses(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    """Requests wait for a handler although the handlers are idle: the broker itself is short."""
    queue_p99 = f.s.produce_request_queue_p99_ms
    if f.full or f.handlers_short or queue_p99 is None or queue_p99 < f.t.request_queue_p99_ms:
        return None
    cpu = f", broker JVM on {f.s.cpu_cores:.2f} cores" if f.s.cpu_cores is not None else ""
    return Finding(
        kind="cpu_or_pauses",
        severity="warning",
        summary=(
            f"produce requests wait {queue_p99:.0f} ms for a handler (p99) although the handlers "
            f"are {fmt(f.hnd_idle)} idle: the broker is short of CPU or pausing (GC){cpu}"
        ),
        advice="check the host's CPU (steal, other tenants) and the broker's GC pauses",
        evidence={"request_queue_p99_ms": queue_p99, "handler_idle": f.hnd_idle or 0.0},
    )


def large_fetches(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    s, t = f.s, f.t
    per_fetch = s.bytes_per_fetch_request
    # bytes out per byte in; a vanishing bytes-in rate gives no ratio (as in store.snapshot.bounded_ratio)
    bytes_in = s.bytes_in_per_s or 0.0
    out_in = (s.bytes_out_per_s or 0.0) / bytes_in if bytes_in >= 1.0 else None
    if (
        not f.net_busy
        or per_fetch is None
        or per_fetch < t.large_fetch_bytes
        or (out_in or 0) < t.fetch_out_in_ratio
    ):
        return None
    return Finding(
        kind="large_fetches",
        severity=f.net_status,
        summary=(
            f"network threads busy with large fetches: {fmt_bytes(per_fetch)} per fetch request, "
            f"bytes out {out_in:.1f}x bytes in"
        ),
        advice="look for lagging consumers re-reading old data; more network threads or brokers",
        evidence={"bytes_per_fetch": per_fetch, "out_in_ratio": out_in or 0.0},
    )


def unexplained_idle(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    if not f.unexplained:
        return None
    s = f.s
    reqs = (s.produce_requests_per_s or 0.0) + (s.fetch_requests_per_s or 0.0)
    moved = (s.bytes_in_per_s or 0.0) + (s.bytes_out_per_s or 0.0)
    none = (s.produce_requests_per_s or 0.0) < 1 and moved < 1024  # fetches of idle followers aside
    what = "no traffic" if none else "too little traffic to keep a network thread busy"
    cpu = f"; the broker JVM used {s.cpu_cores:.2f} cores" if s.cpu_cores is not None else ""
    return Finding(
        kind="unexplained_idle",
        severity="warning",
        summary=(
            f"low network idle {fmt(s.network_idle_ratio)} with {what} ({s.produce_requests_per_s or 0:.0f} "
            f"produce req/s, {fmt_bytes(s.bytes_in_per_s or 0)}/s in, {fmt_bytes(s.bytes_out_per_s or 0)}/s "
            f"out, request queue {fmt(s.request_queue_size, 1)}){cpu}: not network load. Kafka's idle meter "
            "counts a network thread waiting for a CPU core as busy (a host busy with other work, GC pauses)"
        ),
        advice="check the host's CPU and load (other processes, steal) and the broker's GC pauses",
        evidence={
            "network_idle": s.network_idle_ratio or 0.0,
            "requests_per_thread_s": reqs / f.threads,
            "bytes_per_thread_s": moved / f.threads,
        },
    )


def network_bytes(f: BrokerFacts, found: Sequence[Finding]) -> Finding | None:
    """Busy network threads that no rule before explained: the bytes they move."""
    explained = {"request_queue_full", "small_requests", "large_fetches"}
    if not f.net_busy or requests_unmeasured(f.s) or any(x.kind in explained for x in found):
        return None
    s = f.s
    return Finding(
        kind="network_bytes",
        severity=f.net_status,
        summary=(
            f"network threads busy moving bytes: network idle {fmt(f.net_idle)}, "
            f"{fmt_bytes(s.bytes_in_per_s or 0)}/s in, {fmt_bytes(s.bytes_out_per_s or 0)}/s out, "
            f"average produce request {fmt_bytes(s.bytes_per_produce_request or 0)}"
        ),
        advice="more num.network.threads or brokers; compression cuts the bytes",
        evidence={"network_idle": f.net_idle or 0.0},
    )


class Rule(NamedTuple):
    kind: Kind  # the kind of finding the rule makes
    apply: Callable[[BrokerFacts, Sequence[Finding]], Finding | None]


RULES: tuple[Rule, ...] = (
    Rule("no_data", no_data),
    Rule("meter_warmup", meter_warmup),
    Rule("request_queue_full", request_queue_full),
    Rule("small_requests", small_requests),
    Rule("disk_flush", disk_flush),
    Rule("handler_threads", handler_threads),
    Rule("cpu_or_pauses", cpu_or_pauses),
    Rule("large_fetches", large_fetches),
    Rule("unexplained_idle", unexplained_idle),
    Rule("network_bytes", network_bytes),
)
