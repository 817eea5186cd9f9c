"""The compression probe as a table: a rich table for the terminal, Markdown for docs.

One row per sample and codec/level: median ratio at a few batch sizes, the plateau, the knee (90% of
the plateau), the half point, and at the knee the compressed batch bytes and CPU per MB.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table

from tuner.store.probe_record import ProbeCurve, ProbeRecord

MAX_RATIO_COLUMNS = 7


@dataclass(frozen=True)
class Row:
    sample: str
    codec: str
    ratios: list[str]
    plateau: str
    knee: str
    half: str
    knee_bytes: str
    compress: str
    decompress: str

    @property
    def cells(self) -> list[str]:
        return [
            self.sample, self.codec, *self.ratios, self.plateau, self.knee, self.half, self.knee_bytes,
            self.compress, self.decompress,
        ]  # fmt: skip


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


def _row(sample: str, curve: ProbeCurve, columns: list[int]) -> Row:
    by_size = {p.batch_messages: p for p in curve.points}
    ratios = [f"{by_size[n].ratio.p50:.2f}" if n in by_size else "-" for n in columns]
    knee = curve.knee
    if knee is None:
        return Row(sample, curve.label, ratios, "-", "-", "-", "-", "-", "-")
    at = by_size[knee.knee_batch_messages]
    return Row(
        sample=sample,
        codec=curve.label,
        ratios=ratios,
        plateau=f"{knee.plateau_ratio:.2f} @{knee.plateau_batch_messages}",
        knee=f"{knee.knee_batch_messages}" + ("" if knee.plateau_reached else "+"),
        half=str(knee.half_batch_messages),
        knee_bytes=f"{at.compressed_batch_bytes.p50:,.0f}",
        compress=f"{at.compress_cpu_ms_per_mb:.1f}",
        decompress=f"{at.decompress_cpu_ms_per_mb:.1f}",
    )


def rows(record: ProbeRecord) -> tuple[list[int], list[Row]]:
    columns = ratio_columns(record)
    out = [_row(s.name, c, columns) for s in record.samples for c in s.curves]
    return columns, out


HEADINGS = ["plateau", "knee", "half", "batch B @knee", "comp ms/MB", "decomp ms/MB"]


def probe_table(record: ProbeRecord, title: str = "compression probe") -> Table:
    columns, table_rows = rows(record)
    table = Table(
        title=title,
        caption="median ratio (uncompressed / compressed v2 batch bytes) by messages per batch;"
        " knee = smallest batch at 90% of the plateau (+: still rising); CPU per MB of records",
    )
    table.add_column("sample")
    table.add_column("codec")
    for n in columns:
        table.add_column(f"x{n}", justify="right")
    for heading in HEADINGS:
        table.add_column(heading, justify="right")
    last = None
    for row in table_rows:
        shown = row.sample if row.sample != last else ""
        if last is not None and row.sample != last:
            table.add_section()
        last = row.sample
        table.add_row(shown, *row.cells[1:])
    return table


def probe_markdown(record: ProbeRecord) -> str:
    """The same table in Markdown, plus each sample's advice."""
    columns, table_rows = rows(record)
    head = ["sample", "codec", *(f"x{n}" for n in columns), *HEADINGS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row.cells) + " |" for row in table_rows]
    lines.append("")
    lines.extend(f"- {s.advice}" for s in record.samples if s.advice)
    return "\n".join(lines) + "\n"
