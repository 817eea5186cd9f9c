"""Read a real log file into Kafka messages for the compression probe.

One message per non-blank line (line endings dropped), or, with `event_bytes`, consecutive lines
joined with newlines into events of about that size (each event ends at a line boundary once it
holds at least `event_bytes`; a line longer than that is an event of its own; a short tail is
dropped). The bytes are kept as they are in the file: nothing is decoded and re-encoded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from tuner.core.errors import BadInput

SNIFF_BYTES = 64 * 1024
MAX_FILE_BYTES = 512 * 1024 * 1024
# Share of bytes in the sniffed head that may be control characters (besides tab, CR, LF, FF, ESC)
# or invalid UTF-8 before a file counts as binary rather than a log.
MAX_BINARY_SHARE = 0.05


@dataclass(frozen=True)
class LogSample:
    name: str  # the file's name (no directories)
    file_bytes: int
    sha256: str
    lines: int
    messages: list[bytes]
    event_bytes: int | None

    @property
    def mean_message_bytes(self) -> float:
        return sum(len(m) for m in self.messages) / len(self.messages)


def _binary_share(head: bytes) -> float:
    text = head.decode("utf-8", errors="replace")
    if len(head) == SNIFF_BYTES:  # a multi-byte character may be cut at the end of the head
        text = text[:-4]
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\r\n\f\x1b"))
    return bad / max(1, len(text))


def read_sample(path: Path, event_bytes: int | None = None) -> LogSample:
    """The messages of one log file; a one-line BadInput for a missing, empty or binary file."""
    shown = str(path)
    if not path.exists():
        raise BadInput(f"{shown}: no such file")
    if not path.is_file():
        raise BadInput(f"{shown}: not a regular file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise BadInput(f"{shown}: {size:,} bytes; the probe reads files up to {MAX_FILE_BYTES:,} bytes")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if not data.strip():
        raise BadInput(f"{shown}: empty file (no log lines to probe)")
    head = data[:SNIFF_BYTES]
    if b"\x00" in head or _binary_share(head) > MAX_BINARY_SHARE:
        raise BadInput(f"{shown}: binary data, not a text log (expected one message per line)")
    lines = [line.rstrip(b"\r") for line in data.split(b"\n")]
    lines = [line for line in lines if line.strip()]
    messages = lines if event_bytes is None else join_lines(lines, event_bytes)
    return LogSample(
        name=path.name,
        file_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        lines=len(lines),
        messages=messages,
        event_bytes=event_bytes,
    )


def join_lines(lines: list[bytes], event_bytes: int) -> list[bytes]:
    """Consecutive lines joined with newlines into events of at least `event_bytes` (a short tail
    is dropped unless it is the only event)."""
    events: list[bytes] = []
    current: list[bytes] = []
    length = -1  # the joined length: one separator fewer than lines
    for line in lines:
        current.append(line)
        length += len(line) + 1
        if length >= event_bytes:
            events.append(b"\n".join(current))
            current, length = [], -1
    if current and not events:
        events.append(b"\n".join(current))
    return events
