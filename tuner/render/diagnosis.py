"""What `kbt diagnose` prints: a per-broker table, the findings with their evidence, top topics;
and a `kbt diagnose --json` file read back (`read_diagnosis`: `kbt forecast --diagnosis`, the
capture bench's acceptance)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tuner.core.errors import BadInput
from tuner.core.inputs import read_json
from tuner.core.net import without_secrets
from tuner.core.text import escape_controls, or_dash, value
from tuner.model.diagnosis import Diagnosis
from tuner.model.finding import fmt_bytes
from tuner.render.envelope import unwrap
from tuner.store.snapshot import BrokerSnapshot

STYLE = {"healthy": "green", "warning": "yellow", "critical": "red"}


def read_diagnosis(path: Path, shown: str) -> Diagnosis:
    """A `kbt diagnose --json` file, with or without its envelope; BadInput when it is not one,
    `shown` naming it in the line (`--diagnosis PATH`, or the path)."""
    from pydantic import ValidationError

    from tuner.store.document import OUT_OF_BOUNDS, field_problem

    raw = read_json(path, "diagnosis")
    try:
        return Diagnosis.model_validate(unwrap(raw))
    except ValidationError as exc:
        if exc.errors(include_url=False)[0]["type"] in OUT_OF_BOUNDS:  # one figure past its bound
            raise BadInput(f"{shown}: invalid diagnosis: {field_problem(exc)}") from None
        raise BadInput(f"{shown}: not a `kbt diagnose --json` file") from None


def _bytes(value: float | None) -> str:
    return "-" if value is None else fmt_bytes(value)


def broker_table(d: Diagnosis) -> Table:
    window = f"{d.snapshot.window_s:g} s"
    # the URL without its user info or query (a record written before this held them whole); labels
    # from Prometheus as Text (no rich markup) on one line: a label can hold anything
    shown = value(without_secrets(d.snapshot.prometheus)) if "://" in d.snapshot.prometheus else "?"
    table = Table(title=Text(f"brokers over the last {window} ({shown})"), title_justify="left")
    for col in (
        "broker",
        "status",
        "cause",
        "produce req/s",
        "B/request",
        "net idle",
        "busiest thread",
        "handler idle",
        "req queue",
        "produce P999",
        "flush p99",
        "fetch req/s",
        "MB/s in/out",
    ):
        table.add_column(col, justify="left" if col in ("broker", "status", "cause") else "right")
    snaps: dict[str, BrokerSnapshot] = {b.broker: b for b in d.snapshot.brokers}
    for b in d.brokers:
        s = snaps[b.broker]
        per_thread = s.produce_requests_per_network_thread
        reqs = or_dash(s.produce_requests_per_s, "{:.1f}")
        if per_thread is not None:
            reqs += f" ({per_thread:.0f}/thr)"
        if (parts := s.partitions_per_produce_request) is not None:
            reqs += f" {parts:.1f} part/req"
        table.add_row(
            Text(value(b.broker)),
            Text(b.status, style=STYLE[b.status]),
            b.cause,
            reqs,
            _bytes(s.bytes_per_produce_request),
            or_dash(s.network_idle_ratio, "{:.3f}"),
            or_dash(s.busiest_network_thread_idle_ratio, "{:.3f}"),
            or_dash(s.request_handler_idle_ratio, "{:.3f}"),
            f"{or_dash(s.request_queue_size, '{:.1f}')} (max {or_dash(s.request_queue_size_max)})",
            or_dash(s.produce_total_p999_ms, "{:.0f} ms"),
            or_dash(s.log_flush_time_p99_ms, "{:.0f} ms"),
            or_dash(s.fetch_requests_per_s, "{:.1f}"),
            f"{or_dash(_mb(s.bytes_in_per_s), '{:.2f}')}/{or_dash(_mb(s.bytes_out_per_s), '{:.2f}')}",
        )
    return table


def _mb(value: float | None) -> float | None:
    return None if value is None else value / 1e6


def topic_table(d: Diagnosis) -> Table | None:
    if not d.topics:
        return None
    table = Table(
        title="top topics by partition appends (once per partition a request carries, not per request)",
        title_justify="left",
    )
    for col in ("topic", "appends/s", "B/append", "small"):
        table.add_column(col, justify="left" if col == "topic" else "right")
    for t in d.topics:
        table.add_row(
            Text(value(t.topic)),
            f"{t.partition_appends_per_s:.1f}",
            _bytes(t.bytes_per_partition_append),
            Text("yes", style="yellow") if t.small else "no",
        )
    return table


TOP_CLIENTS = 10


def client_table(d: Diagnosis) -> Table | None:
    """The clients Kafka's quota sensors or the brokers' request logs saw (docs/diagnose.md: which
    clients), busiest first."""
    if not d.clients:
        return None
    counted = any(c.counted for c in d.clients)
    sensed = any(c.request_threads is not None for c in d.clients)
    sources = ["the brokers' request logs: req/s counted"] if counted else []
    if sensed:
        sources.append(
            "Kafka's per-client sensors; ~req/s estimated: the brokers' produce requests split by"
            " request-time share: at most for the largest requests, at least for the smallest"
        )
    table = Table(title=f"top clients ({'; '.join(sources)})", title_justify="left")
    columns = ["client", *(["software"] if counted else []), "thread time", "share", "produce KB/s"]
    columns += ["req/s", "B/request", *(["partitions/request"] if counted else []), "batching gain"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("client", "software") else "right")
    for c in d.clients[:TOP_CLIENTS]:
        gain = "-"
        if c.requests_cut is not None:
            gain = f"~{c.requests_cut:.0f}x fewer"
            if c.threads_freed is not None:
                gain += f", up to {c.threads_freed * 1000:.0f} ms/s freed"
        mark = "" if c.counted else "~" + {"at_most": "<= ", "at_least": ">= "}.get(c.rate_bound or "", "")
        # client ids and software names are the clients' own strings: no markup, no control codes
        row: list[str | Text] = [Text(escape_controls(c.client))]
        row += [Text(escape_controls(c.software or "-"))] if counted else []
        row += [
            or_dash(c.request_threads * 1000 if c.request_threads is not None else None, "{:.1f} ms/s"),
            or_dash(c.time_share * 100 if c.time_share is not None else None, "{:.0f}%"),
            f"{c.produce_bytes_per_s / 1000:.1f}",
            mark + or_dash(c.produce_requests_per_s, "{:.1f}"),
            _bytes(c.bytes_per_request),
            *([or_dash(c.partitions_per_request, "{:.1f}")] if counted else []),
            gain,
        ]
        table.add_row(*row)
    return table


def findings_text(d: Diagnosis) -> Text:
    text = Text()
    for b in d.brokers:
        for f in b.findings:
            text.append(f"broker {value(b.broker)} ", style="bold")
            text.append(f"{'note' if f.severity == 'healthy' else f.severity}: ", style=STYLE[f.severity])
            text.append(f"{escape_controls(f.summary)}\n")  # a summary quotes labels
            if f.advice:
                text.append(f"    -> {escape_controls(f.advice)}\n", style="dim")
    source = {
        "thresholds": "set in the thresholds",
        "cost model": "the cost model's break-even request size",
        # a flat network fit (neither requests nor bytes cost its threads) has no break-even
        "default": "the default, no cost model given"
        if d.cost_model is None
        else "the default: the cost model's network fit charges neither requests nor bytes",
    }[d.small_request_source]
    limit = d.brokers[0].small_request_bytes if d.brokers else None
    if limit is not None:
        text.append(f"small request = under {fmt_bytes(limit)}: {source}", style="dim")
    if d.cost_model is not None:
        m = d.cost_model
        text.append(
            f"; cost model R^2 network {m.network_r2:.2f}, handler {m.handler_r2:.2f}"
            f" over {m.n} broker windows",
            style="dim",
        )
    return text


def diagnosis_view(d: Diagnosis) -> RenderableType:
    tables = [broker_table(d), topic_table(d), client_table(d)]  # the last two only when there is data
    headline = Text(d.headline, style=f"bold {STYLE[d.status]}")
    return Group(*(t for t in tables if t is not None), findings_text(d), headline)
