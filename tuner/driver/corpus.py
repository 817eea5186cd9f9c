"""The message corpus: the text every engine sends (the Sarama, Java and tailed-pod engines read
this file; the librdkafka and locust producers build their pools from the same lines, payload.py).

One JSON object per line: `message` (log text), `key` (the record key or null) and `bytes` (the size
of the whole JSON event on the wire; 0 = the message as it is plus Filebeat's fields). The engine
wraps each message in a Filebeat-like JSON document and cuts or extends the text to `bytes`.

A workload's `event_bytes` / `bytes` is the size of the Kafka record value, as for the other
engines, so a 1.6 KB event is 1.6 KB on the wire whichever client sends it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

from tuner.core.inputs import read_bytes
from tuner.driver.key_shares import KeyTable
from tuner.spec.workload import (
    GeneratedSource,
    LogFileSource,
    SizeDistributionSource,
    WorkloadSpec,
)

MAX_ENTRIES = 512
MAX_CORPUS_BYTES = 48 * 1024 * 1024
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
_COMPONENTS = ("nova.compute.manager", "api.gateway", "auth.session", "db.pool", "cache.client", "scheduler")
_WORDS = (
    "request", "completed", "user", "instance", "status", "retry", "timeout", "connection", "accepted",
    "GET", "POST", "/v2/servers", "/api/orders", "took", "ms", "bytes", "queue", "worker", "started",
)  # fmt: skip


def write_corpus(workload: WorkloadSpec, path: Path, seed: int = 1, keys: KeyTable | None = None) -> int:
    """Write the corpus for `workload` to `path`; returns the number of entries. `keys`: the
    topic's key_shares table, its keys allotted to the entries (an engine cycling through the
    corpus then puts each partition's share on it)."""
    # none: keyless; random: the engine draws keys itself
    key_pattern = workload.keys if workload.keys.kind == "field" and workload.keys.pattern else None
    allotted = keys.allotted(len(_entry_sizes(workload)), random.Random(seed)) if keys is not None else None
    count, total = 0, 0
    with path.open("w", encoding="utf-8") as out:
        for size, text in entry_texts(workload, seed):
            if allotted is not None:
                key: str | None = allotted[count].decode()
            else:
                key = key_pattern.key_of(text) if key_pattern is not None else None
            out.write(json.dumps({"message": text, "key": key, "bytes": size}) + "\n")
            count += 1
            total += max(size, len(text))
            if total >= MAX_CORPUS_BYTES:
                break
    return count


def entry_texts(workload: WorkloadSpec, seed: int) -> Iterator[tuple[int, str]]:
    """(target size, text) of each entry: a log file's lines as they are (size 0), or consecutive
    lines joined to each target size; the corpus and the producers' pools (payload.py) alike."""
    rng = random.Random(seed)
    lines = _source_lines(workload, rng)
    for i, size in enumerate(_entry_sizes(workload)):
        yield size, _text_of(lines, rng, size) if size > 0 else lines[i % len(lines)]


def _entry_sizes(workload: WorkloadSpec) -> list[int]:
    """Target sizes, in the proportions of the source's size distribution."""
    source = workload.message
    if isinstance(source, SizeDistributionSource):
        weight = sum(b.weight for b in source.buckets)
        counts = [(b.bytes, max(1, round(MAX_ENTRIES * b.weight / weight))) for b in source.buckets]
        sizes = [size for size, count in counts for _ in range(count)]
        random.Random(7).shuffle(sizes)
        return sizes
    if isinstance(source, GeneratedSource):
        return [source.bytes] * MAX_ENTRIES
    return [source.event_bytes or 0] * MAX_ENTRIES


MAX_LOG_FILE_BYTES = 64 * 1024 * 1024  # what the probe reads of a log file too


def _source_lines(workload: WorkloadSpec, rng: random.Random) -> list[str]:
    source = workload.message
    if isinstance(source, LogFileSource) and source.available and source.resolved_path is not None:
        # the bounded reader: a regular file within the cap (a FIFO or /dev/zero is one line)
        data = read_bytes(source.resolved_path, "message log file", MAX_LOG_FILE_BYTES)
        text = data.decode("utf-8", errors="replace")
        lines = [line for line in text.splitlines() if line.strip()]
        if lines:
            return lines
    return list(_generated_lines(rng, 4000))


def _generated_lines(rng: random.Random, n: int) -> Iterator[str]:
    for i in range(n):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 20)))
        yield (
            f"2024-05-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000:03d}"
            f" {rng.choice(_LEVELS)} [{rng.choice(_COMPONENTS)}] req-{rng.getrandbits(32):08x} {words}"
        )


def _text_of(lines: list[str], rng: random.Random, size: int) -> str:
    """Consecutive log lines from a random place, joined until `size` characters."""
    i = rng.randrange(len(lines))
    parts: list[str] = []
    length = -1  # the joined length: one separator fewer than lines
    while length < size:
        line = lines[i % len(lines)]
        parts.append(line)
        length += len(line) + 1
        i += 1
    return " ".join(parts)[:size]
