"""Find the settings that minimise the busiest broker's produce request rate under an SLO.

Per client kind the search walks a few setting families (for librdkafka: sticky partitioning with a
linger; for Filebeat: Sarama's flush frequency with the queue handing events over at once, or the
queue's own flush timeout; for Java: a linger per batch.size). Within a family the request rate
falls with the linger and the latency rises with it, except at the shortest lingers under a heavy
load, where the requests themselves overload the broker (its capacity bound) or queue up in the
client: the lingers that fit form an interval, and the model bisects for its top, the longest
linger whose predicted p99 fits the budget. Codecs do not change the request count; they are ranked
by bytes on the wire, then codec CPU (from the compression probe when given).
"""

from __future__ import annotations

from dataclasses import dataclass

from tuner.core.errors import NoSolution
from tuner.model.codecs import CodecTable
from tuner.model.predict import ClientCalibration, IdleModel, predict_rules
from tuner.model.traffic import Traffic
from tuner.spec.clients import ClientProfile, Family, SearchContext, kind_named, kind_of, rules_of
from tuner.spec.error_bands import ErrorBands
from tuner.spec.limits import DEFAULT_MESSAGE_TIMEOUT_MS
from tuner.spec.thresholds import THRESHOLDS
from tuner.store.recommendation import Prediction, SLOBounds

# The search aims below the p99 SLO by the stated margin (tuner/spec/thresholds.yml slo_margin,
# `kbt recommend --slo-margin`): a setting qualifies when its predicted p99 is within this share.
P99_MARGIN = 1 - THRESHOLDS.slo_margin
# Without a p99 budget, lingers stop here.
MAX_LINGER_MS = 5000.0
# However loose the p99 bound, lingers stop here: a record lingers and is then sent within the
# clients' delivery timeout (a linger past it is refused by the client's settings).
LINGER_LIMIT_MS = DEFAULT_MESSAGE_TIMEOUT_MS / 2
BISECT_STEPS = 7
# When a family's longest knob does not fit, lingers down from it by this factor are tried, longest
# first, for one inside the fitting interval; the bisection then runs between it and the one above.
GRID_RATIO = 0.7
GRID_POINTS = 20  # down to ~1/1250 of the top
TIE = 0.02  # request rates within 2% tie, then bytes on the wire decide
LIBRDKAFKA_BATCH_BYTES = 1_000_000


@dataclass(frozen=True)
class Candidate:
    profile: ClientProfile
    prediction: Prediction
    family: str
    knob: float  # the linger-like knob bisected (ms)


def describe_profile(profile: ClientProfile) -> str:
    """A short text of the batching settings, e.g. `librdkafka linger 850 ms sticky zstd`."""
    return kind_of(profile).describe(profile)


def families(client: str, traffic: Traffic, slo: SLOBounds, base: ClientProfile | None) -> list[Family]:
    """The kind's setting families, bisected up to the p99 budget."""
    kind = kind_named(client)
    ctx = SearchContext(
        budget_ms=min(slo.p99_ms, LINGER_LIMIT_MS) if slo.p99_ms is not None else MAX_LINGER_MS,
        rate_per_producer=traffic.rate,
        keyless=traffic.keyless,
        topic_max_bytes=slo.max_message_bytes or LIBRDKAFKA_BATCH_BYTES,
        max_request_bytes=slo.max_request_bytes,
        base=base,
    )
    return kind.families(ctx)


@dataclass
class SearchResult:
    best: Candidate
    ranked: list[Candidate]  # qualifying candidates, best first


@dataclass(eq=False)
class Searcher:
    traffic: Traffic
    slo: SLOBounds
    calib: ClientCalibration
    codecs: CodecTable
    cost: IdleModel | None = None
    margin: float = P99_MARGIN
    bands: ErrorBands | None = None  # the held-out error table: predictions carry their band

    def predict(self, profile: ClientProfile) -> Prediction:
        return predict_rules(self.traffic, rules_of(profile), self.calib, self.codecs, self.cost, self.bands)

    def fits(self, p: Prediction, p99_budget: float | None = None) -> bool:
        return not self._failed(p, p99_budget)

    def at(self, family: Family, knob: float, codec: str) -> Candidate:
        """The family's setting at `knob` with `codec`, and its prediction."""
        profile = family.make(knob, codec)
        return Candidate(profile, self.predict(profile), family.name, knob)

    def longest(self, family: Family, codec: str, p99_budget: float | None = None) -> Candidate | None:
        """The longest knob in [0, knob_max] whose prediction fits (bisection; None when none does)."""
        top = self.at(family, family.knob_max, codec)
        if self.fits(top.prediction, p99_budget):
            return top
        inside = self._inside(family, codec, top.knob, p99_budget)
        if inside is None:
            return None
        best, up = inside
        lo = best.knob
        for _ in range(BISECT_STEPS):
            if up - lo < max(1.0, 0.01 * up):
                break
            mid = (lo + up) / 2
            candidate = self.at(family, mid, codec)
            if self.fits(candidate.prediction, p99_budget):
                lo, best = mid, candidate
            else:
                up = mid
        return best

    def _inside(
        self, family: Family, codec: str, top: float, p99_budget: float | None
    ) -> tuple[Candidate, float] | None:
        """A knob that fits and the shortest knob above it known not to: the longest fitting point
        of a geometric grid below `top`, else 0. (Not 0 first: a heavy load makes the shortest
        lingers fail too, so 0 failing does not mean every linger does.)"""
        above = top
        for step in range(1, GRID_POINTS + 1):
            candidate = self.at(family, top * GRID_RATIO**step, codec)
            if self.fits(candidate.prediction, p99_budget):
                return candidate, above
            above = candidate.knob
        zero = self.at(family, 0.0, codec)
        return (zero, above) if self.fits(zero.prediction, p99_budget) else None

    def search(self, client: str, base: ClientProfile | None = None) -> SearchResult:
        """The best setting for `client`; NoSolution naming the closest when none fits."""
        wanted = self.slo.codecs.get(client)
        codecs = kind_named(client).codecs
        allowed = [c for c in codecs if not wanted or c in wanted]
        if not allowed:
            raise NoSolution(f"no codec allowed for {client} (allowed: {', '.join(codecs)})")
        found: list[Candidate] = []
        fams = families(client, self.traffic, self.slo, base)
        for family in fams:
            best = self.longest(family, allowed[0])
            if best is None:
                continue
            found += [self.at(family, best.knob, codec) for codec in allowed]
        if not found:
            raise NoSolution(self._closest(client, fams, allowed[0]))
        return SearchResult(best=rank(found)[0], ranked=rank(found))

    def _failed(self, p: Prediction, p99_budget: float | None = None) -> list[str]:
        """The SLO's bounds `p` fails, as a user set them (the p99 bound's margin, or `p99_budget` in
        its place): the message names the one that failed (it said "p99" when the bound missed was
        network idle)."""
        slo, failed = self.slo, []
        budget = p99_budget if p99_budget is not None else (slo.p99_ms * self.margin if slo.p99_ms else None)
        if budget is not None and p.p99_ms > budget:
            failed.append(f"p99 <= {slo.p99_ms if slo.p99_ms is not None else budget:g} ms")
        idle = p.network_idle_ratio
        # the capacity bound: the broker's network threads at the offered load
        if slo.min_network_idle is not None and idle is not None and idle < slo.min_network_idle:
            failed.append(f"network idle >= {slo.min_network_idle:g} (predicted {idle:.2f})")
        mb = p.producer_memory_mb
        if slo.max_producer_memory_mb is not None and mb is not None and mb > slo.max_producer_memory_mb:
            failed.append(f"producer memory <= {slo.max_producer_memory_mb:g} MB")
        return failed

    def _closest(self, client: str, fams: list[Family], codec: str) -> str:
        options = [(self.predict(f.make(0.0, codec)), f.make(0.0, codec)) for f in fams]
        pred, profile = min(options, key=lambda o: o[0].p99_ms)
        bound = " and ".join(self._failed(pred)) or "the SLO"
        mb = pred.producer_memory_mb
        memory = f", producer memory {mb:.0f} MB" if mb is not None else ""
        # The service part of every prediction is the baseline's measured p99 less the client's own
        # wait. Measured on brokers that were not busy it holds for every setting; when it is past
        # the SLO already, something besides batching (not the brokers' request load) sets the
        # latency, so say it rather than let "no setting" read as a verdict on batching.
        service, slo_p99 = self.calib.service_p99_ms, self.slo.p99_ms
        queued = (
            f"; the baseline's p99 beyond the client's wait, {service:.0f} ms, is past the SLO before any"
            " batching, and its brokers were not busy enough for fewer requests to relieve it"
            " (measure one with --live)"
            if self.calib.runs
            and not self.calib.load_requests_per_s
            and slo_p99 is not None
            and service >= slo_p99 * self.margin
            else ""
        )
        return (
            f"no {client} setting meets {bound}; closest is {describe_profile(profile)}"
            f" (predicted p99 {pred.p99_ms:.0f} ms{memory}, {pred.busiest_broker_requests_per_s:.1f} produce"
            f" requests/s on the busiest broker){queued}"
        )


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Fewest requests on the busiest broker first; within TIE of the best, fewer bytes on the
    wire, then less codec CPU, then lower p99."""
    if not candidates:
        return []
    best = min(c.prediction.busiest_broker_requests_per_s for c in candidates)
    tied = [c for c in candidates if c.prediction.busiest_broker_requests_per_s <= best * (1 + TIE)]
    rest = sorted(
        (c for c in candidates if c not in tied), key=lambda c: c.prediction.busiest_broker_requests_per_s
    )
    tied.sort(
        key=lambda c: (
            round(c.prediction.wire_bytes_per_s or 0.0, -2),
            c.prediction.codec_cpu_ms_per_s or 0.0,
            c.prediction.p99_ms,
        )
    )
    return tied + rest
