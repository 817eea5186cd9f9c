"""The compression probe as a table: a rich table for the terminal, Markdown for docs.

One row per sample and codec/level: median ratio at a few batch sizes, the plateau, the knee (90% of
the plateau), the half point, and at the knee the compressed batch bytes and CPU per MB.
"""

from __future__ import annotations

from rich.table import Table

from tuner.store.probe_record import ProbeCurve, ProbeRecord

MAX_RATIO_COLUMNS = 7
HEADINGS = ["plateau", "knee", "half", "batch B @knee", "comp ms/MB", "decomp ms/MB"]


def ratio_columns(record: ProbeRecord) -> list[int]:
    """Batch sizes to show: all when few, else every other one, always with the largest."""
    sizes = sorted({p.batch_messages for s in record.samples for c in s.curves for p in c.points})
    if len(sizes) <= MAX_RATIO_COLUMNS:
        return sizes
    step = -(-len(sizes) // MAX_RATIO_COLUMNS)
    picked = sizes[::step]
    if picked[-1] != sizes[-1]:
        picked.append(sizes[-1])
    return picked


def _cells(sample: str, curve: ProbeCurve, columns: list[int]) -> list[str]:
    """Sample, codec, the median ratio at each of `columns`, then a cell under each of HEADINGS."""
    by_size = {p.batch_messages: p for p in curve.points}
    ratios = [f"{by_size[n].ratio.p50:.2f}" if n in by_size else "-" for n in columns]
    knee = curve.knee
    if knee is None:
        return [sample, curve.label, *ratios, *["-"] * len(HEADINGS)]
    at = by_size[knee.knee_batch_messages]
    return [
        sample,
        curve.label,
        *ratios,
        f"{knee.plateau_ratio:.2f} @{knee.plateau_batch_messages}",
        f"{knee.knee_batch_messages}" + ("" if knee.plateau_reached else "+"),
        str(knee.half_batch_messages),
        f"{at.compressed_batch_bytes.p50:,.0f}",
        f"{at.compress_cpu_ms_per_mb:.1f}",
        f"{at.decompress_cpu_ms_per_mb:.1f}",
    ]


def rows(record: ProbeRecord) -> tuple[list[int], list[list[str]]]:
    """The ratio columns' batch sizes, and each row's cells (_cells)."""
    columns = ratio_columns(record)
    return columns, [_cells(s.name, c, columns) for s in record.samples for c in s.curves]


def probe_table(record: ProbeRecord, title: str = "compression probe") -> Table:
    columns, table_rows = rows(record)
    table = Table(
        title=title,
        caption="median ratio (uncompressed / compressed v2 batch bytes) by messages per batch;"
        " knee = smallest batch at 90% of the plateau (+: still rising); CPU per MB of records",
    )
    table.add_column("sample")
    table.add_column("codec")
    for heading in [*(f"x{n}" for n in columns), *HEADINGS]:  # the figures
        table.add_column(heading, justify="right")
    last = None
    for sample, *cells in table_rows:
        if last is not None and sample != last:
            table.add_section()
        table.add_row(sample if sample != last else "", *cells)
        last = sample
    return table


def probe_markdown(record: ProbeRecord) -> str:
    """The same table in Markdown, plus each sample's advice."""
    columns, table_rows = rows(record)
    head = ["sample", "codec", *(f"x{n}" for n in columns), *HEADINGS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows]
    lines.append("")
    lines.extend(f"- {s.advice}" for s in record.samples if s.advice)
    return "\n".join(lines) + "\n"
