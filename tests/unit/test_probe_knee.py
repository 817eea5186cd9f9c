"""Knee, plateau and half point of a ratio curve, and the advice sentence."""

from __future__ import annotations

import re

from tuner.model.knee import advice, clients_summary, find_knee
from tuner.store.probe_record import Knee, ProbeCurve, ProbePoint, ProbeSample, Quantiles

# every registered kind by its codecs (the registry's order); Filebeat's Kafka output has no zstd
SUMMARY = "librdkafka/Java/OpenTelemetry Collector: all four; Filebeat: gzip, snappy, lz4"


def _point(n: int, ratio: float) -> ProbePoint:
    q = Quantiles(p10=ratio * 0.9, p50=ratio, p90=ratio * 1.1)
    size = Quantiles(p10=100.0, p50=100.0, p90=100.0)
    return ProbePoint(
        batch_messages=n, batches=10, uncompressed_batch_bytes=size, compressed_batch_bytes=size,
        ratio=q, compress_cpu_ms_per_mb=1.0, decompress_cpu_ms_per_mb=0.5,
    )  # fmt: skip


def _curve(label: str, ratios: dict[int, float]) -> ProbeCurve:
    codec, _, level = label.partition("-")
    clients = ["librdkafka", "java"] if codec == "zstd" else ["filebeat", "librdkafka", "java"]
    points = [_point(n, r) for n, r in ratios.items()]
    return ProbeCurve(
        codec=codec, level=int(level) if level else None, label=label, clients=clients, points=points,  # type: ignore[arg-type]
        knee=find_knee(points),
    )  # fmt: skip


FLAT = {1: 1.0, 2: 1.8, 4: 3.0, 8: 4.5, 16: 6.0, 32: 7.0, 64: 7.6, 128: 7.8, 256: 7.9}


def test_knee_is_first_size_at_90_percent_of_the_plateau() -> None:
    knee = find_knee([_point(n, r) for n, r in FLAT.items()])
    assert isinstance(knee, Knee)
    assert knee.plateau_ratio == 7.9 and knee.plateau_batch_messages == 256
    assert knee.knee_batch_messages == 64  # 7.6 >= 7.11, 7.0 is not
    assert knee.half_batch_messages == 8  # 4.5 >= 3.95, 3.0 is not
    assert knee.plateau_reached  # 7.9 / 7.8 - 1 < 5%


def test_still_rising_curve_is_flagged() -> None:
    knee = find_knee([_point(n, r) for n, r in {1: 1.0, 2: 2.0, 4: 3.0, 8: 4.0}.items()])
    assert knee is not None and not knee.plateau_reached
    assert knee.last_step_gain is not None and abs(knee.last_step_gain - 1 / 3) < 1e-9
    assert knee.knee_batch_messages == 8


def test_noisy_dip_does_not_hide_the_plateau() -> None:
    knee = find_knee([_point(n, r) for n, r in {1: 1.0, 2: 4.0, 4: 5.0, 8: 4.9}.items()])
    assert knee is not None and knee.plateau_ratio == 5.0 and knee.knee_batch_messages == 4
    assert knee.plateau_reached


def test_no_points_no_knee() -> None:
    assert find_knee([]) is None


def _sample(*curves: ProbeCurve) -> ProbeSample:
    return ProbeSample(
        name="app.log", sha256="0" * 64, file_bytes=1, lines=1, messages=1, mean_message_bytes=1.0,
        event_bytes=None, curves=list(curves),
    )  # fmt: skip


def test_advice_names_best_codec_and_what_filebeat_can_use() -> None:
    zstd = _curve("zstd-3", {n: r * 1.2 for n, r in FLAT.items()})
    gzip = _curve("gzip-6", FLAT)
    snappy = _curve("snappy", {n: r * 0.6 for n, r in FLAT.items()})
    text = advice(_sample(snappy, gzip, zstd))
    assert text.startswith("app.log: zstd-3 reaches 90% of its 9.5x ratio at 64 msgs/batch")
    assert "below 8 msgs/batch you lose more than half" in text
    assert "librdkafka/Java/OpenTelemetry Collector can send zstd, Filebeat cannot" in text
    assert "for Filebeat, gzip-6 reaches 90% of its 7.9x ratio at 64 msgs/batch" in text
    assert clients_summary() == SUMMARY
    assert text.endswith(".") and re.search(r"\.\s", text) is None  # one sentence


def test_advice_when_best_codec_is_open_to_every_client() -> None:
    text = advice(_sample(_curve("gzip-6", FLAT), _curve("snappy", {n: r / 2 for n, r in FLAT.items()})))
    assert f"every client can send gzip ({SUMMARY})" in text
    assert "for Filebeat" not in text
