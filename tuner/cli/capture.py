"""`kbt capture`: a live cluster's produce traffic as a workload and a client profile per group."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tuner.cli.cluster_flags import target_source
from tuner.cli.diagnose import seconds
from tuner.cli.json_out import console_for, write_json
from tuner.cli.options import option
from tuner.core.errors import BadInput
from tuner.core.writes import atomic_write_all
from tuner.measure.request_log import check_request_logs
from tuner.render.plain import show

if TYPE_CHECKING:
    from rich.console import Console

_SAMPLE = typer.Option(
    200, "--sample", min=0, max=10_000, help="Newest records read per partition for sizes and keys (0: none)."
)
_PAYLOADS = typer.Option(False, "--payloads", help="Keep the sampled records' values (hex) in capture.json.")
_LAB_PRODUCERS = typer.Option(
    48, "--lab-producers", min=1, max=512, help="Producers the lab runs at most, all groups together."
)
_LAB_BROKERS = typer.Option(
    3,
    "--lab-brokers",
    min=1,
    max=16,
    help="Brokers of the lab that replays it: the source's, in id order, lead as its 1..N (modulo N).",
)


def capture(
    out: Path = option("--out", "capture"),
    window: str = option("--window", "capture"),
    request_log: list[Path] | None = option("--request-log", what="the client groups"),
    target_file: Path | None = option("--target", what="the cluster to capture"),
    bootstrap: str | None = option("--bootstrap-server"),
    command_config: Path | None = option("--command-config"),
    prometheus: str | None = option("--prometheus"),
    lab_dir: Path | None = option("--lab-dir", "capture"),
    sample: int = _SAMPLE,
    payloads: bool = _PAYLOADS,
    lab_producers: int = _LAB_PRODUCERS,
    lab_brokers: int = _LAB_BROKERS,
    duration: str = typer.Option("60s", "--duration", help="Each replay run's length, e.g. 60s."),
    warmup: str | None = typer.Option(
        None,
        "--warmup",
        help="Each replay run's unmeasured start, at most half of --duration (default 20s, or half a"
        " shorter run).",
    ),
    json_path: Path | None = option("--json", what="the capture and its client groups"),
) -> None:
    """Capture a live cluster's produce traffic as a workload and a profile per client group.

    Watches the cluster for --window (read only: admin metadata, end offsets, the newest records
    through a consumer with no group and no commits; nothing is created or changed) and reads each
    client's produce requests from the brokers' request logs. Writes, per client group, a workload,
    a client profile and a one-run sweep that `kbt sweep` replays (real producer counts kept, the
    lab's scaled to --lab-producers with the factor stated), and capture.json."""
    from tuner.model.capture import ShapeOptions
    from tuner.render.capture import capture_files, summary_lines
    from tuner.runner.capture import CaptureRequest
    from tuner.runner.capture import capture as run_capture

    source = target_source(target_file, bootstrap, command_config, prometheus, lab_dir=lab_dir)
    logs = list(request_log or [])
    check_request_logs(logs)  # the one check of --request-log, as diagnose does it
    window_s = seconds(window, "--window")
    duration_s = seconds(duration, "--duration")
    if not 10 <= duration_s <= 3600:
        raise BadInput(f"--duration {duration}: between 10s and 1h")
    options = ShapeOptions(
        lab_producers=lab_producers,
        lab_brokers=lab_brokers,
        duration_s=duration_s,
        warmup_s=_warmup_s(warmup, duration_s),
    )
    console = console_for(json_path)
    request = CaptureRequest(source, lab_dir, window_s, logs, sample, payloads, options, out)
    with _countdown(console, window_s) as progress:
        record, plan = run_capture(
            request, progress, lambda text: console.print(f"kbt: note: {text}", markup=False, highlight=False)
        )
    written = atomic_write_all(capture_files(out, record, plan), "capture file")
    show(console, "\n".join(summary_lines(out, record, plan)))
    for note in plan.notes:
        console.print(f"kbt: note: {note}", markup=False, highlight=False)
    write_json(json_path, "capture", plan=plan, files=[str(p) for p in written])


def _warmup_s(warmup: str | None, duration_s: float) -> float:
    """--warmup in seconds: the default is cut to half a short replay, a value given is refused past
    half (the replay measures what is left; it was cut without a word)."""
    from tuner.model.capture import DEFAULT_WARMUP_S

    if warmup is None:
        return min(DEFAULT_WARMUP_S, duration_s / 2)
    warmup_s = 0.0 if warmup.strip() in ("0", "0s") else seconds(warmup, "--warmup")
    if warmup_s > duration_s / 2:
        raise BadInput(f"--warmup {warmup}: at most half of the replay's --duration ({duration_s:g} s)")
    return warmup_s


PLAIN_EVERY_S = 30.0  # a piped capture's countdown line: often enough to see it is alive


@contextmanager
def _countdown(console: Console, window_s: float) -> Iterator[Callable[[float], None]]:
    """The window's countdown: a bar on a terminal, a plain line every PLAIN_EVERY_S in a pipe or
    log; at the window's end, what is still to read. The window starts with the first call, once
    the cluster's metadata answered: an unreachable cluster is not said to be captured first."""
    from tuner.cli.sweep_progress import progress_bar

    after = "window over: reading record samples and the brokers' figures ..."
    started = False

    def start() -> None:
        nonlocal started
        if not started:
            started = True
            console.print(f"capturing for {window_s:.0f} s ...", highlight=False)

    if not console.is_terminal:
        last = window_s  # seconds left at the last line printed

        def line(left: float) -> None:
            nonlocal last
            start()
            if left <= 0:
                console.print(after, highlight=False)
            elif last - left >= PLAIN_EVERY_S:
                last = left
                console.print(f"capturing: {left:.0f} s left", highlight=False)

        yield line
        return
    with progress_bar(console) as bar:
        task = bar.add_task("reading the cluster's metadata", total=window_s)

        def tick(left: float) -> None:
            start()
            bar.update(task, completed=window_s - left, description=after if left <= 0 else "capturing")

        yield tick
