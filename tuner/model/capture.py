"""A captured cluster's produce traffic shaped into client groups, each a workload and a client
profile `kbt sweep` runs (pure: a tuner.store.capture.CaptureRecord in, specs as data out).

A group is one kind of producer: the clients whose id differs only by a trailing instance number
(`producer-1`, `producer-2`), with the same software and principal. Per group:

- producers: the most client connections it produced on at any one broker (a producer keeps one
  connection per broker it sends to), the real count, kept;
- records/s: each topic's appended records (end offsets over the window) shared among the groups
  writing it by their record-batch bytes;
- record sizes and keys: the sampled newest records of its topics;
- acks as its requests carried them; requests/s, bytes and partitions per request from the logs;
- linger: the whole millisecond whose simulated requests/s (tuner.model.predict) lies nearest the
  observed (the batching evidence, stated beside it);
- each topic's partition leaders: the source's, its broker ids in sorted order mapped onto the
  lab's brokers 1..N (modulo N when the lab has fewer), so each lab broker leads the partitions
  (and takes the load) its source broker did;
- a keyed group's topic written by it alone: each partition's share of the records appended
  (`key_shares`), so the replay's keys land on the partitions in the source's shares.

The lab cannot always run the real producer count: `scale` = lab producers / real producers (the
same for every group, at most 1), per-producer behaviour unchanged, so the lab's broker load is the
source's times `scale` and a forecast divides by it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Annotated, Any, TypeVar

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.model.predict import simulated
from tuner.model.traffic import Traffic
from tuner.spec.clients import DEFAULT_KIND, KINDS, ClientProfile, kind_named, profile_of, rules_of
from tuner.spec.limits import (
    MAX_KAFKA_BYTES,
    MAX_PARTITIONS,
    MAX_PRODUCERS,
    MAX_RATE_PER_S,
    MIN_RATE_PER_PRODUCER,
    RECORD_OVERHEAD_BYTES,
    TOPIC_MAX_MESSAGE_BYTES_KEY,
)
from tuner.spec.workload import MAX_EVENT_BYTES
from tuner.store.capture import CaptureRecord, ClientTraffic, TopicFacts, TopicSample

LINGERS_MS = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
SIZE_BUCKETS = 8  # equal-count size buckets a sampled distribution is cut into
KEYED_SHARE = 0.5  # a group whose sampled records are mostly keyed is replayed keyed
COMPRESSED_RATIO = 1.3  # record bytes over wire bytes above this: the batches were compressed
RECORD_LIMIT_MARGIN = 1024  # a batch's header and a record's framing beside its largest record
FILEBEAT_MAX_MESSAGE_BYTES = 1_000_000  # Filebeat's default, below Kafka's
MAX_TOPICS = 16
DEFAULT_LAB_PRODUCERS = 48
_INSTANCE = re.compile(r"[-_.]?[0-9]+$")
_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
N = TypeVar("N", int, float)


RECORD_FILE = "capture.json"  # what a capture read, beside a folder per client group
DEFAULT_WARMUP_S = 20.0  # a replay run's unmeasured start, cut to half a shorter run


class ShapeOptions(Frozen):
    lab_producers: int = Field(default=DEFAULT_LAB_PRODUCERS, gt=0, le=MAX_PRODUCERS)
    lab_brokers: int = Field(default=3, gt=0, le=16)
    duration_s: float = Field(default=60.0, ge=10, le=3600)
    warmup_s: float = Field(default=DEFAULT_WARMUP_S, ge=0)
    # the model's simulation per group (a few simulations each); off, no linger is inferred
    infer_linger: bool = True
    # A calibration (tuner/render/calibrate.py): per group name, the factor between what the model
    # predicted at the inferred linger and what a replay at it sent; the linger is then inferred for
    # the observed rate times that factor, so the replay, not the model, lands on the source's rate.
    calibration: dict[str, Annotated[float, Field(gt=0.05, lt=20.0)]] = Field(
        default_factory=dict, max_length=MAX_TOPICS * 16
    )


class CapturedGroup(Frozen):
    """One client group as captured, and the specs that replay it (plain data: the workload and
    the profile as their YAML would hold them)."""

    name: str
    client_ids: list[str]
    software: str
    principal: str
    kind: str  # a registered client kind (tuner.spec.clients.KINDS)
    # The figures a reader divides by or compares are held to what a capture record can give
    # (tuner.store.capture holds the record's rates; a group's are shares of them).
    producers: int = Field(ge=1)  # on the source cluster
    lab_producers: int
    requests_per_s: float = Field(gt=0, le=MAX_RATE_PER_S)  # a group is made of requests
    requests_per_s_by_broker: dict[str, float]
    bytes_per_request: float = Field(ge=0, le=MAX_KAFKA_BYTES)
    partitions_per_request: float
    records_per_s: float = Field(ge=0, le=MAX_RATE_PER_S)
    record_bytes: float  # sampled mean value + key size
    keyed_share: float | None  # of its sampled records; None: nothing sampled
    key_cardinality: int | None
    acks: str
    compression_ratio: float | None  # record bytes / wire bytes
    linger_ms: float | None  # inferred; None for kinds configured otherwise
    predicted_requests_per_s: float | None
    produce_p99_ms: float | None
    topics: list[str]
    evidence: list[str]
    workload: dict[str, Any]
    profile: dict[str, Any]


class CapturePlan(Frozen):
    scale: float = Field(gt=0, le=1)  # lab producers / source producers
    broker_map: dict[str, int] = Field(default_factory=dict)  # source broker id -> lab broker id
    producers: int
    lab_producers: int
    groups: list[CapturedGroup]
    busiest_broker: str | None
    worst_offender: str | None  # the group with the most produce requests on the busiest broker
    notes: list[str]
    options: ShapeOptions | None = None  # how it was shaped (None: a capture before they were kept)


def group_key(client_id: str) -> str:
    """A client id without its trailing instance number: `producer-3` -> `producer`."""
    base = _INSTANCE.sub("", client_id)
    return base or client_id or "no-client-id"


def kind_of_software(software: str, client_id: str) -> tuple[str, str | None]:
    """The client kind a client's software name or client id names (each kind says which, in the
    registry), and a note when the kind only stands in for it or the name is unknown."""
    name = software.lower()
    for kind in KINDS.values():
        if any(part in name for part in kind.software) or client_id in kind.client_ids:
            return kind.name, kind.stands_in_for
    shown = software or "no software name"
    return DEFAULT_KIND, f"{shown} is not a client kind kbt runs: replayed by {DEFAULT_KIND}"


def spec_name(text: str) -> str:
    """A name the specs accept (letters, digits, . _ -), at most 60 characters."""
    name = _NAME_CHARS.sub("-", text).strip("-.") or "group"
    return name[:60]


def size_buckets(sizes: list[int]) -> list[dict[str, float]]:
    """Equal-count buckets of the sorted sizes, each its mean size (equal sizes merged)."""
    ordered = sorted(s for s in sizes if s > 0)
    if not ordered:
        return []
    n = min(SIZE_BUCKETS, len(ordered))
    merged: dict[int, float] = {}
    for i in range(n):  # n <= len(ordered): no chunk is empty
        chunk = ordered[i * len(ordered) // n : (i + 1) * len(ordered) // n]
        size = max(1, round(sum(chunk) / len(chunk)))
        merged[size] = merged.get(size, 0.0) + len(chunk) / len(ordered)
    return [{"bytes": b, "weight": round(w, 6)} for b, w in sorted(merged.items())]


def p99(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(0.99 * len(ordered)) - 1))]


def shape(record: CaptureRecord, options: ShapeOptions | None = None) -> CapturePlan:
    """The record's client groups, each with its workload and profile, and the lab scale."""
    options = options or ShapeOptions()
    window = max(record.window_s, 1e-9)
    grouped: dict[tuple[str, str, str], list[ClientTraffic]] = {}
    for row in record.clients:
        key = (group_key(row.client_id), software_name(row.software), row.principal)
        grouped.setdefault(key, []).append(row)
    topic_bytes = _topic_bytes(record.clients)
    producers = {key: _producers(rows) for key, rows in grouped.items()}
    total = sum(producers.values())
    scale = min(1.0, options.lab_producers / total) if total else 1.0
    names = {RECORD_FILE}  # a client id of capture.json is not a folder beside the file
    groups = []
    notes = list(record.notes)
    brokers = broker_map(record, options.lab_brokers)
    if len(brokers) > options.lab_brokers:
        notes.append(
            f"the source's {len(brokers)} brokers are mapped onto the lab's {options.lab_brokers} by"
            f" modulo (source broker ids in sorted order onto 1..{options.lab_brokers}): a lab broker"
            " leads the partitions of several source brokers"
        )
    for key, rows in sorted(grouped.items(), key=lambda kv: -sum(r.requests for r in kv[1])):
        name = _unique(spec_name(f"{key[0]}-{key[1]}" if key[1] else key[0]), names)
        group, group_notes = _group(
            record, options, name, rows, producers[key], scale, topic_bytes, window, brokers
        )
        notes += group_notes
        if group is not None:
            groups.append(group)
    busiest, offender = _worst_offender(groups)
    lab_total = sum(g.lab_producers for g in groups)
    return CapturePlan(
        scale=scale,
        broker_map={str(k): v for k, v in brokers.items()},
        producers=total,
        lab_producers=lab_total,
        groups=groups,
        busiest_broker=busiest,
        worst_offender=offender,
        notes=notes,
        options=options,
    )


def broker_map(record: CaptureRecord, lab: int) -> dict[int, int]:
    """Each source broker id -> the lab broker (1..lab) that replays it: the ids in sorted order,
    modulo `lab` when the lab has fewer (a capture made before broker ids were kept: the ids
    leading some partition)."""
    ids = record.broker_ids or sorted({b for t in record.topics for b in t.leaders if b >= 0})
    return {broker: i % lab + 1 for i, broker in enumerate(sorted(ids))}


def _leaders(leaders: list[int], partitions: int, brokers: dict[int, int]) -> dict[str, list[int]]:
    """The topic's `leaders` field on the lab's brokers; none when a partition had no leader (or
    the metadata was short): Kafka then places them."""
    if len(leaders) != partitions or any(b not in brokers for b in leaders):
        return {}
    return {"leaders": [brokers[b] for b in leaders]}


def _key_shares(topic: TopicFacts) -> dict[str, list[float]]:
    """A keyed topic's `key_shares`: each partition's share of the records appended over the
    window (the replay's keys then land where the source's did); none without the counts."""
    counts = topic.partition_records
    total = sum(counts)
    if len(counts) != topic.partitions or total <= 0:
        return {}
    return {"key_shares": [round(n / total, 6) for n in counts]}


def software_name(software: str) -> str:
    """The software's name without its version (its first word)."""
    return software.split(" ")[0] if software else ""


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or it numbered, unlike every name `taken` (case-folded: a folder per group, and a
    file system may not tell App from app)."""
    candidate, n = name, 2
    while candidate.casefold() in taken:
        candidate = f"{name[:56]}-{n}"
        n += 1
    taken.add(candidate.casefold())
    return candidate


def _totals(pairs: Iterable[tuple[str, N]]) -> dict[str, N]:
    """The values summed per key (keys in the order first seen)."""
    out: dict[str, N] = {}
    for key, value in pairs:
        out[key] = out.get(key, 0) + value
    return out


def _topic_bytes(rows: list[ClientTraffic]) -> dict[str, int]:
    return _totals(kv for row in rows for kv in row.topic_bytes.items())


def _producers(rows: list[ClientTraffic]) -> int:
    return max(_totals((row.broker, max(row.connections, 1)) for row in rows).values(), default=1)


def _group(
    record: CaptureRecord,
    options: ShapeOptions,
    name: str,
    rows: list[ClientTraffic],
    producers: int,
    scale: float,
    topic_bytes: dict[str, int],
    window: float,
    brokers: dict[int, int],
) -> tuple[CapturedGroup | None, list[str]]:
    notes: list[str] = []
    kind, kind_note = kind_of_software(rows[0].software, rows[0].client_id)
    if kind_note:
        notes.append(f"group {name}: {kind_note}")
    requests = sum(r.requests for r in rows)
    wire = sum(r.record_bytes for r in rows)
    bytes_by_topic = _topic_bytes(rows)
    facts = {t.name: t for t in record.topics}
    topics = [t for t, _ in sorted(bytes_by_topic.items(), key=lambda kv: -kv[1]) if t in facts][:MAX_TOPICS]
    if not topics or requests == 0:
        notes.append(f"group {name}: produced to no topic the admin API listed; left out")
        return None, notes
    records = sum(facts[t].records * bytes_by_topic[t] / topic_bytes[t] for t in topics if topic_bytes.get(t))
    rate = records / window / producers
    if rate < MIN_RATE_PER_PRODUCER:
        notes.append(
            f"group {name}: {rate:.3g} records/s per producer is below what a workload offers; left out"
        )
        return None, notes
    shared = [t for t in topics if bytes_by_topic[t] < topic_bytes.get(t, 0)]
    if shared:
        notes.append(
            f"group {name}: topics {', '.join(shared)} are written by other groups too:"
            " their sampled sizes and keys are the topics' mix"
        )
    sizes, keyed, keyless, distinct = _sampled(record, topics, facts)
    message, record_bytes = _message(sizes, wire, records)
    keyed_share = keyed / (keyed + keyless) if keyed + keyless else None
    key_cardinality = max(1, distinct) if keyed_share is not None and keyed_share > KEYED_SHARE else None
    ratio = records * record_bytes / wire if wire and sizes else None
    acks = _acks(rows)
    lab_producers = max(1, min(MAX_PRODUCERS, round(producers * scale)))
    partitions = tuple(min(MAX_PARTITIONS, facts[t].partitions) for t in topics)
    traffic = Traffic(producers, rate, record_bytes, partitions, record.brokers, key_cardinality)
    limit = _record_limit(message)
    factor = options.calibration.get(name)
    profile, linger, predicted, evidence = _profile(
        name, kind, acks, ratio, limit, traffic, requests / window, factor or 1.0, options.infer_linger
    )
    by_broker = _totals((row.broker, row.requests / window) for row in rows)
    workload = {
        "name": name,
        "description": (
            f"captured: {producers} producers x {rate:.4g} records/s of ~{record_bytes:.0f} B;"
            f" lab {lab_producers} producers (scale {scale:.4g})"
        ),
        "topics": [
            {
                "name": spec_name(t),
                "partitions": facts[t].partitions,
                "replication_factor": max(1, min(facts[t].replication_factor, options.lab_brokers)),
                **({"configs": {TOPIC_MAX_MESSAGE_BYTES_KEY: str(limit)}} if limit is not None else {}),
                **_leaders(facts[t].leaders, facts[t].partitions, brokers),
                **(_key_shares(facts[t]) if key_cardinality and t not in shared else {}),
            }
            for t in topics
        ],
        "producers": lab_producers,
        "processes": min(lab_producers, 1 + lab_producers // 16),
        "rate_per_producer": round(rate, 4),
        "message": message,
        "keys": {"kind": "random", "cardinality": key_cardinality} if key_cardinality else {"kind": "none"},
        "duration_s": options.duration_s,
        "warmup_s": min(options.warmup_s, options.duration_s / 2),
    }
    group = CapturedGroup(
        name=name,
        client_ids=sorted({r.client_id for r in rows})[:20],
        software=rows[0].software,
        principal=rows[0].principal,
        kind=kind,
        producers=producers,
        lab_producers=lab_producers,
        requests_per_s=requests / window,
        requests_per_s_by_broker=by_broker,
        bytes_per_request=wire / requests,
        partitions_per_request=sum(r.partitions for r in rows) / requests,
        records_per_s=records / window,
        record_bytes=record_bytes,
        keyed_share=keyed_share,
        key_cardinality=key_cardinality,
        acks=acks,
        compression_ratio=ratio,
        linger_ms=linger,
        predicted_requests_per_s=predicted,
        produce_p99_ms=p99([t for r in rows for t in r.total_time_ms]),
        topics=topics,
        evidence=evidence,
        workload=workload,
        profile=profile,
    )
    return group, notes


def _sampled(
    record: CaptureRecord, topics: list[str], facts: dict[str, TopicFacts]
) -> tuple[list[int], int, int, int]:
    sizes: list[int] = []
    keyed = keyless = distinct = 0
    for sample in record.samples:
        if sample.topic not in topics:
            continue
        n_keyed = len(sample.key_bytes)
        # a record's bytes: its value plus, spread over the sample, the mean key size
        mean_key = sum(sample.key_bytes) / n_keyed if n_keyed else 0.0
        share = n_keyed / len(sample.value_bytes) if sample.value_bytes else 0.0
        sizes += [max(1, round(v + mean_key * share)) for v in sample.value_bytes]
        keyed += n_keyed
        keyless += sample.keyless
        distinct += _keys_of_topic(sample, facts.get(sample.topic))
    return sizes, keyed, keyless, distinct


def _keys_of_topic(sample: TopicSample, facts: TopicFacts | None) -> int:
    """The distinct keys a topic's sample saw, scaled to the partitions written that it did not read
    (a cut read, a topic of more partitions than a sample reads): a key hashes to one partition, so
    the partitions' key sets are disjoint and each read partition stands for its share."""
    if not sample.partitions_read or facts is None:
        return sample.distinct_keys  # a capture before partitions_read was kept: as seen
    written = sum(1 for n in facts.partition_records if n > 0) or facts.partitions
    return round(sample.distinct_keys * max(1.0, written / sample.partitions_read))


def _message(sizes: list[int], wire: int, records: float) -> tuple[dict[str, Any], float]:
    """The message source (the sampled size distribution, or without a sample the wire bytes per
    record less the framing) and the mean record size. A record above the largest kbt generates
    (a broker's raised limit, or wire bytes over too few records) is replayed at that largest."""
    buckets = size_buckets([min(s, MAX_EVENT_BYTES) for s in sizes])
    if buckets:
        mean = sum(b["bytes"] * b["weight"] for b in buckets) / sum(b["weight"] for b in buckets)
        if len(buckets) == 1:
            return {"kind": "generated", "bytes": round(buckets[0]["bytes"])}, mean
        return {"kind": "size_distribution", "buckets": buckets}, mean
    size = min(MAX_EVENT_BYTES, max(1, round(wire / records) - RECORD_OVERHEAD_BYTES)) if records else 100
    return {"kind": "generated", "bytes": size}, float(size)


def _record_limit(message: dict[str, Any]) -> int | None:
    """A record limit that lets the largest sampled record through, where Kafka's and Filebeat's
    defaults would not (the source's topics must have been raised the same way); None otherwise."""
    largest = max([b["bytes"] for b in message.get("buckets", [])] or [message.get("bytes", 0)])
    if largest + RECORD_LIMIT_MARGIN <= FILEBEAT_MAX_MESSAGE_BYTES:
        return None
    return int(largest + RECORD_LIMIT_MARGIN)


def _acks(rows: list[ClientTraffic]) -> str:
    counts = _totals(kv for row in rows for kv in row.acks.items())
    top = max(counts.items(), key=lambda kv: kv[1])[0] if counts else "-1"
    return {"-1": "all", "0": "0", "1": "1"}.get(top, "all")


def _profile(
    name: str,
    kind: str,
    acks: str,
    ratio: float | None,
    record_limit: int | None,
    traffic: Traffic,
    observed: float,
    factor: float,
    infer: bool,
) -> tuple[dict[str, Any], float | None, float | None, list[str]]:
    """The group's profile, the linger inferred, the requests/s it is predicted to send, evidence."""
    evidence = [f"observed {observed:.4g} produce requests/s"]
    if factor != 1.0:
        evidence.append(
            f"calibrated: a replay sent {1 / factor:.3g}x what the model predicted, so the linger is"
            f" inferred for {factor:.3g}x the observed rate ({observed * factor:.4g} requests/s)"
        )
        observed *= factor
    compressed = ratio is not None and ratio > COMPRESSED_RATIO
    if ratio is not None:
        how = (
            "compressed (the codec is not visible to a reading consumer)" if compressed else "not compressed"
        )
        evidence.append(f"record bytes / wire bytes {ratio:.2f}: {how}")
    client = kind_named(kind)
    settings = client.captured(acks, compressed, record_limit)
    base: dict[str, Any] = {"name": name, "description": f"captured from {name}", "client": kind, **settings}
    if "linger_ms" not in client.model.model_fields:  # no linger knob to infer: its defaults predicted
        predicted = _requests(profile_of(base), traffic) if infer else None
        if predicted is not None:
            evidence.append(f"the kind's defaults: the model predicts {predicted:.4g} requests/s")
        return base, None, predicted, evidence
    best = _nearest_linger(base, traffic, observed) if infer else None
    if best is None:
        return base, None, None, evidence
    base["linger_ms"] = best[0]
    evidence.append(
        f"linger {best[0]:g} ms: the model predicts {best[1]:.4g} requests/s at it"
        " (the nearest whole millisecond)"
    )
    return base, best[0], best[1], evidence


def _nearest_linger(base: dict[str, Any], traffic: Traffic, observed: float) -> tuple[float, float] | None:
    """(linger, its predicted requests/s) nearest the observed rate: fewer requests the longer the
    linger, so a bisection, first over LINGERS_MS (a handful of simulations, not one per value),
    then over the whole milliseconds between the two it lands between (a grid step is up to 2.5x
    the last: its nearest point missed the observed rate by a quarter and the replay with it)."""
    if observed <= 0:
        return None
    seen: dict[float, float | None] = {}

    def predicted(linger: float) -> float | None:
        if linger not in seen:
            value = _requests(profile_of({**base, "linger_ms": linger}), traffic)
            seen[linger] = None if value is None or value <= 0 else value
        return seen[linger]

    lo, hi = 0, len(LINGERS_MS) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        value = predicted(LINGERS_MS[mid])
        if value is None:
            return None
        lo, hi = (mid, hi) if value > observed else (lo, mid)
    low, high = LINGERS_MS[lo], LINGERS_MS[hi]
    while high - low > 1:  # whole milliseconds, as the Java client takes linger.ms
        between = float(math.floor((low + high) / 2))
        value = predicted(between)
        if value is None:
            break
        low, high = (between, high) if value > observed else (low, between)
    scored = [(abs(math.log(v / observed)), linger, v) for linger in (low, high) if (v := predicted(linger))]
    if not scored:
        return None
    _, linger, value = min(scored)
    return linger, value


def _requests(profile: ClientProfile, traffic: Traffic) -> float | None:
    try:  # all the producers' requests/s: they batch independently, so one stands for all
        result = simulated(replace(traffic, producers=1), rules_of(profile))
    except (ValueError, ZeroDivisionError):
        return None
    return sum(result.per_producer_rps()) * traffic.producers


def _worst_offender(groups: list[CapturedGroup]) -> tuple[str | None, str | None]:
    load = _totals(kv for g in groups for kv in g.requests_per_s_by_broker.items())
    if not load:
        return None, None
    busiest = max(load.items(), key=lambda kv: (kv[1], kv[0]))[0]
    offender = max(groups, key=lambda g: g.requests_per_s_by_broker.get(busiest, 0.0))
    return busiest, offender.name
