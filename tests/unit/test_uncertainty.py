"""The model's own uncertainty (tuner/model/uncertainty.py): the band math, the regimes, the table
generated from the held-out runs, and the recommender confirming live when a band could change
its ranking."""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tuner.core.paths import repo_root
from tuner.model.recommend import Request, recommend
from tuner.model.search import Candidate
from tuner.model.uncertainty import (
    P99_SCALE,
    HeldOutError,
    bands_from,
    measured_range,
    overlaps,
    p99_errors,
    ranking_doubt,
    regime_of,
    with_band,
)
from tuner.spec.clients import rules_of
from tuner.spec.clients.filebeat import FilebeatProfile
from tuner.spec.clients.librdkafka import LibrdkafkaProfile
from tuner.spec.error_bands import ALL_REGIMES, ErrorBand, ErrorBands, P99Shape, load_error_bands
from tuner.store.recommendation import Prediction, Recommendation, SLOBounds

errors = st.floats(min_value=-0.9, max_value=5.0, allow_nan=False)
rates = st.floats(min_value=0.01, max_value=1e6, allow_nan=False)


def _pair(a: float, b: float) -> tuple[float, float]:
    return (min(a, b), max(a, b))


@given(rates, errors, errors, errors)
def test_a_measurement_missing_like_the_band_lies_in_its_range(
    predicted: float, e1: float, e2: float, at: float
) -> None:
    low, high = _pair(e1, e2)
    lo, hi = measured_range(predicted, (low, high))
    assert lo <= predicted <= hi
    if low <= at <= high:  # a run whose error is inside the band measures inside the range
        measured = predicted / (1 + at)
        assert lo * (1 - 1e-9) <= measured <= hi * (1 + 1e-9)


@given(rates, errors)
def test_a_zero_width_band_at_zero_is_the_prediction(predicted: float, e: float) -> None:
    assert measured_range(predicted, (0.0, 0.0)) == (predicted, predicted)
    # Wider bands give wider ranges.
    narrow = measured_range(predicted, (min(e, 0.0), max(e, 0.0)))
    wide = measured_range(predicted, (min(e, 0.0) - 0.05, max(e, 0.0) + 0.05))
    assert wide[0] <= narrow[0] and narrow[1] <= wide[1]


@given(st.tuples(rates, rates), st.tuples(rates, rates))
def test_overlap_is_symmetric_and_means_a_shared_point(
    a: tuple[float, float], b: tuple[float, float]
) -> None:
    a, b = _pair(*a), _pair(*b)
    assert overlaps(a, b) == overlaps(b, a)
    assert overlaps(a, b) == (max(a[0], b[0]) <= min(a[1], b[1]))


held_out = st.builds(
    HeldOutError,
    kind=st.sampled_from(["librdkafka", "java", "filebeat"]),
    regime=st.sampled_from(["linger-bound", "batch-bound", "sync flush, log"]),
    run=st.text("abcdef", min_size=1, max_size=6),
    requests_error=errors,
    p99_error=st.none() | errors,
    shape=st.sampled_from(["", "t/a", "t/b"]),
)


ROUNDING = 6e-4  # the table rounds to 0.1%: half of it, and a float's noise on top (0.4375 -> 0.438)


def _medians(rows: list[HeldOutError], error: str) -> dict[str, float]:
    passes: dict[str, list[float]] = {}
    for row in rows:
        if getattr(row, error) is not None:
            passes.setdefault(row.shape or row.run, []).append(getattr(row, error))
    return {shape: statistics.median(v) for shape, v in passes.items()}


@given(st.lists(held_out, min_size=1, max_size=20))
def test_every_held_out_shape_lies_in_its_band_and_its_kinds(rows: list[HeldOutError]) -> None:
    table = bands_from(rows, ["fit/a"])
    for row in rows:
        for regime in (row.regime, ALL_REGIMES):
            band = next(b for b in table.bands if (b.kind, b.regime) == (row.kind, regime))
            group = [r for r in rows if r.kind == row.kind and regime in (ALL_REGIMES, r.regime)]
            assert row.run in band.runs
            for name, pair in (("requests_error", band.requests_error), ("p99_error", band.p99_error)):
                medians = _medians(group, name)
                if not medians:
                    assert pair is None
                    continue
                assert pair is not None
                # The band is the shapes' medians' range: each shape inside, both ends reached...
                assert pair[0] == pytest.approx(min(medians.values()), abs=ROUNDING)
                assert pair[1] == pytest.approx(max(medians.values()), abs=ROUNDING)
                # ...never wider than its runs' own errors.
                raw = [getattr(r, name) for r in group if getattr(r, name) is not None]
                assert min(raw) - ROUNDING <= pair[0] <= pair[1] <= max(raw) + ROUNDING
    # A regime with no held-out run falls back to the kind's band; a kind with none has no band.
    kind = rows[0].kind
    assert table.of(kind, "no such regime") == table.of(kind, ALL_REGIMES)
    assert table.of("otelcol", "any") is None


def test_one_hiccup_pass_of_a_shape_does_not_set_its_kinds_band() -> None:
    """The held-out keyed librdkafka shape: 22 ms predicted, its three passes measured 115 ms,
    2,725 ms (a host hiccup) and 23 ms. Its band is its median pass's miss, not the hiccup's."""
    passes = [(-0.81, "t/keyed-a"), (-0.992, "t/keyed-b"), (-0.051, "t/keyed-c")]
    rows = [
        HeldOutError("librdkafka", "linger-bound", run, 0.01, p99, shape="truth/keyed") for p99, run in passes
    ] + [HeldOutError("librdkafka", "linger-bound", "t/large-a", 0.0, -0.04, shape="truth/large")]
    band = bands_from(rows, ["fit/a"]).of("librdkafka", "linger-bound")
    assert band is not None and band.p99_error == (-0.81, -0.04)
    assert len(band.runs) == 4  # every pass is still named
    # Without a shape near 1.8 s, a 1.8 s prediction measures up to 9.5 s (not 225 s).
    assert band.p99_shapes == []  # these rows carry no predicted p99
    assert measured_range(1800.0, band.p99_error)[1] == pytest.approx(1800 / 0.19)


def _shapes(*points: tuple[float, float]) -> ErrorBand:
    shapes = [P99Shape(shape=f"t/s{i}", predicted_ms=p, error=e) for i, (p, e) in enumerate(points)]
    errors = [e for _, e in points]
    return ErrorBand(kind="librdkafka", regime="linger-bound", runs=["t/a"], requests_error=(0.0, 0.0),
                     p99_error=(min(errors), max(errors)), p99_shapes=shapes)  # fmt: skip


def test_a_p99_band_comes_from_the_shapes_near_its_scale() -> None:
    """The held-out librdkafka shapes: a 22 ms p99 missed by -81% (a host's jitter), the shapes near
    a 2 s SLO by 0-4%. A 1.8 s prediction takes those within 4x of it; a 30 ms one the 22 and 102 ms
    shapes'."""
    band = _shapes((21.8, -0.81), (101.8, -0.338), (501.6, -0.04), (1491.2, -0.001), (1791.1, 0.001))
    assert p99_errors(band, 1800.0) == ((-0.04, 0.001), 3)
    assert p99_errors(band, 30.0) == ((-0.81, -0.338), 2)
    assert p99_errors(band, 100_000.0) == ((-0.81, 0.001), 0)  # no shape near: the whole range
    lo, hi = measured_range(1800.0, p99_errors(band, 1800.0)[0] or (0.0, 0.0))
    assert 1798 < lo <= 1800 <= hi < 1876


@given(
    st.floats(min_value=0.01, max_value=1e7),
    st.lists(st.tuples(st.floats(0.01, 1e7), errors), min_size=1, max_size=8),
)
def test_a_p99_band_lies_within_the_whole_range(predicted: float, points: list[tuple[float, float]]) -> None:
    band = _shapes(*points)
    pair, near = p99_errors(band, predicted)
    assert pair is not None and band.p99_error is not None
    assert band.p99_error[0] <= pair[0] <= pair[1] <= band.p99_error[1]
    assert near == sum(predicted / P99_SCALE <= p <= predicted * P99_SCALE for p, _ in points)


def test_the_committed_table_bands_a_p99_near_the_slo_by_its_near_shapes() -> None:
    """tuner/spec/error_bands.json: the held-out shapes near a 2 s SLO (truth-near-slo) set the band
    of a 1.8 s prediction, for librdkafka and Java alike."""
    table = load_error_bands()
    for kind in ("librdkafka", "java"):
        band = table.of(kind, "linger-bound")
        assert band is not None
        pair, near = p99_errors(band, 1800.0)
        assert near >= 2 and pair is not None
        assert -0.1 < pair[0] <= pair[1] < 0.1, (kind, pair)


def test_a_band_must_be_ordered() -> None:
    with pytest.raises(ValueError, match="lowest <= highest"):
        ErrorBand(kind="java", regime="*", runs=["a"], requests_error=(0.2, -0.1))
    with pytest.raises(ValueError, match="unknown key"):
        ErrorBands.model_validate({"fitting_set": [], "bandz": []})


def test_regimes() -> None:
    sync = FilebeatProfile.model_validate(
        {"name": "s", "filebeat": {"input.engine": "real", "queue.mem.flush.timeout": "0s"}}
    )
    timed = FilebeatProfile.model_validate({"name": "t", "filebeat": {"input.engine": "real"}})
    stream = FilebeatProfile.model_validate(
        {"name": "f", "filebeat": {"input.engine": "real", "input.type": "filestream"}}
    )
    assert regime_of(rules_of(sync), 1, 900) == "sync flush, log"
    assert regime_of(rules_of(timed), 1, 900) == "timed flush, log"
    assert regime_of(rules_of(stream), 1, 900) == "timed flush, filestream"
    rdk = rules_of(LibrdkafkaProfile(name="r", linger_ms=100, batch_bytes=16384))
    assert regime_of(rdk, 5, 900) == "linger-bound"
    assert regime_of(rdk, 17, 900) == "batch-bound"  # 17 x 900 B fills 16 KB past 90%


def _candidate(family: str, busiest: float, p99: float, band: ErrorBands | None) -> Candidate:
    p = Prediction(
        requests_per_s=busiest * 3,
        busiest_broker_requests_per_s=busiest,
        records_per_request=10,
        p50_ms=p99 / 2,
        p99_ms=p99,
    )
    profile = LibrdkafkaProfile(name=family, linger_ms=100)
    return Candidate(profile, with_band(p, "librdkafka", "linger-bound", band), family, 100.0)


def _table(low: float, high: float, kind: str = "librdkafka", regime: str = "linger-bound") -> ErrorBands:
    errors = (low, high)
    band = ErrorBand(kind=kind, regime=regime, runs=["t/a"], requests_error=errors, p99_error=errors)
    return ErrorBands(fitting_set=[], bands=[band])


def test_the_bands_put_the_ranking_in_doubt_only_when_they_could_change_it() -> None:
    slo = SLOBounds(p99_ms=1000.0)
    wide, narrow = _table(-0.3, 0.3), _table(-0.02, 0.02)
    for table, doubted in ((wide, True), (narrow, False), (None, False)):
        ranked = [_candidate("sticky", 10.0, 500, table), _candidate("spread", 12.0, 500, table)]
        doubt = ranking_doubt(ranked, slo)
        assert (doubt is not None) == doubted
        if doubt is not None:
            rival, why = doubt
            assert rival is ranked[1] and "overlap" in why
    # The top candidate's p99 band reaching past the SLO: doubt with no rival.
    edge = [_candidate("sticky", 10.0, 900, _table(-0.2, 0.2)), _candidate("spread", 30.0, 500, None)]
    doubt = ranking_doubt(edge, slo)
    assert doubt is not None and doubt[0] is None and "SLO" in doubt[1]


def test_the_committed_table_is_from_held_out_runs_only() -> None:
    table = load_error_bands()
    assert table.bands, "make bench-truth, copy its records to loadtests/truth/records, make generate"
    assert not any(f.startswith("truth-") for f in table.fitting_set)
    assert all(r.startswith("truth-") for b in table.bands for r in b.runs)
    records = repo_root() / "loadtests" / "truth" / "records"
    names = {json.loads(p.read_text())["run_id"] for p in records.glob("*/*.json")}
    assert {r for b in table.bands for r in b.runs} <= names


def test_a_recommendation_carries_its_band_and_confirms_the_rival_live() -> None:
    """Java on the stand-in lab (the model exact): bands wide enough to swap two families' ranks get
    the rival family confirmed live too; an exact band leaves one family confirmed, as before."""
    from tests.unit.test_recommend_vs_grid import BROKERS, GRID, SLO, MispredictedFamilyLab

    def run(table: ErrorBands) -> tuple[Recommendation, MispredictedFamilyLab]:
        lab = MispredictedFamilyLab(1.0)
        request = Request(
            workload=GRID.spec.workload,
            brokers=BROKERS,
            slo=SLO,
            clients=["java"],
            trials=lab,
            max_trials=5,
            bands=table,
        )
        return recommend(request), lab

    rec, lab = run(_table(-0.5, 1.0, "java", ALL_REGIMES))
    [chosen] = rec.clients
    band = chosen.predicted.band
    assert band is not None and band.runs == 1 and band.basis == "java, all regimes"
    assert band.requests_per_s[0] < chosen.predicted.requests_per_s < band.requests_per_s[1]
    assert chosen.band_doubt is not None and "overlap" in chosen.band_doubt
    assert len({r.plan.profile.batch_bytes for r in lab.runs}) == 2
    assert any(t.reason.startswith("held-out bands overlap") for t in chosen.trials)
    assert rec.error_bands_from == 1
    rec, lab = run(_table(0.0, 0.0, "java", ALL_REGIMES))
    [chosen] = rec.clients
    assert chosen.band_doubt is None
    assert {r.plan.profile.batch_bytes for r in lab.runs} == {lab.first_batch}
