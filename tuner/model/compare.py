"""A cluster before and after a change, side by side (pure): per broker the figures diagnose reads
(network idle, request queue, handler idle, produce requests/s, bytes per request, produce p99),
per client group what the request logs count (requests/s, bytes per request, p99 of each request's
total time). Qunar's result is this comparison: network idle 0.72 -> 0.93 on the same cluster."""

from __future__ import annotations

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.model.capture import group_key, p99, software_name
from tuner.store.capture import ClientTraffic
from tuner.store.snapshot import ClusterSnapshot


class Figures(Frozen):
    network_idle: float | None = None
    request_queue: float | None = None
    handler_idle: float | None = None
    produce_requests_per_s: float | None = None
    bytes_per_request: float | None = None
    produce_p99_ms: float | None = None


class Row(Frozen):
    name: str
    before: Figures
    after: Figures


class Comparison(Frozen):
    before_end: float
    after_end: float
    window_s: float
    brokers: list[Row] = Field(default_factory=list)
    groups: list[Row] = Field(default_factory=list)
    # The broker whose network idle was lowest before, and its idle before -> after.
    worst_broker: str | None = None


def broker_figures(snapshot: ClusterSnapshot, p99_ms: dict[str, float]) -> dict[str, Figures]:
    return {
        b.broker: Figures(
            network_idle=b.network_idle_ratio,
            request_queue=b.request_queue_size,
            handler_idle=b.request_handler_idle_ratio,
            produce_requests_per_s=b.produce_requests_per_s,
            bytes_per_request=b.bytes_per_produce_request,
            produce_p99_ms=p99_ms.get(b.broker),
        )
        for b in snapshot.brokers
        if b.measured
    }


def group_figures(rows: list[ClientTraffic], window_s: float) -> dict[str, Figures]:
    """Per client group (tuner.model.capture's grouping: the client id less its instance number, and
    the software): produce requests/s, record-batch bytes per request, p99 of the requests' time."""
    grouped: dict[str, list[ClientTraffic]] = {}
    for row in rows:
        software = software_name(row.software)
        name = f"{group_key(row.client_id)} ({software})" if software else group_key(row.client_id)
        grouped.setdefault(name, []).append(row)
    out = {}
    for name, members in grouped.items():
        requests = sum(r.requests for r in members)
        out[name] = Figures(
            produce_requests_per_s=requests / window_s if window_s > 0 else None,
            bytes_per_request=sum(r.record_bytes for r in members) / requests if requests else None,
            produce_p99_ms=p99([t for r in members for t in r.total_time_ms]),
        )
    return out


def compare(
    before: ClusterSnapshot,
    after: ClusterSnapshot,
    p99_before: dict[str, float],
    p99_after: dict[str, float],
    groups_before: dict[str, Figures],
    groups_after: dict[str, Figures],
) -> Comparison:
    b, a = broker_figures(before, p99_before), broker_figures(after, p99_after)
    empty = Figures()
    ordered = sorted({*b, *a}, key=lambda n: (len(n), n))  # broker ids in numeric order
    brokers = [Row(name=n, before=b.get(n, empty), after=a.get(n, empty)) for n in ordered]
    busiest_first = sorted(
        set(groups_before) | set(groups_after),
        key=lambda n: (-(groups_before.get(n, empty).produce_requests_per_s or 0.0), n),
    )
    groups = [
        Row(name=n, before=groups_before.get(n, empty), after=groups_after.get(n, empty))
        for n in busiest_first
    ]
    idles = [(r.before.network_idle, r.name) for r in brokers if r.before.network_idle is not None]
    return Comparison(
        before_end=before.end,
        after_end=after.end,
        window_s=before.window_s,
        brokers=brokers,
        groups=groups,
        worst_broker=min(idles)[1] if idles else None,
    )
