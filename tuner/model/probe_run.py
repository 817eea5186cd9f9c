"""One compression probe run: read and check every file, measure each, analyse into a ProbeRecord."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tuner import __version__
from tuner.measure.codecs import library_versions
from tuner.measure.compression import MIN_CPU_S, check_measurable, probe_sample
from tuner.measure.log_sample import LogSample, read_sample
from tuner.model.knee import analyse
from tuner.spec.probe import ProbeOptions
from tuner.store.probe_record import ProbeRecord, ProbeSample


def load_samples(files: Sequence[Path], options: ProbeOptions) -> list[LogSample]:
    """Every file read and checked before anything is measured (one BadInput line for the first bad one)."""
    samples = [read_sample(path, options.event_bytes) for path in files]
    for path, sample in zip(files, samples, strict=True):
        check_measurable(sample, options, str(path))
    return samples


def probe_samples(
    samples: Sequence[LogSample],
    options: ProbeOptions,
    on_point: Callable[[str], None] | None = None,
    min_cpu_s: float = MIN_CPU_S,
) -> ProbeRecord:
    """Measure every sample and return the record with knees and advice."""
    measured = [probe_sample(s, options, on_point=on_point, min_cpu_s=min_cpu_s) for s in samples]
    record = ProbeRecord(
        created_at=time.time(),
        kbt_version=__version__,
        libraries=library_versions(),
        options=options,
        samples=[ProbeSample.of(m) for m in measured],
    )
    return analyse(record)
