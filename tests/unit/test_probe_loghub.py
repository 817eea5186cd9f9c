"""The compression probe on the real loghub samples (skipped with a reason when they are absent):
ratios grow with the batch within noise, gzip/zstd beat snappy/lz4, and for ~1 KB events the knee
lands in the tens of messages."""

from __future__ import annotations

import itertools
import statistics

import pytest

from tests.unit.loghub import loghub_samples
from tuner.runner.probe import load_samples, probe_samples
from tuner.spec.probe import build_options
from tuner.store.probe_record import ProbeCurve, ProbeRecord

CODECS = "gzip,snappy,lz4,zstd"

SUMMARY = "librdkafka/Java/OpenTelemetry Collector: all four; Filebeat: gzip, snappy, lz4"  # codecs by kind


def _probe(event_bytes: int | None) -> ProbeRecord:
    options = build_options(CODECS, [], None, event_bytes, 20, 1)
    samples = load_samples(loghub_samples(), options)
    return probe_samples(samples, options, min_cpu_s=0.001)  # CPU figures are not asserted here


@pytest.fixture(scope="module")
def per_line() -> ProbeRecord:
    return _probe(None)


@pytest.fixture(scope="module")
def events_1k() -> ProbeRecord:
    return _probe(1024)


def _curves(record: ProbeRecord) -> list[tuple[str, ProbeCurve]]:
    return [(s.name, c) for s in record.samples for c in s.curves]


@pytest.mark.parametrize("which", ["per_line", "events_1k"])
def test_ratio_grows_with_batch_within_noise(which: str, request: pytest.FixtureRequest) -> None:
    """Noise = the batch-to-batch spread: a median never falls below the smaller batch's p10."""
    record: ProbeRecord = request.getfixturevalue(which)
    assert len(record.samples) == 8
    for name, curve in _curves(record):
        points = curve.points
        assert len(points) >= 6, (name, curve.label)
        for small, large in itertools.pairwise(points):
            assert large.ratio.p50 >= small.ratio.p10, (name, curve.label, small.batch_messages)
        assert points[-1].ratio.p50 > 1.5 * points[0].ratio.p50, (name, curve.label)


@pytest.mark.parametrize("which", ["per_line", "events_1k"])
def test_gzip_and_zstd_beat_snappy_and_lz4(which: str, request: pytest.FixtureRequest) -> None:
    record: ProbeRecord = request.getfixturevalue(which)
    for sample in record.samples:
        by_label = {c.label: c for c in sample.curves}
        strong, fast = ("gzip-6", "zstd-3"), ("snappy", "lz4-0")
        for s in strong:
            for f in fast:
                strong_knee, fast_knee = by_label[s].knee, by_label[f].knee
                assert strong_knee and fast_knee
                assert strong_knee.plateau_ratio > 1.2 * fast_knee.plateau_ratio, (sample.name, s, f)
                # From 16 messages on, at every batch size, not only at the plateau.
                for sp, fp in zip(by_label[s].points, by_label[f].points, strict=True):
                    if sp.batch_messages >= 16:
                        assert sp.ratio.p50 > fp.ratio.p50, (sample.name, s, f, sp.batch_messages)


def test_knee_of_1k_events_is_tens_of_messages(events_1k: ProbeRecord) -> None:
    knees: dict[str, list[int]] = {}
    for sample in events_1k.samples:
        assert 900 <= sample.mean_message_bytes <= 1400, sample.name
        for curve in sample.curves:
            assert curve.knee is not None
            assert 4 <= curve.knee.knee_batch_messages <= 128, (sample.name, curve.label)
            knees.setdefault(curve.label, []).append(curve.knee.knee_batch_messages)
    for label, values in knees.items():
        assert 10 <= statistics.median(values) < 100, (label, values)


def test_single_messages_barely_compress(per_line: ProbeRecord) -> None:
    """A 1-message batch of a ~100-300 byte line: header and codec framing eat the gain."""
    for name, curve in _curves(per_line):
        assert curve.points[0].batch_messages == 1
        assert 0.7 < curve.points[0].ratio.p50 < 1.5, (name, curve.label)


def test_record_carries_advice_for_every_sample(events_1k: ProbeRecord) -> None:
    for sample in events_1k.samples:
        assert sample.advice.startswith(sample.name + ": ")
        assert SUMMARY in sample.advice
