"""Each client's produce traffic per broker from the brokers' request logs, in the detail a capture
needs (tuner.measure.request_log counts rates for diagnose; this keeps what a workload is shaped
from): acks as sent, bytes per topic, the client connections it produced on and request times.

    rows = read_produce_traffic([Path("broker-1.log")], start, end)

The broker of a line is the local end of its `connection` ("broker:port-client:port-..."), so a
file that holds several brokers' lines is read right; a line without one counts for its file. The
lines are read by request_log's one reader (`window_produce_requests`): the same requests inside
the window, the same unreadable lines, the same bounds. A row's memory does not grow with the log:
its connections are a DistinctCount (exact up to its limit, then an estimate, noted as one), its
request times a reservoir, its bytes per topic MAX_ROW_TOPICS names (then OTHER_TOPICS, noted) and
its acks -1, 0 or 1 (the reader refuses a line with any other as unreadable).
"""

from __future__ import annotations

import random
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuner.core.text import decoded
from tuner.core.units import MAX_TOPIC_NAME_CHARS
from tuner.measure import request_log
from tuner.measure.distinct_count import EXACT_LIMIT, STANDARD_ERROR, DistinctCount
from tuner.measure.request_log import (
    MAX_CLIENTS,
    OTHER_CLIENTS,
    FileWindow,
    _partitions,
    produce_client,
    window_produce_requests,
)

MAX_TIMES = 2000  # request times kept per client and broker (a uniform reservoir)
MAX_ROW_TOPICS = 64  # topics named per client and broker; the bytes of any other are summed under
OTHER_TOPICS = "(other topics)"  # this name, which no Kafka topic can have (not one of its characters)
NAMED_ESTIMATES = 5  # rows named in a note that says a figure of theirs is not a plain count


@dataclass
class _Tally(request_log._Tally):
    acks: dict[str, int] = field(default_factory=dict)
    topic_bytes: dict[str, int] = field(default_factory=dict)
    connections: DistinctCount = field(default_factory=DistinctCount)
    times: array[float] = field(default_factory=lambda: array("d"))  # 8 bytes a time, not a list's 32


@dataclass
class ProduceTraffic:
    rows: list[dict[str, Any]]  # tuner.store.capture.ClientTraffic fields
    unreadable: int  # request lines that could not be read
    notes: list[str] = field(default_factory=list)  # what a figure means where it is not a plain count


def read_produce_traffic(
    paths: list[Path], start: float, end: float, topic_names: dict[str, str] | None = None, seed: int = 0
) -> ProduceTraffic:
    """Per (client, broker) produce tallies over [start, end]; `topic_names` maps topic ids to names
    (produce v13+ names a topic by its id). BadInput when a file cannot be read."""
    names = topic_names or {}
    tallies: dict[tuple[str, str, str, str], _Tally] = {}
    rng = random.Random(seed)
    unreadable = 0
    for path in paths:
        seen = FileWindow()
        for request in window_produce_requests(path, start, end, seen):
            _count(tallies, request, path.name, rng, names)
        unreadable += seen.unreadable
    ordered = sorted(tallies.items(), key=lambda kv: (-kv[1].requests, kv[0]))
    notes = _estimated(ordered) + _other_topics(ordered)
    return ProduceTraffic([_row(key, t) for key, t in ordered], unreadable, notes)


def _other_topics(ordered: list[tuple[tuple[str, str, str, str], _Tally]]) -> list[str]:
    """The note that says which rows summed some topics' bytes under OTHER_TOPICS."""
    summed = [f"{key[0]} on {key[3]}" for key, t in ordered if OTHER_TOPICS in t.topic_bytes]
    if not summed:
        return []
    return [
        f"bytes per topic are kept for {MAX_ROW_TOPICS} topics per client and broker, the rest summed"
        f' under "{OTHER_TOPICS}" (no topic of the plan): {len(summed)} such, {_named(summed)}'
    ]


def _estimated(ordered: list[tuple[tuple[str, str, str, str], _Tally]]) -> list[str]:
    """The note that says which rows' connection counts are estimates, and how good."""
    estimated = [
        f"{key[0]} on {key[3]} (~{t.connections.count:,})" for key, t in ordered if not t.connections.exact
    ]
    if not estimated:
        return []
    return [
        f"client connections are counted exactly up to {EXACT_LIMIT:,} per client and broker, then"
        f" estimated (a HyperLogLog sketch, standard error {STANDARD_ERROR:.1%}): {len(estimated)} estimated,"
        f" {_named(estimated)}; a group's producers are read from them"
    ]


def _named(rows: list[str]) -> str:
    """The first NAMED_ESTIMATES rows of a note, then how many more."""
    more = f" and {len(rows) - NAMED_ESTIMATES} more" if len(rows) > NAMED_ESTIMATES else ""
    return ", ".join(rows[:NAMED_ESTIMATES]) + more


def _count(
    tallies: dict[tuple[str, str, str, str], _Tally],
    request: dict[str, Any],
    file: str,
    rng: random.Random,
    names: dict[str, str],
) -> None:
    client = produce_client(request)
    if client is None:
        return
    client_id, principal, software = client
    local, remote = _ends(request.get("connection"))
    key = (client_id, software, principal, local or file)
    if key not in tallies and len(tallies) >= MAX_CLIENTS:
        key = (OTHER_CLIENTS, "", "", key[3])
    tally = tallies.setdefault(key, _Tally())
    tally.requests += 1
    if remote:
        tally.connections.add(remote)
    body = request.get("request")
    body = body if isinstance(body, dict) else {}
    acks = body.get("acks")
    if acks is not None:  # -1, 0 or 1: the reader makes a line with any other unreadable
        tally.acks[str(acks)] = tally.acks.get(str(acks), 0) + 1
    _time(tally, request.get("totalTimeMs"), rng)
    for name, size in _partitions(body, names):
        tally.partitions += 1
        tally.record_bytes += size
        if size and name is not None:
            topic = _topic(tally.topic_bytes, name)
            tally.topic_bytes[topic] = tally.topic_bytes.get(topic, 0) + size


def _topic(topic_bytes: dict[str, int], name: str) -> str:
    """The key a topic's bytes are summed under: its name, or OTHER_TOPICS past MAX_ROW_TOPICS names
    (a log's names cannot make a row grow without bound) or for a name no Kafka topic can have."""
    if name in topic_bytes:
        return name
    name = decoded(name)  # a lone surrogate in the log's name: no JSON writer can keep it
    if name in topic_bytes:
        return name
    named = len(topic_bytes) - (OTHER_TOPICS in topic_bytes)
    if named >= MAX_ROW_TOPICS or len(name) > MAX_TOPIC_NAME_CHARS:
        return OTHER_TOPICS
    return name


def _time(tally: _Tally, value: Any, rng: random.Random) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < 1e9:
        return
    if len(tally.times) < MAX_TIMES:
        tally.times.append(float(value))
    else:  # reservoir: every request equally likely to be kept
        slot = rng.randrange(tally.requests)
        if slot < MAX_TIMES:
            tally.times[slot] = float(value)


def _ends(connection: Any) -> tuple[str, str]:
    """(broker end, client end) of Kafka's connection id "local-remote-processor-index"."""
    if not isinstance(connection, str):
        return "", ""
    parts = connection.split("-")
    if len(parts) < 2:
        return "", ""
    return decoded(parts[0][:200]), parts[1][:200]  # the client end is only hashed, never written


def _row(key: tuple[str, str, str, str], t: _Tally) -> dict[str, Any]:
    client_id, software, principal, broker = key
    return {
        "client_id": client_id,
        "software": software,
        "principal": principal,
        "broker": broker,
        "requests": t.requests,
        "record_bytes": t.record_bytes,
        "partitions": t.partitions,
        "acks": t.acks,
        "topic_bytes": t.topic_bytes,
        "connections": min(t.connections.count, t.requests),  # an estimate never past the requests
        "total_time_ms": t.times,
    }
