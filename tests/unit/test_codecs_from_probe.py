"""`kbt recommend --probe FILE` reads the compression probe record through the typed reader
(tuner.store.probe_record) and builds its codec curves from it: a real probe of a small log sample,
written and read back the way the command does."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.mutations import one_field_changed
from tuner.core.errors import BadInput
from tuner.core.writes import atomic_write
from tuner.runner.probe import load_samples, probe_samples
from tuner.runner.recommend_inputs import _table
from tuner.spec.probe import build_options
from tuner.store.probe_record import ProbeRecord, probe_record_text

WORDS = ("GET", "POST", "/api/v1/orders", "/health", "200", "404", "500", "user", "session", "timeout")


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> tuple[ProbeRecord, Path]:
    root = tmp_path_factory.mktemp("probe")
    rng = random.Random(7)
    sample = root / "access.log"
    sample.write_text(
        "".join(
            f"2026-01-01T00:00:{i % 60:02d}Z host-{rng.randrange(8)} "
            + " ".join(rng.choice(WORDS) for _ in range(12))
            + f" {rng.randrange(10**6)}\n"
            for i in range(600)
        )
    )
    options = build_options("gzip,zstd", ["zstd=1,3"], "1,4,16,64", None, 5, 1)
    record = probe_samples(load_samples([sample], options), options, min_cpu_s=0.001)
    return record, atomic_write(root / "probe.json", probe_record_text(record), "probe record")


def test_curves_come_from_the_probe_record(probed: tuple[ProbeRecord, Path]) -> None:
    record, path = probed
    table = _table(path, [])
    assert table.source == "probe.json"
    assert set(table.curves) == {"gzip", "zstd"}
    (sample,) = record.samples
    first_zstd = next(c for c in sample.curves if c.codec == "zstd")  # no level asked: the first probed
    assert first_zstd.level == 1
    assert table.curves["zstd"].points == tuple(
        (float(p.batch_messages), p.ratio.p50) for p in first_zstd.points
    )
    assert table.ratio("zstd", 64) > table.ratio("zstd", 1) > 0
    assert table.ratio("none", 64) == 1.0


def _first_point(data: dict[str, Any]) -> dict[str, Any]:
    return data["samples"][0]["curves"][0]["points"][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d.update(schema_version=d["schema_version"] + 1), "version"),
        (lambda d: d.update(kind="run-record"), "compression probe record"),
        (lambda d: d["samples"][0]["curves"][0]["points"][0].pop("ratio"), "ratio"),
        # values the typed reader once let through to a math error (log of 0, division by 0)
        (lambda d: _first_point(d).update(batch_messages=0), "batch_messages"),
        (lambda d: _first_point(d)["ratio"].update(p50=0), "ratio: must be at least 0.1"),
        (lambda d: _first_point(d)["ratio"].update(p90=-1), "ratio: must be at least 0.1"),
        # interpolating from a point this small towards a real one rounded to a ratio of 0
        (lambda d: _first_point(d)["ratio"].update(p50=4e-86), "ratio: must be at least 0.1"),
    ],
    ids=[
        "newer-version",
        "other-kind",
        "point-without-ratio",
        "zero-batch",
        "zero-ratio",
        "negative-ratio",
        "vanishing-ratio",
    ],
)
def test_a_record_the_typed_reader_refuses_is_one_bad_input_line(
    probed: tuple[ProbeRecord, Path], tmp_path: Path, change: object, needle: str
) -> None:
    data = json.loads(probed[1].read_text())
    change(data)  # type: ignore[operator]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(BadInput, match=needle) as info:
        _table(bad, [])
    assert "\n" not in info.value.message


def test_one_message_batches_spread_comes_from_the_probe(probed: tuple[ProbeRecord, Path]) -> None:
    """How much one-message batches differ (the Java estimator follows their upper tail): the
    probe's p10..p90 of the ratio at 1 message, as a lognormal's standard deviation."""
    import math

    record, path = probed
    table = _table(path, [])
    (sample,) = record.samples
    for codec in ("gzip", "zstd"):
        curve = next(c for c in sample.curves if c.codec == codec)
        one = next(p for p in curve.points if p.batch_messages == 1).ratio
        assert table.curves[codec].spread == pytest.approx(math.log(one.p90 / one.p10) / 2.563)
        assert table.curves[codec].spread >= 0


NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.sampled_from([0, -1, 1e-300, 5e-324, 1e6, 1e6 + 1]),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=NUMBERS, p10=NUMBERS, p50=NUMBERS, p90=NUMBERS, at=st.integers(0, 3))
def test_any_point_of_a_hand_edited_record_is_read_or_refused_in_one_line(
    probed: tuple[ProbeRecord, Path],
    tmp_path: Path,
    batch: float,
    p10: float,
    p50: float,
    p90: float,
    at: int,
) -> None:
    """Whatever numbers a point holds, the record is refused in one line, or every codec's curve
    gives a finite, positive ratio and spread at any batch size: never a math error later."""
    data = json.loads(probed[1].read_text())
    points = data["samples"][0]["curves"][0]["points"]
    point = points[at % len(points)]
    point["batch_messages"] = batch
    point["ratio"] = {"p10": p10, "p50": p50, "p90": p90}
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(data))
    try:
        table = _table(bad, [])
    except BadInput as exc:
        assert "\n" not in exc.message
        return
    for curve in table.curves.values():
        assert math.isfinite(curve.spread) and curve.spread >= 0
        for n in (0.5, 1, 3, 64, 1e7):
            ratio = table.ratio(curve.codec, n)
            assert math.isfinite(ratio) and ratio > 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_probe_record_changed_in_one_field_is_read_or_refused_in_one_line(
    probed: tuple[ProbeRecord, Path], tmp_path: Path, data: st.DataObject
) -> None:
    """Any field of another type, out of range or gone (a schema_version of 100 KB once pushed the
    versions kbt reads off the end of its line), or the file damaged: one line, or a codec table."""
    mutation = data.draw(one_field_changed(json.loads(probed[1].read_text())))
    bad = tmp_path / "edited.json"
    bad.write_text(mutation.text)
    try:
        table = _table(bad, [])
    except BadInput as exc:
        assert "\n" not in exc.message and len(exc.message) < 400
        if mutation.where == ("schema_version",):
            assert "this kbt reads" in exc.message
        return
    assert all(table.ratio(codec, 64) > 0 for codec in table.curves)
