"""Which clients send the small produce requests: Kafka's per-client quota sensors, turned into each
client's share of the brokers' thread time, its bytes, an estimated produce request rate and the
gain from batching it.

    estimates = attribute_clients(snapshot, target_bytes=16384)   # busiest first

Kafka keeps, per user / client-id once any client quota is set (ClientQuotaManager and
ClientRequestQuotaManager, Kafka 4.1), a Rate of the thread time the client's requests used
(request-time: the handler's time from taking the request to its local completion, plus the network
thread's time reading it and sending the response) and a Rate of its produce request bytes
(byte-rate). Neither counts requests. The request rate is estimated per broker as the broker's
measured produce request rate (RequestMetrics) split by the producing clients' shares of
request-time there, summed over the brokers:

    n(client, broker) = N(broker) x T(client, broker) / sum of T over the broker's producing clients

That is exact when every produce request costs the same thread time. It does not: a request's time
grows with its size, by how much changes from one window to the next (a 17 KB request cost 1.0x to
2.7x a 350 B one on the same lab), so the split overstates the clients whose requests cost more
than the broker's average request and understates the others. Which side a client is on is known
for the clients of the largest and of the smallest requests (while a request's cost is a fixed part
plus a part growing no faster than its size, as measured), so their estimates say they are bounds:
`rate_bound` "at_most" and "at_least". A size term (thread time =
n x a + bytes x b, the brokers' request and byte counts as constraints) was tried and is not used:
no fixed per-byte cost, nor one fitted per window by least squares, beat the plain split
(docs/benchmarks.md "Which clients" has the figures). The ranking by request-time share does not
depend on it.

The brokers' request logs (kafka.request.logger at DEBUG, `kbt diagnose --request-log`) count each
client's produce requests exactly: where a client has those counts, its rate, bytes per request and
partitions per request are the log's (`counted`, no bound), and a client the sensors did not see is
listed from the log alone (no thread time). Pure: no I/O.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import ByteRate, Cores, Entries, PerRequest, Rate, Ratio, Size, Text
from tuner.store.snapshot import ClientRequests, ClientSnapshot, ClusterSnapshot, bounded_ratio, client_name

SIZE_TIE = 1e-6  # request sizes this close (relative) are one size: no client is above the other


class ClientEstimate(Frozen):
    """One client over the window, summed over the brokers."""

    client: Text  # client-id (and user) as Kafka keys its sensors
    client_id: Text = ""
    user: Text = ""
    # network + handler thread time its requests used, in threads; None: the sensors did not see it
    request_threads: Cores | None = None
    time_share: Ratio | None = None  # of the thread time of every client the sensors saw
    produce_bytes_per_s: ByteRate
    # estimated from the brokers' produce request rates, split by request-time share (module doc)
    produce_requests_per_s: Rate | None = None
    bytes_per_request: Size | None = None
    requests_cut: PerRequest | None = None  # batching to target_bytes would cut its requests ~Nx
    threads_freed: Cores | None = None  # thread time that cut frees, at most (per-request cost)
    # estimated produce req/s per broker
    by_broker: Annotated[dict[Text, Rate], Entries] = Field(default_factory=dict)
    # the largest requests of all clients: the split overstates the rate (at most); the smallest: it
    # understates it (at least); None in between or without an estimate
    rate_bound: Literal["at_most", "at_least"] | None = None
    counted: bool = False  # the rate is the request logs' count, not an estimate
    software: Text = ""  # the client's own name and version, from the request logs
    partitions_per_request: PerRequest | None = None  # from the request logs


def attribute_clients(snapshot: ClusterSnapshot, target_bytes: float) -> list[ClientEstimate]:
    """Every client the sensors or the request logs saw, by produce request rate (counted or
    estimated) then thread time, busiest first; empty without either."""
    sensed = _from_sensors(snapshot, target_bytes) if snapshot.clients else []
    out = _counted(sensed, snapshot.client_requests, target_bytes) if snapshot.client_requests else sensed
    return sorted(
        out, key=lambda e: (-(e.produce_requests_per_s or 0.0), -(e.request_threads or 0.0), e.client)
    )


def _from_sensors(snapshot: ClusterSnapshot, target_bytes: float) -> list[ClientEstimate]:
    rates = {b.broker: b.produce_requests_per_s for b in snapshot.brokers if b.measured}
    total_threads = sum(c.request_threads for c in snapshot.clients)
    per_broker: dict[str, dict[tuple[str, str], float]] = {}
    for broker, rate in rates.items():
        producers = [c for c in snapshot.clients if c.broker == broker and c.produce_bytes_per_s > 0]
        spent = sum(c.request_threads for c in producers)
        if rate is None or spent <= 0:
            continue
        per_broker[broker] = {(c.client_id, c.user): rate * (c.request_threads / spent) for c in producers}
    grouped: dict[tuple[str, str], list[ClientSnapshot]] = {}
    for c in snapshot.clients:
        grouped.setdefault((c.client_id, c.user), []).append(c)
    out = [_estimate(key, rows, total_threads, per_broker, target_bytes) for key, rows in grouped.items()]
    sizes = [e.bytes_per_request for e in out if e.bytes_per_request is not None]
    if sizes and max(sizes) > min(sizes) * (1 + SIZE_TIE):
        out = [e.model_copy(update={"rate_bound": _bound(e.bytes_per_request, sizes)}) for e in out]
    return out


def _counted(
    sensed: list[ClientEstimate], logged: list[ClientRequests], target_bytes: float
) -> list[ClientEstimate]:
    """The sensors' clients with the request logs' counts where the logs have them, and the clients
    only the logs saw. A log row joins the sensors' client of its client-id and user (the principal;
    a client-id quota's sensors have no user, so they take every principal of the id)."""
    joined: dict[tuple[str, str], tuple[ClientEstimate | None, list[ClientRequests]]] = {}
    for c in logged:
        user = "" if c.principal == "ANONYMOUS" else c.principal
        match = next((e for e in sensed if e.client_id == c.client_id and e.user in ("", user)), None)
        key = (match.client_id, match.user) if match is not None else (c.client_id, user)
        joined.setdefault(key, (match, []))[1].append(c)
    unlogged = [e for e in sensed if (e.client_id, e.user) not in joined]
    return unlogged + [_with_counts(match, key, rows, target_bytes) for key, (match, rows) in joined.items()]


def _with_counts(
    sensed: ClientEstimate | None, key: tuple[str, str], counts: list[ClientRequests], target_bytes: float
) -> ClientEstimate:
    requests = sum(c.produce_requests_per_s for c in counts)
    produced = sum(c.produce_bytes_per_s for c in counts)
    parts = sum((c.partitions_per_request or 0.0) * c.produce_requests_per_s for c in counts)
    size = bounded_ratio(produced, requests)
    cut, freed = _cut(size, sensed.request_threads if sensed is not None else None, target_bytes)
    software = sorted({c.software for c in counts if c.software})
    figures: dict[str, Any] = {
        "produce_requests_per_s": requests,
        "produce_bytes_per_s": produced,
        "bytes_per_request": size,
        "requests_cut": cut,
        "threads_freed": freed,
        "by_broker": {},
        "rate_bound": None,
        "counted": True,
        "software": ", ".join(software),
        "partitions_per_request": bounded_ratio(parts, requests),
    }
    if sensed is not None:
        return sensed.model_copy(update=figures)
    client_id, user = key
    return ClientEstimate(client=client_name(client_id, user), client_id=client_id, user=user, **figures)


def _estimate(
    key: tuple[str, str],
    rows: list[ClientSnapshot],
    total_threads: float,
    per_broker: dict[str, dict[tuple[str, str], float]],
    target_bytes: float,
) -> ClientEstimate:
    threads = sum(r.request_threads for r in rows)
    produced = sum(r.produce_bytes_per_s for r in rows)
    by_broker = {b: split[key] for b, split in per_broker.items() if key in split}
    requests = sum(by_broker.values()) if by_broker else None
    size = bounded_ratio(produced, requests)
    cut, freed = _cut(size, threads, target_bytes)
    return ClientEstimate(
        client=rows[0].name,
        client_id=key[0],
        user=key[1],
        request_threads=threads,
        time_share=threads / total_threads if total_threads > 0 else 0.0,
        produce_bytes_per_s=produced,
        produce_requests_per_s=requests,
        bytes_per_request=size,
        requests_cut=cut,
        threads_freed=freed,
        by_broker=by_broker,
    )


def _cut(size: float | None, threads: float | None, target_bytes: float) -> tuple[float | None, float | None]:
    """How many times batching to target_bytes cuts requests of `size` (None under one byte or at
    the target already), and the thread time that frees at most (None without thread time)."""
    if size is None or not 1.0 <= size < target_bytes:
        return None, None
    cut = target_bytes / size
    return cut, threads * (1.0 - 1.0 / cut) if threads is not None else None


def _bound(size: float | None, sizes: list[float]) -> Literal["at_most", "at_least"] | None:
    """The client of the largest requests spends the most thread time per request, more than the
    average: the split overstates its rate; the client of the smallest requests, the other way.
    (A client in between may be either side of the average cost.) The estimated sizes keep the
    true sizes' order while a request's cost grows no faster than its size (measured: slower)."""
    if size is None:
        return None
    if size >= max(sizes) / (1 + SIZE_TIE):
        return "at_most"
    return "at_least" if size <= min(sizes) * (1 + SIZE_TIE) else None
