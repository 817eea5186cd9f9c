"""A recommendation as a table for the terminal and as client files.

Each client kind renders its own file (tuner/spec/clients/): filebeat.yml (output.kafka +
queue.mem), librdkafka.properties, java.properties; a kind may add files for tools that embed the
same client (the Java kind: Logstash's kafka output options).
"""

from __future__ import annotations

import textwrap

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tuner.core.text import or_dash
from tuner.model.comparison import reduction_of
from tuner.model.search import describe_profile
from tuner.spec.clients import kind_of
from tuner.store.recommendation import (
    ClientRecommendation,
    Measured,
    Prediction,
    Recommendation,
)


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _idle(p: Prediction | None, m: Measured | None) -> str:
    measured = (
        "-"
        if m is None
        else f"{or_dash(m.network_idle_ratio, '{:.3f}')}/{or_dash(m.handler_idle_ratio, '{:.3f}')}"
    )
    if p is not None and p.network_idle_ratio is not None:
        return f"{p.network_idle_ratio:.3f}/{or_dash(p.handler_idle_ratio, '{:.3f}')} ({measured})"
    return measured


def _figures(p: Prediction | None, m: Measured | None) -> list[str]:
    """The req/s, busiest, p99 and idle cells: predicted / measured."""
    return [
        *(  # getattr: a side not there (None) shows "-"
            " / ".join(or_dash(getattr(x, name, None), "{:.1f}") for x in (p, m))
            for name in ("requests_per_s", "busiest_broker_requests_per_s")
        ),
        f"{_ms(p.p99_ms if p else None)} / {_ms(m.p99_ms if m else None)}",
        _idle(p, m),
    ]


def _slo_text(rec: Recommendation) -> str:
    """The bounds a recommended setting meets: p99, and the capacity bound beside it."""
    slo = f"p99 <= {_ms(rec.slo.p99_ms)}" if rec.slo.p99_ms is not None else "no latency bound"
    if rec.slo.p99_ms is not None and rec.slo_margin:
        slo += f" (aiming {rec.slo_margin:.0%} below: {_ms(rec.slo.p99_ms * (1 - rec.slo_margin))})"
    if rec.slo.min_network_idle is not None:
        slo += f", busiest broker's network idle >= {rec.slo.min_network_idle:g}"
    return slo


def recommendation_table(rec: Recommendation) -> Table:
    slo = _slo_text(rec)
    table = Table(
        title=f"kbt recommend: {rec.workload.name} on {rec.brokers} brokers, {slo}",
        caption="req/s: produce requests/s (predicted / measured); busiest: on the busiest broker;"
        " idle: network/handler idle ratio (predicted, else measured); x fewer: baseline / recommended,"
        " from one count (the baseline row names it); at the edge: measured p99 inside the SLO margin",
    )
    for col in ("client", "setting", "status", "req/s", "busiest", "p99", "idle", "x fewer", "runs"):
        table.add_column(col, overflow="fold")
    for c in rec.clients:
        table.add_row(*_row(rec, c))
        if (t := c.safer) is not None:
            status = "measured" if t.measured is not None else "predicted"
            table.add_row(*_side_row("  safer", describe_profile(t.profile), status, t.predicted, t.measured))
        if c.baseline_predicted is not None or c.baseline_measured is not None:
            table.add_row(*_baseline_row(rec, c), style="dim")
    return table


def _status(c: ClientRecommendation) -> str:
    colour = {"confirmed": "green", "predicted": "yellow", "rejected": "red"}[c.status]
    if c.at_edge:
        return f"[{colour}]{c.status}[/{colour}], [yellow]at the edge[/yellow]"
    return f"[{colour}]{c.status}[/{colour}]"


def _side_row(label: str, name: str, status: str, p: Prediction | None, m: Measured | None) -> list[str]:
    """A row under a client's (its safer setting, its baseline): the figures and the run measured."""
    return [label, name, status, *_figures(p, m), "", m.run_id if m else "-"]


def _row(rec: Recommendation, c: ClientRecommendation) -> list[str]:
    p, m = c.predicted, c.measured
    cut = reduction_of(rec, c)  # the comparison's one figure, and whether measured or predicted
    return [
        c.client,
        describe_profile(c.profile),
        _status(c),
        *_figures(p, m),
        "-" if cut is None else f"{cut.ratio:.1f}x ({cut.basis})",
        "\n".join(c.evidence) or "-",
    ]


def _baseline_row(rec: Recommendation, c: ClientRecommendation) -> list[str]:
    p, m = c.baseline_predicted, c.baseline_measured
    name = base.name if (base := rec.baseline_of(c)) is not None else f"{c.client} baseline"
    if (cut := reduction_of(rec, c)) is not None:
        name = f"{cut.baseline} ({cut.baseline_is})"
    return _side_row("  baseline", name, "", p, m)


def band_text(p: Prediction) -> str:
    """The prediction's held-out error band in one phrase (what it could measure, and from what)."""
    if p.band is None:
        regime = f" ({p.regime})" if p.regime else ""
        return f"regime{regime} has no held-out band: the model's error here is unknown"
    b = p.band
    p99 = f", p99 {_ms(b.p99_ms[0])}-{_ms(b.p99_ms[1])}" if b.p99_ms is not None else ""
    return (
        f"held-out band ({b.basis}; {b.runs} run{'s' if b.runs != 1 else ''}): regime {b.regime},"
        f" {b.requests_per_s[0]:.1f}-{b.requests_per_s[1]:.1f} req/s{p99}"
    )


def summary_lines(rec: Recommendation) -> list[str]:
    """Floor, error band, trials, model truth and notes, one line each."""
    out: list[str] = []
    for c in rec.clients:
        if rec.error_bands_from is not None:
            out.append(f"{c.client}: {band_text(c.predicted)}")
        if c.floor is not None:
            got = c.measured.requests_per_s if c.measured else c.predicted.requests_per_s
            which = "measured" if c.measured else "predicted"
            out.append(
                f"{c.client}: physical floor at {_ms(c.floor.allowed_linger_ms)} linger:"
                f" {c.floor.producer_broker_rps:.1f} req/s (producers x brokers),"
                f" {c.floor.producer_rps:.1f} (producers); {which} {got:.1f} ="
                f" {got / c.floor.producer_broker_rps:.2f}x / {got / c.floor.producer_rps:.2f}x"
            )
        for i, t in enumerate(c.trials, 1):
            m = t.measured
            verdict = "-" if m is None else ("meets SLO" if m.meets_slo else "misses SLO")
            out.append(
                f"{c.client} trial {i} ({t.reason}): {describe_profile(t.profile)}: predicted"
                f" {t.predicted.requests_per_s:.1f} req/s p99 {_ms(t.predicted.p99_ms)}; measured"
                f" {or_dash(getattr(m, 'requests_per_s', None), '{:.1f}')} req/s"
                f" p99 {_ms(m.p99_ms if m else None)}"
                f" lost {m.lost if m else '-'}: {verdict}"
            )
        out += [f"{c.client}: {note}" for note in c.notes]
        if (durability := kind_of(c.profile).durability_note(c.profile, rec.baseline_of(c))) is not None:
            out.append(f"{c.client}: {durability}")
    for truth in rec.model_truth:
        apart = f"; {truth.off_schedule} off their schedule left out" if truth.off_schedule else ""
        out.append(
            f"model truth ({truth.client}, {truth.runs} runs{apart}): median |error| of produce"
            f" requests/s {truth.median_abs_error:.1%}, max {truth.max_abs_error:.1%}"
        )
    out += rec.notes
    return out


def recommendation_view(rec: Recommendation) -> Group:
    """What `kbt recommend` prints before the files it wrote: the table, then the summary lines (as
    plain text: a note's brackets are not markup)."""
    lines = summary_lines(rec)
    return Group(recommendation_table(rec), *([Text("\n".join(lines))] if lines else []))


def _header(rec: Recommendation, c: ClientRecommendation) -> list[str]:
    p, m = c.predicted, c.measured
    slo = _slo_text(rec)
    lines = [
        f"Recommended by kbt {rec.kbt_version} for workload {rec.workload.name} on {rec.brokers} brokers,",
        f"  within {slo}.",  # a line of its own: the file stays within 120 columns
        f"Status: {c.status}. Predicted: {p.requests_per_s:.1f} produce requests/s, p99 {_ms(p.p99_ms)}.",
    ]
    if m is not None:
        lines.append(
            f"Measured: {m.requests_per_s:.1f} produce requests/s, p99 {_ms(m.p99_ms)}, {m.lost} lost,"
        )
        lines.append(f"  in run {m.run_id}.")  # a line of its own: the file stays within 120 columns
    if c.at_edge:
        note = next((n for n in c.notes if n.startswith("at the edge")), "at the edge of the SLO")
        lines += textwrap.wrap(note[0].upper() + note[1:] + ".", width=100, subsequent_indent="  ")
    if (cut := reduction_of(rec, c)) is not None:
        # wrapped: the file stays within 120 columns
        lines += textwrap.wrap(cut.sentence() + ".", width=100, subsequent_indent="  ")
    if (relief := c.busiest_relief) is not None:
        lines.append(
            f"Busiest broker: {c.busiest_before:.1f} -> {c.busiest_after:.1f} produce requests/s,"
            f" {relief:.1f}x fewer ({c.busiest_relief_on})."
        )
    if (durability := kind_of(c.profile).durability_note(c.profile, rec.baseline_of(c))) is not None:
        # durability is the user's: where the file's came from (wrapped: the file stays narrow)
        lines += textwrap.wrap(durability, 100, subsequent_indent="  ", break_on_hyphens=False)
    return lines


def render_files(rec: Recommendation) -> dict[str, str]:
    """File name -> content for every client kind recommended (each kind's own renderer)."""
    files: dict[str, str] = {}
    for c in rec.clients:
        kind, header = kind_of(c.profile), _header(rec, c)
        for rendered in (kind.render(c.profile, header), *kind.also_rendered(c.profile, header)):
            files[rendered.filename] = rendered.text
    return files
