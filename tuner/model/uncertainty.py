"""The model's own uncertainty: the regime a setting falls in, the held-out error band that applies to
its prediction, and whether those bands could change the recommender's ranking.

A band holds the signed errors e = predicted / measured - 1 of the held-out shapes of one client
kind and regime, each the median of its passes (tuner/spec/error_bands.py, generated from real
runs). A prediction p then measures within [p / (1 + e_high), p / (1 + e_low)], widened to take in
p itself. The recommender confirms live when the top candidate's band overlaps a rival family's,
or its p99 band reaches past the SLO.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuner.spec.clients.rules import FilebeatRules, JavaRules, LibrdkafkaRules, Rules
from tuner.spec.error_bands import ALL_REGIMES, ErrorBand, ErrorBands, P99Shape
from tuner.store.recommendation import Prediction, PredictionBand, SLOBounds

if TYPE_CHECKING:
    from tuner.model.search import Candidate

# A partition batch this full (of its batch.size / batch.num.messages cap) left because it was full,
# not because its linger ran out.
BATCH_BOUND_FILL = 0.9
ANY_REGIME = "any"  # a kind with one regime (the collector)
# A p99's band comes from the held-out shapes whose predicted p99 lies within this factor of it: a
# host's jitter of tens of ms is most of a 22 ms p99's error and nothing of a 1.8 s one (the shapes
# near a 2 s SLO missed by 0-2%, the 22 ms one by -81%). With no shape that near, all of them.
P99_SCALE = 4.0


def regime_of(rules: Rules, per_batch: float, message_bytes: float) -> str:
    """The regime of a setting: Filebeat's queue hands over at once (`sync flush`: flush.timeout 0s
    or min_events <= 1) or on its timer (`timed flush`), by input; a linger client's partition
    batches leave full (`batch-bound`) or at linger.ms (`linger-bound`). `per_batch`: the predicted
    records per partition batch."""
    if isinstance(rules, FilebeatRules):
        flush = "sync flush" if rules.sync_flush else "timed flush"
        return f"{flush}, {rules.reader}" if rules.reader else flush
    if isinstance(rules, LibrdkafkaRules | JavaRules):
        fill = per_batch * message_bytes / max(rules.batch_bytes, 1)
        if isinstance(rules, LibrdkafkaRules):
            fill = max(fill, per_batch / max(rules.batch_messages, 1))
        return "batch-bound" if fill >= BATCH_BOUND_FILL else "linger-bound"
    return ANY_REGIME


def measured_range(predicted: float, errors: tuple[float, float]) -> tuple[float, float]:
    """Where a measurement of `predicted` lies when its error is within `errors` (low <= high, both
    > -1): [predicted / (1 + high), predicted / (1 + low)], widened to take in `predicted`."""
    low, high = errors
    return min(predicted, predicted / (1 + high)), max(predicted, predicted / (1 + low))


def with_band(prediction: Prediction, kind: str, regime: str, bands: ErrorBands | None) -> Prediction:
    """The prediction with its regime and, when the table has one for `kind`, its band."""
    found = bands.of(kind, regime) if bands is not None else None
    band = None if found is None else _band(prediction, regime, found)
    return prediction.model_copy(update={"regime": regime, "band": band})


def p99_errors(band: ErrorBand, predicted_ms: float) -> tuple[tuple[float, float] | None, int]:
    """The p99 errors a prediction of `predicted_ms` takes from `band`: the range of its shapes within
    P99_SCALE of it, else the band's whole range; and how many shapes that range comes from (0: the
    whole range)."""
    near = [
        s.error
        for s in band.p99_shapes
        if predicted_ms / P99_SCALE <= s.predicted_ms <= predicted_ms * P99_SCALE
    ]
    return ((min(near), max(near)), len(near)) if near else (band.p99_error, 0)


def _band(p: Prediction, regime: str, band: ErrorBand) -> PredictionBand:
    basis = f"{band.kind}, all regimes" if band.regime == ALL_REGIMES else f"{band.kind}, {band.regime}"
    p99, near = p99_errors(band, p.p99_ms)
    if near:
        basis += f"; p99 from the {near} of {len(band.p99_shapes)} shapes within {P99_SCALE:g}x of it"
    return PredictionBand(
        regime=regime,
        basis=basis,
        runs=len(band.runs),
        requests_per_s=measured_range(p.requests_per_s, band.requests_error),
        busiest_broker_requests_per_s=measured_range(p.busiest_broker_requests_per_s, band.requests_error),
        p99_ms=None if p99 is None else measured_range(p.p99_ms, p99),
    )


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _busiest(p: Prediction) -> tuple[float, float]:
    if p.band is None:
        return p.busiest_broker_requests_per_s, p.busiest_broker_requests_per_s
    return p.band.busiest_broker_requests_per_s


def ranking_doubt(ranked: Sequence[Candidate], slo: SLOBounds) -> tuple[Candidate | None, str] | None:
    """Whether the bands could change the ranking: the best-ranked candidate of another family whose
    busiest-broker band overlaps the top one's (that rival, and why), or the top one's p99 band
    reaching past the SLO's p99 (no rival, and why). None when the bands cannot change it (or the
    candidates carry none)."""
    if not ranked:
        return None
    top = ranked[0]
    mine = _busiest(top.prediction)
    for other in ranked[1:]:
        if other.family == top.family:
            continue
        theirs = _busiest(other.prediction)
        if (top.prediction.band or other.prediction.band) and overlaps(mine, theirs):
            return other, (
                f"held-out bands overlap: {top.family} {mine[0]:.1f}-{mine[1]:.1f} and {other.family}"
                f" {theirs[0]:.1f}-{theirs[1]:.1f} requests/s on the busiest broker"
            )
        break  # the best of the other families is the only rival that matters
    p99 = None if top.prediction.band is None else top.prediction.band.p99_ms
    if slo.p99_ms is not None and p99 is not None and p99[1] > slo.p99_ms:
        return None, (
            f"held-out p99 band {p99[0]:.0f}-{p99[1]:.0f} ms reaches past the SLO's {slo.p99_ms:g} ms"
        )
    return None


@dataclass(frozen=True)
class HeldOutError:
    """One held-out run: predicted / measured - 1 for produce requests/s and p99."""

    kind: str
    regime: str
    run: str  # the run id (sweep/name-time)
    requests_error: float
    p99_error: float | None
    shape: str = ""  # the held-out shape (sweep/name) whose pass this run is; "" = the run alone
    predicted_p99_ms: float | None = None  # what the model predicted for it


def bands_from(errors: Sequence[HeldOutError], fitting_set: Sequence[str]) -> ErrorBands:
    """The error table: per kind and regime, and per kind over all its regimes (ALL_REGIMES), the
    lowest and highest error of its held-out shapes (rounded to 0.1%, so the committed table does
    not move with float noise). A shape's error is the median of its passes' signed errors: the
    passes repeat a shape so that one host hiccup (a 2.7 s p99 where its other passes measured 23
    and 115 ms) is outvoted instead of widening every band of the kind a hundredfold."""
    groups: dict[tuple[str, str], list[HeldOutError]] = {}
    for e in errors:
        groups.setdefault((e.kind, e.regime), []).append(e)
        groups.setdefault((e.kind, ALL_REGIMES), []).append(e)
    bands = []
    for (kind, regime), group in sorted(groups.items()):
        shapes = _by_shape(group)
        req = _medians(shapes, lambda e: e.requests_error)
        p99 = _medians(shapes, lambda e: e.p99_error)
        bands.append(
            ErrorBand(
                kind=kind,
                regime=regime,
                runs=sorted(e.run for e in group),
                requests_error=(_round(min(req)), _round(max(req))),
                p99_error=(_round(min(p99)), _round(max(p99))) if p99 else None,
                p99_shapes=_p99_shapes(shapes),
            )
        )
    return ErrorBands(fitting_set=sorted(fitting_set), bands=bands)


Value = Callable[[HeldOutError], float | None]


def _by_shape(group: Sequence[HeldOutError]) -> dict[str, list[HeldOutError]]:
    """The held-out runs of `group` by their shape: a shape's passes."""
    passes: dict[str, list[HeldOutError]] = {}
    for e in group:
        passes.setdefault(e.shape or e.run, []).append(e)
    return dict(sorted(passes.items()))


def _median(passes: Sequence[HeldOutError], value: Value) -> float | None:
    """The median of the passes' `value` (those without one left out; None: none has one)."""
    values = [v for v in map(value, passes) if v is not None]
    return statistics.median(values) if values else None


def _medians(shapes: dict[str, list[HeldOutError]], value: Value) -> list[float]:
    """Per shape, the median of its passes' `value` (shapes without one left out)."""
    return [m for passes in shapes.values() if (m := _median(passes, value)) is not None]


def _p99_shapes(shapes: dict[str, list[HeldOutError]]) -> list[P99Shape]:
    """Each shape with a predicted p99 and a measured one: that prediction and its passes' median error."""
    found = []
    for shape, passes in shapes.items():
        measured = [e for e in passes if e.p99_error is not None and e.predicted_p99_ms]
        predicted = _median(measured, lambda e: e.predicted_p99_ms)
        error = _median(measured, lambda e: e.p99_error)
        if predicted is not None and error is not None:
            found.append(P99Shape(shape=shape, predicted_ms=_round(predicted), error=_round(error)))
    return found


def _round(x: float) -> float:
    return round(x, 3)
