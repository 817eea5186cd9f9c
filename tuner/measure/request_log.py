"""Each client's produce requests counted from the brokers' request logs, exactly (Kafka keeps no
request count per client in its metrics; docs/diagnose.md: which clients).

    clients, coverage = read_request_logs([Path("kafka-request.log")], start, end)

With the logger kafka.request.logger at DEBUG (a broker-logger setting, changeable at run time),
Kafka writes a line per completed request:

    [2026-11-26 22:46:08,982] DEBUG Completed request:{...} (kafka.request.logger)

whose JSON carries requestHeader.clientId and requestApiKey (0 is Produce), the principal, the
client's software (clientInformation, ApiVersions v3+) and, for a produce request, each partition's
recordsSizeInBytes. The time stamp is log4j's default date (the broker's local time); kbt reads it in
the local time zone of the machine it runs on. Lines of other loggers or layouts are passed over.

A file's counts become rates over the span it evidently logged requests in: the window, narrowed to
its first and last logged request where no request was logged shortly before or after the window
(logging turned on or off inside the window). Rates of the files (one per broker) add up, so one
file given twice (or by two names) is refused. Memory and time are bounded: lines past
MAX_LINE_BYTES are skipped, a request's values are counted before it is parsed (past
MAX_REQUEST_VALUES it is unreadable, never built), only produce requests are parsed at all (one
whose acks are not -1, 0 or 1 is unreadable), clients past MAX_CLIENTS are counted as one row and
a client id or principal is kept to MAX_CLIENT_TEXT characters.
A compressed or binary file is refused.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput
from tuner.core.inputs import parse_json_line, read_lines, shown_path
from tuner.core.numbers import parse_int
from tuner.core.text import decoded
from tuner.core.units import MAX_KAFKA_BYTES

MARKER = b"Completed request:"
PRODUCE_API_KEY = 0
PRODUCE_ACKS = (-1, 0, 1)  # what a produce request's acks can be: Kafka refuses any other
MAX_LINE_BYTES = 1 << 20  # one request of thousands of partitions fits
# A produce request's values: about 3 per partition, so a request of 30,000 partitions fits; a line
# of more (a 1 MB array of numbers) is unreadable without being built.
MAX_REQUEST_VALUES = 100_000
# The request's API key, read without parsing: only produce requests are parsed.
_API_KEY = re.compile(rb'"requestApiKey"\s{0,8}:\s{0,8}(-?[0-9]{1,6}|true|false|null|")')
MAX_CLIENTS = 10_000
# characters kept of a client id or principal: a row's key is held for the whole read, and a hostile
# log's ids of a line's megabyte each took up to 10,000 x 1 MB; no real one comes near
MAX_CLIENT_TEXT = 1024
OTHER_CLIENTS = "(other clients)"
# A request logged this close before (after) the window means the log was on at its start (end).
LOGGING_GAP_S = 10.0


@dataclass
class _Tally:
    requests: int = 0
    record_bytes: int = 0
    partitions: int = 0


@dataclass
class FileWindow:
    """What reading one file over a window saw besides its produce requests: when it logged
    requests (for the span its rates cover) and the lines it could not read."""

    first: float | None = None  # first and last request logged inside the window
    last: float | None = None
    last_before: float | None = None  # the latest request logged before the window
    first_after: float | None = None  # the earliest after it
    unreadable: int = 0


@dataclass
class _FileReading(FileWindow):
    inside: dict[tuple[str, str, str], _Tally] = field(default_factory=dict)


_STAMP = re.compile(rb"\[([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}),([0-9]{3})\]")


@functools.lru_cache(maxsize=100_000)
def _local_seconds(whole: bytes) -> float | None:
    """A log4j date's seconds part in local time, parsed once per second of log."""
    try:
        return datetime.strptime(whole.decode("ascii"), "%Y-%m-%d %H:%M:%S").timestamp()
    except ValueError:  # a 31st of February
        return None


def _stamp(line: bytes) -> float | None:
    """log4j's default date at a line's start, in local time."""
    match = _STAMP.match(line)
    if match is None or (seconds := _local_seconds(match.group(1))) is None:
        return None
    return seconds + parse_int(match.group(2).decode("ascii"), "milliseconds") / 1000


def read_request_logs(
    paths: list[Path], start: float, end: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(each client's produce request and byte rates over [start, end], busiest first; each file's
    coverage), as dicts of tuner.store.snapshot's ClientRequests and RequestLogCoverage. BadInput
    when a file cannot be read."""
    _once_each(paths)
    rates: dict[tuple[str, str, str], list[float]] = {}  # requests/s, bytes/s, partitions/s
    coverage = []
    for path in paths:
        reading = _read(path, start, end)
        span = _span(reading, start, end)
        produce = sum(t.requests for t in reading.inside.values())
        coverage.append(
            {
                "file": str(path),
                "span_s": span,
                "produce_requests": produce,
                "unreadable_lines": reading.unreadable,
            }
        )
        if span <= 0:
            continue
        for key, tally in reading.inside.items():
            row = rates.setdefault(key, [0.0, 0.0, 0.0])
            row[0] += tally.requests / span
            row[1] += tally.record_bytes / span
            row[2] += tally.partitions / span
    ordered = sorted(rates.items(), key=lambda kv: (-kv[1][0], kv[0][0]))
    clients: list[dict[str, Any]] = [
        {
            "client_id": client_id,
            "principal": principal,
            "software": software,
            "produce_requests_per_s": r[0],
            "produce_bytes_per_s": r[1],
            "partitions_per_request": r[2] / r[0] if r[0] > 0 else None,
        }
        for (client_id, principal, software), r in ordered
    ]
    return clients, coverage


def check_request_logs(paths: list[Path]) -> None:
    """BadInput, before anything else is asked of a cluster, for a request log kbt would refuse:
    not a regular file, compressed or binary, or one file given twice."""
    _once_each(paths)
    for path in paths:
        lines = read_lines(path, "request log", MAX_LINE_BYTES)
        try:
            next(lines, None)  # opening it checks what it is
        finally:
            lines.close()


def _once_each(paths: list[Path]) -> None:
    """BadInput when two of `paths` are one file (the same name twice, a link, another spelling):
    its requests would be counted twice."""
    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue  # the reader names what is wrong with it
        first = seen.get((st.st_dev, st.st_ino))
        if first is None:
            seen[(st.st_dev, st.st_ino)] = path
        elif shown_path(first) == shown_path(path):
            raise BadInput(f"{shown_path(path)}: given twice as a request log: give each broker's log once")
        else:
            raise BadInput(
                f"{shown_path(path)}: the same request log as {shown_path(first)}:"
                " give each broker's log once"
            )


def _span(reading: _FileReading, start: float, end: float) -> float:
    if reading.first is None or reading.last is None:
        return 0.0
    on_before = reading.last_before is not None and start - reading.last_before <= LOGGING_GAP_S
    on_after = reading.first_after is not None and reading.first_after - end <= LOGGING_GAP_S
    return (end if on_after else reading.last) - (start if on_before else reading.first)


def logged_requests(path: Path) -> Iterator[tuple[bytes, int, float] | None]:
    """Each request a request log logged: (its line, the marker's offset, its time stamp); None for
    a line that cannot be read (too long, or no log4j date). Other loggers' lines are passed over."""
    for line in read_lines(path, "request log", MAX_LINE_BYTES):
        if line is None:
            yield None
            continue
        at = line.find(MARKER)
        if at >= 0:
            stamp = _stamp(line)
            yield None if stamp is None else (line, at, stamp)


def _read(path: Path, start: float, end: float) -> _FileReading:
    reading = _FileReading()
    for request in window_produce_requests(path, start, end, reading):
        _count(reading, request)
    return reading


def window_produce_requests(
    path: Path, start: float, end: float, seen: FileWindow
) -> Iterator[dict[str, Any]]:
    """The JSON of each produce request a request log logged inside [start, end], the one reader
    of diagnose's rates and capture's tallies; `seen` takes when the file logged requests and its
    unreadable lines (too long, no date, or a request inside the window that cannot be parsed)."""
    for logged in logged_requests(path):
        if logged is None:
            seen.unreadable += 1
            continue
        line, at, stamp = logged
        if stamp < start:
            seen.last_before = stamp if seen.last_before is None else max(stamp, seen.last_before)
            continue
        if stamp > end:
            seen.first_after = stamp if seen.first_after is None else min(stamp, seen.first_after)
            continue
        readable, request = produce_request(line, at)
        if not readable:
            seen.unreadable += 1
            continue
        seen.first = stamp if seen.first is None else min(stamp, seen.first)
        seen.last = stamp if seen.last is None else max(stamp, seen.last)
        if request is not None:
            yield request


def produce_request(line: bytes, at: int) -> tuple[bool, dict[str, Any] | None]:
    """Whether the request logged at `at` (its marker) is readable, and its JSON when it is a
    Produce. The API key is found first, so the far more numerous Fetch and Metadata lines are
    never parsed whole."""
    key = _API_KEY.search(line, at, at + 4096)
    if key is None:
        return False, None
    if key.group(1) not in (b"0", b"-0"):
        return True, None
    # The request's JSON: from the marker to the line's last brace (the layout's logger name
    # follows it), through kbt's bounded line parser (values counted first).
    body = line[at + len(MARKER) : line.rfind(b"}") + 1]
    try:
        request = parse_json_line(body, "request log line", MAX_REQUEST_VALUES)
    except BadInput:
        return False, None
    return (True, request) if isinstance(request, dict) and _acks_read(request) else (False, None)


def _acks_read(request: dict[str, Any]) -> bool:
    """A produce request's body, where the line logs one, carries acks of -1, 0 or 1: a line with
    any other (a damaged or hostile log) is unreadable, so no count takes a key from it."""
    if "request" not in request:
        return True
    body = request["request"]
    acks = body.get("acks") if isinstance(body, dict) else None
    return type(acks) is int and acks in PRODUCE_ACKS


def produce_client(request: dict[str, Any]) -> tuple[str, str, str] | None:
    """(client id, principal, software) of a logged produce request; None for any other API."""
    header = request.get("requestHeader")
    api_key = header.get("requestApiKey") if isinstance(header, dict) else None
    # `false == 0` in Python: only the integer 0 is Produce.
    if type(api_key) is not int or api_key != PRODUCE_API_KEY or not isinstance(header, dict):
        return None
    client_id = header.get("clientId")
    principal = request.get("principal")
    return (
        decoded(client_id[:MAX_CLIENT_TEXT]) if isinstance(client_id, str) else "",
        decoded(principal.removeprefix("User:")[:MAX_CLIENT_TEXT]) if isinstance(principal, str) else "",
        _software(request.get("clientInformation")),
    )


def _count(reading: _FileReading, request: dict[str, Any]) -> None:
    key = produce_client(request)
    if key is None:
        return
    if key not in reading.inside and len(reading.inside) >= MAX_CLIENTS:
        key = (OTHER_CLIENTS, "", "")
    tally = reading.inside.setdefault(key, _Tally())
    tally.requests += 1
    for _, size in _partitions(request.get("request")):
        tally.partitions += 1
        tally.record_bytes += size


def _partitions(body: Any, names: Mapping[str, str] | None = None) -> Iterator[tuple[str | None, int]]:
    """Every partition a Produce request's body carries: its topic (its name, else its id looked up
    in `names`; None when neither is known) and its record bytes (0 unless a positive integer that
    Kafka's sizes, Java ints, can hold)."""
    topics = body.get("topicData") if isinstance(body, dict) else None
    for topic in topics if isinstance(topics, list) else []:
        if not isinstance(topic, dict):
            continue
        name = topic.get("name")
        if name is None and names is not None:
            name = names.get(str(topic.get("topicId")))
        named = name if isinstance(name, str) else None  # as logged: decoded where it becomes a key
        parts = topic.get("partitionData")
        for part in parts if isinstance(parts, list) else []:
            size = part.get("recordsSizeInBytes") if isinstance(part, dict) else None
            if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_KAFKA_BYTES:
                size = 0
            yield named, size


def _software(info: Any) -> str:
    if not isinstance(info, dict):
        return ""
    name, version = info.get("softwareName"), info.get("softwareVersion")
    parts = [p for p in (name, version) if isinstance(p, str) and p and p != "unknown"]
    return decoded(" ".join(parts)[:120])
