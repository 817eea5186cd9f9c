"""The table `kbt sweep` ends with: one row per run, sorted by produce request rate."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table

from tuner.core.text import fixed_or_dash
from tuner.spec.clients import kind_of
from tuner.store.record import RunRecord


@dataclass(frozen=True)
class SweepRow:
    name: str
    status: str
    client_requests_per_s: float | None  # None: the client does not count them (real Filebeat)
    broker_requests_per_s: float | None
    msgs_per_s: float
    mb_per_s: float
    p99_ms: float | None
    msgs_per_request: float | None
    compression_ratio: float | None
    network_idle: float | None
    handler_idle: float | None
    lost: int
    duplicates: int
    unread: int  # acked records a read-back cut short did not reach (the run is "unverified")
    problems: list[str]


def sweep_rows(records: list[RunRecord]) -> list[SweepRow]:
    rows = [
        SweepRow(
            name=r.name,
            status=r.status,
            client_requests_per_s=r.client.requests_per_s,
            broker_requests_per_s=_broker_rate(r),
            msgs_per_s=r.client.records_per_s,
            mb_per_s=r.client.mb_per_s,
            p99_ms=r.client.delivery_latency_ms.p99,
            msgs_per_request=r.client.records_per_request,
            compression_ratio=r.client.compression_ratio,
            network_idle=r.broker.network_idle_ratio if r.broker else None,
            handler_idle=r.broker.request_handler_idle_ratio if r.broker else None,
            lost=r.delivery.lost,
            duplicates=r.delivery.duplicates,
            unread=r.delivery.unread,
            problems=list(r.problems),
        )
        for r in records
    ]
    return sorted(rows, key=_rate, reverse=True)


def _rate(row: SweepRow) -> float:
    """The client's count, else the broker's (a client that counts none still sent requests)."""
    rate = row.client_requests_per_s if row.client_requests_per_s is not None else row.broker_requests_per_s
    return rate or 0.0


def _broker_rate(record: RunRecord) -> float | None:
    """The broker's count of the run's produce requests over the same span as the client's."""
    broker = record.broker
    if broker is None:
        return None
    count, _ = broker.run_produce_requests(kind_of(record.plan.profile).multi_partition_requests)
    return None if count is None else count / record.client.window_s


# "unclean" runs delivered but are no clean measurement (the client fell behind its schedule or its
# request count disagrees with the broker's): shown, in yellow, beside "ok" and "failed".
# "unverified" runs lost nothing the read-back reached, but it was cut short (magenta).
STATUS_STYLE = {"ok": "green", "failed": "red", "unverified": "magenta", "unclean": "yellow"}


def lost_cell(lost: int, duplicates: int, unread: int) -> str:
    """lost/duplicates, and the unread count of a read-back cut short (never counted lost)."""
    return f"{lost}/{duplicates}" + (f" ({unread:,} unread)" if unread else "")


# (header, SweepRow field, digits) of the figure columns between the status and lost/dup
FIGURES = (
    ("req/s client", "client_requests_per_s", 1),
    ("req/s broker", "broker_requests_per_s", 1),
    ("msgs/s", "msgs_per_s", 0),
    ("MB/s", "mb_per_s", 2),
    ("p99 ms", "p99_ms", 1),
    ("msgs/req", "msgs_per_request", 1),
    ("compr", "compression_ratio", 2),
    ("net idle", "network_idle", 3),
    ("handler idle", "handler_idle", 3),
)


def sweep_table(records: list[RunRecord], title: str = "") -> Table:
    table = Table(title=title or None, header_style="bold", title_justify="left")
    for header in ("run", "status", *(header for header, _, _ in FIGURES), "lost/dup"):
        table.add_column(header, justify="left" if header in ("run", "status") else "right")
    for row in sweep_rows(records):
        style = STATUS_STYLE.get(row.status) if row.status != "ok" else None
        figures = [fixed_or_dash(getattr(row, field), digits) for _, field, digits in FIGURES]
        status = row.status.upper() if row.status != "ok" else "ok"
        table.add_row(
            row.name, status, *figures, lost_cell(row.lost, row.duplicates, row.unread), style=style
        )
    return table
