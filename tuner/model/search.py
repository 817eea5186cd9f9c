"""Find the settings that minimise the busiest broker's produce request rate under an SLO.

Per client kind the search walks a few setting families (for librdkafka: sticky partitioning with a
linger; for Filebeat: Sarama's flush frequency with the queue handing events over at once, or the
queue's own flush timeout; for Java: a linger per batch.size). Within a family the request rate
falls and the latency rises with the linger, so the model bisects for the longest linger whose
predicted p99 fits the budget. Codecs do not change the request count; they are ranked by bytes on
the wire, then codec CPU (from the compression probe when given).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tuner.core.errors import NoSolution
from tuner.model.batching import rules_for
from tuner.model.codecs import CLIENT_CODECS, CodecTable
from tuner.model.predict import ClientCalibration, IdleModel, predict_rules
from tuner.model.traffic import Traffic
from tuner.spec.profile import ClientProfile
from tuner.store.recommendation import Prediction, SLOBounds

# Model-side safety: a setting qualifies when its predicted p99 is within this share of the budget.
P99_MARGIN = 0.95
# Without a p99 budget, lingers stop here.
MAX_LINGER_MS = 5000.0
BISECT_STEPS = 7
TIE = 0.02  # request rates within 2% tie, then bytes on the wire decide
LIBRDKAFKA_BATCH_BYTES = 1_000_000
FILEBEAT_MIN_BULK = 2048


@dataclass(frozen=True)
class Candidate:
    profile: ClientProfile
    prediction: Prediction
    family: str
    knob: float  # the linger-like knob bisected (ms)

    def describe(self) -> str:
        return describe_profile(self.profile)


def describe_profile(profile: ClientProfile) -> str:
    """A short text of the batching settings, e.g. `librdkafka linger 850 ms sticky zstd`."""
    parts: list[str] = [profile.client]
    if profile.linger_ms is not None:
        parts.append(f"linger {profile.linger_ms:g} ms")
    for key in (
        "output.kafka.bulk_flush_frequency",
        "queue.mem.flush.timeout",
        "output.kafka.bulk_max_size",
    ):
        if key in profile.overrides:
            parts.append(f"{key.rsplit('.', 1)[-1]} {profile.overrides[key]}")
    if profile.batch_bytes is not None and profile.client == "java":
        parts.append(f"batch.size {profile.batch_bytes}")
    if profile.partitioner != "default":
        parts.append(profile.partitioner)
    parts.append(profile.compression or "default codec")
    return " ".join(parts)


@dataclass(frozen=True)
class Family:
    """Settings that differ only in one linger-like knob."""

    name: str
    make: Callable[[float, str], ClientProfile]  # (knob ms, codec) -> profile
    knob_max: float


def families(client: str, traffic: Traffic, slo: SLOBounds, base: ClientProfile | None) -> list[Family]:
    budget = slo.p99_ms if slo.p99_ms is not None else MAX_LINGER_MS
    keep = _kept(base, client)
    topic_max = slo.max_message_bytes or LIBRDKAFKA_BATCH_BYTES
    if client == "librdkafka":
        partitioner = "sticky" if traffic.keyless else (base.partitioner if base else "hash")
        batch_bytes = min(LIBRDKAFKA_BATCH_BYTES, topic_max, slo.max_request_bytes or LIBRDKAFKA_BATCH_BYTES)

        def rdk(linger: float, codec: str) -> ClientProfile:
            return ClientProfile(
                name=_name("librdkafka", codec, linger),
                client="librdkafka",
                linger_ms=round(linger),
                batch_messages=10_000,
                batch_bytes=batch_bytes,
                compression=codec,
                partitioner=partitioner,
                **keep,
            )

        return [Family(f"{partitioner} partitioning, linger", rdk, budget)]
    if client == "java":
        out = []
        for size in sorted({16_384, 131_072, min(1_048_576, topic_max)}):

            def java(linger: float, codec: str, size: int = size) -> ClientProfile:
                return ClientProfile(
                    name=_name("java", codec, linger, f"b{size // 1024}k"),
                    client="java",
                    linger_ms=round(linger),
                    batch_bytes=size,
                    compression=codec,
                    **keep,
                )

            out.append(Family(f"batch.size {size}, linger", java, budget))
        return out
    per_pod = traffic.rate
    bulk = FILEBEAT_MIN_BULK
    while bulk < 16_384 and bulk < 1.5 * per_pod * budget / 1000:
        bulk *= 2
    events = 2 * bulk
    group = str(bulk) if traffic.keyless else None

    def frequency(ms: float, codec: str) -> ClientProfile:
        return _filebeat(f"{round(ms)}ms", "0s", bulk, events, group, codec, keep, ms)

    def queue_timeout(ms: float, codec: str) -> ClientProfile:
        return _filebeat("0s", f"{round(ms)}ms", bulk, events, group, codec, keep, ms, "q")

    return [
        Family("Sarama flush frequency, queue at once", frequency, budget),
        Family("queue flush timeout, Sarama at once", queue_timeout, budget),
    ]


def _kept(base: ClientProfile | None, client: str) -> dict[str, object]:
    """Durability settings are the user's choice, not batching: keep the baseline's."""
    if base is None or base.client != client:
        return {}
    kept: dict[str, object] = {}
    if base.acks is not None:
        kept["acks"] = base.acks
    if base.idempotence is not None and client != "filebeat":
        kept["idempotence"] = base.idempotence
    return kept


def _name(client: str, codec: str, knob: float, extra: str = "") -> str:
    return "-".join(p for p in ("rec", client, extra, codec, f"{round(knob)}ms") if p)


def _filebeat(
    frequency: str,
    timeout: str,
    bulk: int,
    events: int,
    group: str | None,
    codec: str,
    keep: dict[str, object],
    knob: float,
    tag: str = "",
) -> ClientProfile:
    overrides = {
        "output.kafka.bulk_max_size": str(bulk),
        "output.kafka.bulk_flush_frequency": frequency,
        "queue.mem.events": str(events),
        "queue.mem.flush.min_events": str(bulk),
        "queue.mem.flush.timeout": timeout,
    }
    if group is not None:
        overrides["output.kafka.partition.random.group_events"] = group
    return ClientProfile(
        name=_name("filebeat", codec, knob, tag),
        client="filebeat",
        compression=codec,
        overrides=overrides,
        acks=keep.get("acks"),
    )


@dataclass
class SearchResult:
    best: Candidate
    ranked: list[Candidate]  # qualifying candidates, best first
    evaluated: int  # model evaluations


class Searcher:
    def __init__(
        self,
        traffic: Traffic,
        slo: SLOBounds,
        calibration: ClientCalibration,
        codecs: CodecTable,
        cost: IdleModel | None = None,
        margin: float = P99_MARGIN,
    ) -> None:
        self.traffic = traffic
        self.slo = slo
        self.calib = calibration
        self.codecs = codecs
        self.cost = cost
        self.margin = margin
        self.evaluated = 0

    def predict(self, profile: ClientProfile) -> Prediction:
        self.evaluated += 1
        return predict_rules(self.traffic, rules_for(profile), self.calib, self.codecs, self.cost)

    def fits(self, p: Prediction, p99_budget: float | None = None) -> bool:
        slo = self.slo
        budget = p99_budget if p99_budget is not None else (slo.p99_ms * self.margin if slo.p99_ms else None)
        if budget is not None and p.p99_ms > budget:
            return False
        return not (
            slo.max_producer_memory_mb is not None
            and p.producer_memory_mb is not None
            and p.producer_memory_mb > slo.max_producer_memory_mb
        )

    def longest(
        self, family: Family, codec: str, p99_budget: float | None = None, hi: float | None = None
    ) -> Candidate | None:
        """The longest knob in [0, hi] whose prediction fits (bisection; None when 0 does not)."""
        top = family.knob_max if hi is None else hi
        lo_profile = family.make(0.0, codec)
        lo_pred = self.predict(lo_profile)
        if not self.fits(lo_pred, p99_budget):
            return None
        best = Candidate(lo_profile, lo_pred, family.name, 0.0)
        hi_profile = family.make(top, codec)
        hi_pred = self.predict(hi_profile)
        if self.fits(hi_pred, p99_budget):
            return Candidate(hi_profile, hi_pred, family.name, top)
        lo, up = 0.0, top
        for _ in range(BISECT_STEPS):
            mid = (lo + up) / 2
            profile = family.make(mid, codec)
            pred = self.predict(profile)
            if self.fits(pred, p99_budget):
                lo, best = mid, Candidate(profile, pred, family.name, mid)
            else:
                up = mid
            if up - lo < max(1.0, 0.01 * up):
                break
        return best

    def search(self, client: str, base: ClientProfile | None = None) -> SearchResult:
        """The best setting for `client`; NoSolution naming the closest when none fits."""
        wanted = self.slo.codecs.get(client)
        allowed = [c for c in CLIENT_CODECS[client] if not wanted or c in wanted]
        if not allowed:
            raise NoSolution(f"no codec allowed for {client} (allowed: {', '.join(CLIENT_CODECS[client])})")
        found: list[Candidate] = []
        fams = families(client, self.traffic, self.slo, base)
        for family in fams:
            probe_codec = allowed[0]
            best = self.longest(family, probe_codec)
            if best is None:
                continue
            for codec in allowed:
                profile = family.make(best.knob, codec)
                found.append(Candidate(profile, self.predict(profile), family.name, best.knob))
        if not found:
            raise NoSolution(self._closest(client, fams, allowed[0]))
        return SearchResult(best=rank(found)[0], ranked=rank(found), evaluated=self.evaluated)

    def _closest(self, client: str, fams: list[Family], codec: str) -> str:
        options = [(self.predict(f.make(0.0, codec)), f.make(0.0, codec)) for f in fams]
        pred, profile = min(options, key=lambda o: o[0].p99_ms)
        bound = f"p99 <= {self.slo.p99_ms:g} ms" if self.slo.p99_ms is not None else "the SLO"
        mb = pred.producer_memory_mb
        memory = f", producer memory {mb:.0f} MB" if mb is not None else ""
        return (
            f"no {client} setting meets {bound}; closest is {describe_profile(profile)}"
            f" (predicted p99 {pred.p99_ms:.0f} ms{memory}, {pred.busiest_broker_requests_per_s:.1f} produce"
            " requests/s on the busiest broker)"
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
