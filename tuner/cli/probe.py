"""`kbt probe compression FILE...`: compression ratio and CPU per codec/level vs messages per batch."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tuner.cli.json_out import console_for
from tuner.cli.options import option
from tuner.core.writes import atomic_write_all, check_target, stdout_claimed
from tuner.render.plain import show
from tuner.spec.probe import DEFAULT_BATCHES, build_options

app = typer.Typer(help="Measure things offline, without a broker.", no_args_is_help=True)

_LEVELS = typer.Option(
    [],
    "--levels",
    help="Levels: 'zstd=1,3,9' for one codec, or '1,3' for every chosen codec that has levels;"
    " repeatable. Defaults: gzip 6, lz4 0, zstd 3 (snappy has none). Ranges: gzip 1-9, lz4 0-16,"
    " zstd 1-22.",
)
_BATCH_SIZES = typer.Option(
    "1,2,4,...,4096", "--batch-sizes", help="Messages per batch; '...' continues a doubling series."
)
_EVENT_BYTES = typer.Option(
    None, "--event-bytes", help="Join consecutive lines into events of about N bytes."
)


@app.command()
def compression(
    files: list[Path] = typer.Argument(..., help="Log files: one message per line (or see --event-bytes)."),
    codecs: str = option("--codecs", "probe"),
    levels: list[str] = _LEVELS,
    batch_sizes: str = _BATCH_SIZES,
    event_bytes: int | None = _EVENT_BYTES,
    batches: int = typer.Option(DEFAULT_BATCHES, "--batches", help="Batches measured per point (spread)."),
    seed: int = typer.Option(1, "--seed", help="Seed for the batches' random start positions."),
    json_path: Path | None = option("--json", "probe"),
    plot_path: Path | None = typer.Option(None, "--plot", help="Write a PNG plot (ratio vs batch) here."),
    markdown_path: Path | None = option("--markdown", "probe"),
) -> None:
    """Measure compression ratio and CPU per codec, level and batch size on real log lines.

    Frame real log lines into Kafka v2 record batches of 1..4096 messages and measure, per codec and
    level: the compression ratio (median and p10/p90 over many batches), compressed batch bytes, and
    compress/decompress CPU time per MB. Prints a table, the knee of each curve (the smallest batch
    at 90% of the plateau ratio) and one sentence of advice per file, naming which codecs each
    client kind can send (each kind's own codecs: Filebeat's Kafka output has no zstd)."""
    from tuner.measure.compression import point_count
    from tuner.render.probe_plot import plot_probe, plot_target
    from tuner.render.probe_table import probe_markdown, probe_table
    from tuner.runner.probe import load_samples, probe_samples
    from tuner.store.probe_record import probe_record_text

    options = build_options(codecs, levels, batch_sizes, event_bytes, batches, seed)
    for out, what in ((json_path, "probe record"), (plot_path, "plot"), (markdown_path, "markdown table")):
        if out is not None:  # before the work: a device or a file-as-directory fails at once
            check_target(out, what)
    if plot_path is not None:
        plot_target(plot_path)
    console = console_for(None)
    samples = load_samples(files, options)
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    )  # fmt: skip
    with progress:
        task = progress.add_task("probing", total=point_count(samples, options))

        def tick(label: str) -> None:
            progress.update(task, advance=1, description=label)

        record = probe_samples(samples, options, on_point=tick)
    show(console, probe_table(record))
    for sample in record.samples:
        console.print(sample.advice, soft_wrap=not console.is_terminal)
    outputs: dict[Path, str | bytes] = {}  # the record, plot and table: all or none
    if json_path is not None:
        outputs[json_path] = probe_record_text(record)
    if plot_path is not None:
        plotted, png = plot_probe(record, plot_path)
        outputs[plotted] = png
    if markdown_path is not None:
        outputs[markdown_path] = probe_markdown(record)
    for path in atomic_write_all(outputs, "probe output"):
        typer.echo(f"wrote {path}", err=stdout_claimed())  # stdout may be the record's ('-')
