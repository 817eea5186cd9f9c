"""Confirm the model's choice with real runs: bisection on the linger-like knob of one setting
family and codec, each step corrected by what the last run measured.

The model proposes the longest knob whose predicted p99 fits the budget. A run that misses the SLO
bounds the knob from above; one that meets it, from below. The next knob is the model's longest under
a budget shifted by the last run's p99 error (measured - predicted), kept strictly inside the
bounds (plain bisection when the corrected model has no answer there). It stops when the bounds are
within 5%, when the corrected model sees no room for a longer knob, or at the trial budget. Every
run is a normal run record.

The search aims at a margin below the p99 SLO (Searcher.margin): a run meeting the SLO inside the
margin is a confirmed trial but bounds the knob from above, so the bisection settles on the longest
knob that keeps the margin; the recommender marks a chosen setting inside it "at the edge".

The model ranks families against each other by predicted requests; when the confirmed setting sends
far more than predicted (MODEL_MISS), that ranking is in doubt and the best-ranked setting of another
family that could still beat what was measured is confirmed too (`runner_up`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from tuner.model.evidence import measured_of
from tuner.model.search import Candidate, Family, Searcher
from tuner.spec.clients import ClientProfile
from tuner.spec.engine_id import EngineId
from tuner.store.recommendation import Measured, Prediction, SLOBounds, Trial
from tuner.store.record import RunRecord

CLOSE_ENOUGH = 0.05
NO_ROOM = 1.03
# Measured busiest-broker rates this close are tied. A keyless run's busiest broker is the largest of
# a few per-broker counts whose split is random (sticky partitions are picked at random), so two
# settings a few percent apart on it can rank either way from run to run; the total over all brokers
# is the steadier figure and breaks the tie.
MEASURED_TIE = 0.05
# A confirmed setting sending this much more than predicted (busiest broker) puts the model's ranking
# of families in doubt: well above run-to-run noise (MEASURED_TIE) and the model's usual error.
MODEL_MISS = 0.15

T = TypeVar("T")


class Trials(Protocol):
    """Runs one setting on the lab and returns its record."""

    engines: frozenset[EngineId]  # the driver engines it can run (client kinds name theirs)

    def run(self, profile: ClientProfile, reason: str) -> RunRecord: ...


@dataclass
class Confirmation:
    trials: list[Trial]
    records: list[RunRecord]

    @property
    def best(self) -> Trial | None:
        """The confirmed trial with the fewest requests on the busiest broker."""
        ok = [t for t in self.trials if t.measured is not None and t.measured.meets_slo]
        return fewest_requests(ok, lambda t: t.measured)


def busiest_requests(m: Measured) -> float:
    """Produce requests/s on the busiest broker, else over all brokers. A busiest broker at 0 counts
    as no per-broker figure: a run that delivered records sent requests somewhere, so 0 means the
    split went uncounted, and taken as 0 it would rank that run the best of all."""
    return m.busiest_broker_requests_per_s or m.requests_per_s


def at_edge(measured: Measured, slo: SLOBounds, aim: float) -> bool:
    """Met the SLO, but its measured p99 lies above `aim` x the p99 bound (inside the margin)."""
    return (
        measured.meets_slo
        and slo.p99_ms is not None
        and measured.p99_ms is not None
        and measured.p99_ms > slo.p99_ms * aim
    )


def fewest_requests(items: Sequence[T], measured: Callable[[T], Measured | None]) -> T | None:
    """The item whose run sent the fewest produce requests to the busiest broker; runs within
    MEASURED_TIE of that go by the fewest requests over all brokers."""
    if not items:
        return None

    def busiest(i: T) -> float:
        m = measured(i)
        return busiest_requests(m) if m is not None else float("inf")

    def total(i: T) -> tuple[float, float]:
        m = measured(i)
        return (m.requests_per_s if m is not None else float("inf"), busiest(i))

    low = min(busiest(i) for i in items)
    tied = [i for i in items if busiest(i) <= low * (1 + MEASURED_TIE)]
    return min(tied, key=total)


def confirm(
    searcher: Searcher,
    family: Family,
    codec: str,
    first: Candidate,
    trials: Trials,
    max_trials: int,
    reason: str = "model's best",
) -> Confirmation:
    slo = searcher.slo
    out = Confirmation([], [])
    ok_knob: float | None = None
    bad_knob: float | None = None
    candidate = first
    while len(out.trials) < max_trials:
        record = trials.run(candidate.profile, reason)
        measured = measured_of(record, slo)
        out.records.append(record)
        out.trials.append(
            Trial(profile=candidate.profile, predicted=candidate.prediction, measured=measured, reason=reason)
        )
        knob = candidate.knob
        # The search aims at the margin below the SLO: a run that met the SLO inside the margin is
        # kept as a confirmed trial, but bounds the knob from above like a miss.
        if measured.meets_slo and not at_edge(measured, slo, searcher.margin):
            ok_knob = knob if ok_knob is None else max(ok_knob, knob)
        else:
            bad_knob = knob if bad_knob is None else min(bad_knob, knob)
        if slo.p99_ms is None or measured.p99_ms is None:
            break  # nothing to refine against
        if ok_knob is not None and bad_knob is not None and bad_knob - ok_knob <= CLOSE_ENOUGH * bad_knob:
            break
        error = measured.p99_ms - candidate.prediction.p99_ms
        budget = slo.p99_ms * searcher.margin - error
        proposal = searcher.longest(family, codec, p99_budget=budget) if budget > 0 else None
        nxt = proposal.knob if proposal is not None else None
        low = ok_knob if ok_knob is not None else 0.0
        if nxt is None or (bad_knob is not None and nxt >= bad_knob) or nxt <= low:
            if bad_knob is None:
                break  # the corrected model sees no room above a confirmed knob
            nxt = (low + bad_knob) / 2
            reason = "bisection"
        else:
            reason = f"model corrected by the last run's p99 error ({error:+.0f} ms)"
        if measured.meets_slo and not at_edge(measured, slo, searcher.margin) and nxt <= knob * NO_ROOM:
            break
        if bad_knob is not None and ok_knob is None and nxt < 1.0:
            nxt = 0.0
        candidate = searcher.at(family, nxt, codec)
        if any(t.profile == candidate.profile for t in out.trials):
            break
    return out


def runner_up(
    ranked: Sequence[Candidate], trials: Sequence[Trial], tried: set[str]
) -> tuple[Candidate, str] | None:
    """The best-ranked candidate of a family not yet tried that could beat the confirmed best, and
    why, when the confirmed best sent MODEL_MISS more requests than its prediction; else None."""
    best = Confirmation(list(trials), []).best
    if best is None or best.measured is None:
        return None
    # Like with like: the busiest broker when the client counted per broker, else the total (real
    # Filebeat's requests are the brokers' count, with no per-broker split of its own).
    per_broker = bool(best.measured.busiest_broker_requests_per_s)  # as busiest_requests counts it

    def requests(p: Prediction) -> float:
        return p.busiest_broker_requests_per_s if per_broker else p.requests_per_s

    got = busiest_requests(best.measured)
    predicted = requests(best.predicted)
    if got <= predicted * (1 + MODEL_MISS):
        return None
    for c in ranked:
        if c.family not in tried and requests(c.prediction) < got:
            return c, f"next family: the last sent {got / predicted:.2f}x its predicted requests"
    return None
