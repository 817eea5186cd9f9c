"""One compression probe run: read and check every file, measure each, analyse into a ProbeRecord."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tuner import __version__
from tuner.measure.codecs import library_versions
from tuner.measure.compression import (
    MIN_CPU_S,
    SampleMeasurement,
    check_measurable,
    probe_sample,
)
from tuner.measure.log_sample import LogSample, read_sample
from tuner.model.knee import analyse
from tuner.spec.probe import ProbeOptions
from tuner.store.probe_record import ProbeCurve, ProbeRecord, ProbeSample


def load_samples(files: Sequence[Path], options: ProbeOptions) -> list[LogSample]:
    """Every file read and checked before anything is measured (one BadInput line for the first bad
    one). Only the counts are kept: memory is one file's messages, however many files are probed."""
    samples = []
    for path in files:
        sample = read_sample(path, options.event_bytes)
        check_measurable(sample, options, str(path))
        samples.append(sample.released())
    return samples


def probe_samples(
    samples: Sequence[LogSample],
    options: ProbeOptions,
    on_point: Callable[[str], None] | None = None,
    min_cpu_s: float = MIN_CPU_S,
) -> ProbeRecord:
    """Measure every sample and return the record with knees and advice."""
    measured = []
    for sample in samples:  # one file's messages in memory at a time
        m = probe_sample(sample.held(), options, on_point=on_point, min_cpu_s=min_cpu_s)
        measured.append(dataclasses.replace(m, sample=m.sample.released()))
    record = ProbeRecord(
        created_at=time.time(),
        kbt_version=__version__,
        libraries=library_versions(),
        options=options,
        samples=[sample_of(m) for m in measured],
    )
    return analyse(record)


def sample_of(m: SampleMeasurement) -> ProbeSample:
    s = m.sample
    return ProbeSample(
        name=s.name,
        sha256=s.sha256,
        file_bytes=s.file_bytes,
        lines=s.lines,
        messages=s.message_count,
        mean_message_bytes=round(s.mean_message_bytes, 1),
        event_bytes=s.event_bytes,
        skipped_batch_sizes=m.skipped_batch_sizes,
        curves=[
            ProbeCurve(
                codec=c.codec.codec,
                level=c.codec.level,
                label=c.codec.label,
                clients=c.codec.clients(),
                points=c.points,
            )
            for c in m.curves
        ],
    )
