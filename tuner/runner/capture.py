"""`kbt capture`: read a live cluster's produce traffic over a bounded window and shape it into a
workload and a client profile per client group (tuner.model.capture), written for `kbt sweep`.

It creates nothing on the cluster: metadata and end offsets through the admin API, the newest
records through an assign()ed consumer (no group joined, nothing committed), the clients from the
brokers' request logs (files the operator hands over; kbt turns no logger on), the brokers' own
figures from their Prometheus when the target has one.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tuner.core.errors import BadInput, KbtError
from tuner.runner.live_diagnosis import diagnosis_prometheus, snapshot_of
from tuner.store.capture import MAX_WINDOW_S, MIN_WINDOW_S

if TYPE_CHECKING:
    from tuner.model.capture import CapturePlan, ShapeOptions
    from tuner.store.capture import CaptureRecord
    from tuner.store.snapshot import ClusterSnapshot
    from tuner.target.base import Target, TargetSource

SAMPLE_TIMEOUT_S = 10.0  # per topic
MAX_SAMPLED_TOPICS = 64


@dataclass(frozen=True)
class CaptureRequest:
    source: TargetSource | None
    lab_dir: Path | None
    window_s: float
    request_logs: list[Path]
    sample_per_partition: int
    payloads: bool
    options: ShapeOptions
    out: Path  # --out: where a read kbt cannot keep is written (`kept`)


def capture(
    request: CaptureRequest,
    progress: Callable[[float], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> tuple[CaptureRecord, CapturePlan]:
    """Read the cluster over the window and shape it; BadInput / Unreachable in one line.
    `progress(seconds left)` every few seconds of the window and once at its end (0); `note(text)`
    for what the operator should know before the window rather than after it."""
    from tuner.core.kafka_clients import check_reach
    from tuner.measure.capture_log import read_produce_traffic
    from tuner.measure.capture_read import METADATA_TIMEOUT_S, appended, describe_topics, end_offsets
    from tuner.target.registry import resolve_target
    from tuner.target.security import connection

    if not request.request_logs:
        raise BadInput(
            "--request-log: give each broker's request log (kafka.request.logger at DEBUG):"
            " the client groups are read from it (docs/diagnose.md: which clients)"
        )
    if not MIN_WINDOW_S <= request.window_s <= MAX_WINDOW_S:
        raise BadInput(f"--window: between {MIN_WINDOW_S:g} s and {MAX_WINDOW_S:g} s")
    target = resolve_target(request.lab_dir, request.source)
    conn = connection(target)
    check_reach(
        conn, METADATA_TIMEOUT_S
    )  # a cluster that never answers is said at once, not after the metadata's wait
    topics, broker_ids = describe_topics(conn)
    silent = _prometheus_silent(target)
    if silent is not None and note is not None:  # said now, not after an hour's window
        note(f"{silent}: the capture goes on without the brokers' figures unless it answers by the end")
    topics, first, last, start, end = watch(
        Reads(lambda: describe_topics(conn)[0], lambda some: end_offsets(conn, some)),
        topics,
        request.window_s,
        progress,
    )
    for t in topics:
        t["partition_records"] = appended(first.get(t["name"]), last.get(t["name"], []))
        t["records"] = sum(t["partition_records"])
    ids = {t["topic_id"]: t["name"] for t in topics if t.get("topic_id")}
    traffic = read_produce_traffic(request.request_logs, start, end, ids)
    notes = list(traffic.notes)
    if traffic.unreadable:
        notes.append(f"{traffic.unreadable} request log line(s) could not be read")
    if not traffic.rows:
        notes.append("the request logs hold no produce request in the window (is the logger at DEBUG?)")
    written = {topic for row in traffic.rows for topic in row["topic_bytes"]}
    samples = _samples(conn, [t for t in topics if t["name"] in written and t["records"]], request)
    snapshot = _brokers(target, start, end, notes)
    read = {
        "start": start,
        "end": end,
        "bootstrap_servers": conn.bootstrap_servers,
        "brokers": len(broker_ids),
        "broker_ids": broker_ids,
        "topics": topics,
        "clients": traffic.rows,
        "samples": samples,
        "request_logs": [str(p) for p in request.request_logs],
        "brokers_snapshot": snapshot,
        "notes": notes,
    }
    return kept(read, request.options, request.out)


@dataclass(frozen=True)
class Reads:
    """The cluster reads a window is timed between: its topics, and their end offsets."""

    topics: Callable[[], list[dict[str, Any]]]
    ends: Callable[[list[dict[str, Any]]], dict[str, list[int | None]]]


Offsets = dict[str, list[int | None]]


def watch(
    reads: Reads, topics: list[dict[str, Any]], window_s: float, progress: Callable[[float], None] | None
) -> tuple[list[dict[str, Any]], Offsets, Offsets, float, float]:
    """(the topics, now with those created inside the window; their end offsets at the window's
    start and at its end; the window's start and end, epoch seconds). The window is the traffic
    window itself: from the first read's answers to the end of the wait, timed on the monotonic
    clock. The reads after it take what time the cluster takes (a slow one's metadata, minutes)
    and are not counted in it: the record's window, which every rate is over, stays --window."""
    first = reads.ends(topics)
    start, started = time.time(), time.monotonic()
    _wait(window_s, progress)
    end = start + (time.monotonic() - started)
    last = reads.ends(topics)
    # a topic created inside the window (its producers start then) began at offset 0
    known = {t["name"] for t in topics}
    new = [t for t in reads.topics() if t["name"] not in known]
    if new:
        last |= reads.ends(new)
    return topics + new, first, last, start, end


UNKEPT_FILE = "capture.unkept.json"  # what a capture read, when kbt cannot keep it as a capture


def kept(read: dict[str, Any], options: ShapeOptions, out: Path) -> tuple[CaptureRecord, CapturePlan]:
    """The record of what a capture read, and its shape. A read that is not one kbt can keep (a
    figure past what a capture can be) is one line, and what was read is written to UNKEPT_FILE
    in --out first: the window's traffic cannot be read again."""
    from pydantic import ValidationError

    from tuner.core.inputs import shown_path
    from tuner.core.writes import atomic_write_json
    from tuner.model.capture import shape
    from tuner.store.capture import CaptureRecord
    from tuner.store.document import field_problem

    try:
        record = CaptureRecord.model_validate(read)
        return record, shape(record, options)
    except ValidationError as exc:
        problem = field_problem(exc)
    document = {"problem": problem, "read": _plain(read)}
    path = atomic_write_json(out / UNKEPT_FILE, document, "capture file")
    raise BadInput(
        f"the capture's read is not one kbt can keep: {problem}; what it read is in {shown_path(path)}"
    )


def _plain(value: Any) -> Any:
    """The read as JSON holds it (a snapshot's model as its fields, an array of times as a list)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | array):
        return [_plain(v) for v in value]
    return value


def _brokers(target: Target, start: float, end: float, notes: list[str]) -> ClusterSnapshot | None:
    """The brokers over the window from the target's Prometheus, as diagnose reads them (None,
    noted, when it has none or cannot answer: the capture stands without them)."""
    from tuner.measure.cluster_snapshot import take_snapshot

    if target.prometheus_url is None:
        return None
    window = end - start
    try:
        prom = diagnosis_prometheus(target)
        figures = take_snapshot(prom, window, min(15.0, window / 4), end, top_topics=0, notes=notes)
        return snapshot_of(figures)
    except KbtError as exc:  # Prometheus unreachable, answering oddly, or without broker series
        notes.append(f"the brokers' figures were not read: {exc.message}")
        return None


def _prometheus_silent(target: Target) -> str | None:
    """Why the target's Prometheus does not answer a query, or None (it answers, or there is none)."""
    if target.prometheus_url is None:
        return None
    try:
        diagnosis_prometheus(target).instant("vector(1)")
    except KbtError as exc:
        return exc.message
    return None


def _samples(conn: Any, topics: list[dict[str, Any]], request: CaptureRequest) -> list[dict[str, Any]]:
    from tuner.measure.capture_read import sample_topic

    if request.sample_per_partition <= 0:
        return []
    busiest = sorted(topics, key=lambda t: -t["records"])[:MAX_SAMPLED_TOPICS]
    return [
        sample_topic(
            conn, t["name"], t["partitions"], request.sample_per_partition, SAMPLE_TIMEOUT_S, request.payloads
        )
        for t in busiest
    ]


def _wait(window_s: float, progress: Callable[[float], None] | None) -> None:
    """Sleep through the window (Ctrl-C ends it: the caller's signal handling says interrupted)."""
    deadline = time.monotonic() + window_s
    while (left := deadline - time.monotonic()) > 0:
        if progress is not None:
            progress(left)
        time.sleep(min(5.0, left))
    if progress is not None:
        progress(0.0)
