"""The compression probe as a PNG: median ratio vs messages per batch, one line per codec/level
(p10-p90 band shaded, knee marked), log x axis, one panel per sample."""

from __future__ import annotations

import io
import math
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.writes import check_target
from tuner.store.probe_record import ProbeRecord

MAX_COLUMNS = 4


def plot_target(path: Path) -> Path:
    """The path a plot is written to (NAME.png when the name has no extension); BadInput for a
    format matplotlib cannot write or a place kbt does not write to."""
    from matplotlib.backend_bases import FigureCanvasBase

    if not path.suffix:
        path = path.with_name(path.name + ".png")
    supported = FigureCanvasBase.get_supported_filetypes()
    fmt = path.suffix[1:].lower()
    if fmt not in supported:
        raise BadInput(f"{path}: unknown plot format {fmt!r} (use one of {', '.join(sorted(supported))})")
    check_target(path, "plot")
    return path


def plot_probe(record: ProbeRecord, path: Path) -> tuple[Path, bytes]:
    """The plot's bytes and the path they are for (the extension names the format; none: PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    samples = record.samples
    cols = min(MAX_COLUMNS, len(samples))
    nrows = math.ceil(len(samples) / cols)
    fig, axes = plt.subplots(
        nrows, cols, figsize=(4.6 * cols, 3.6 * nrows), squeeze=False, sharey=False, layout="constrained"
    )
    colours: dict[str, str] = {}
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, sample in enumerate(samples):
        ax = axes[i // cols][i % cols]
        for curve in sample.curves:
            colour = colours.setdefault(curve.label, palette[len(colours) % len(palette)])
            xs = [p.batch_messages for p in curve.points]
            ax.plot(xs, [p.ratio.p50 for p in curve.points], marker=".", color=colour, label=curve.label)
            ax.fill_between(
                xs, [p.ratio.p10 for p in curve.points], [p.ratio.p90 for p in curve.points],
                color=colour, alpha=0.15, linewidth=0,
            )  # fmt: skip
            if curve.knee is not None:
                knee_at = next(p for p in curve.points if p.batch_messages == curve.knee.knee_batch_messages)
                ax.plot([knee_at.batch_messages], [knee_at.ratio.p50], marker="o", markersize=8,
                        markerfacecolor="none", color=colour)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        events = f", ~{sample.event_bytes} B events" if sample.event_bytes else ", one line per message"
        ax.set_title(f"{sample.name}{events}", fontsize=9)
        ax.set_xlabel("messages per batch")
        ax.set_ylabel("compression ratio")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    for j in range(len(samples), nrows * cols):
        axes[j // cols][j % cols].set_visible(False)
    fig.suptitle("Kafka v2 batch compression ratio (median, p10-p90 band, o = knee at 90% of plateau)")
    # The format comes from the extension; none means PNG, and the path printed is the one written
    # (matplotlib would append ".png" to a path without one behind the caller's back).
    try:
        path = plot_target(path)
        fmt = path.suffix[1:].lower()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=110)
    finally:
        plt.close(fig)
    return path, buf.getvalue()
