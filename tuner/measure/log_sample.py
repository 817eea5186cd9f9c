"""Read a real log file into Kafka messages for the compression probe.

One message per non-blank line (line endings dropped), or, with `event_bytes`, consecutive lines
joined with newlines into events of about that size (each event ends at a line boundary once it
holds at least `event_bytes`; a line longer than that is an event of its own; a short tail is
dropped). The bytes are kept as they are in the file: nothing is decoded and re-encoded.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.inputs import read_bytes

SNIFF_BYTES = 64 * 1024
# The probe keeps every line as its own object (~2-3x the file with long lines, far more with short
# ones): 64 MiB of log is plenty for stable ratios and bounds the memory.
MAX_FILE_BYTES = 64 * 1024 * 1024
# Share of bytes in the sniffed head that may be control characters (besides tab, CR, LF, FF, ESC)
# or invalid UTF-8 before a file counts as binary rather than a log.
MAX_BINARY_SHARE = 0.05


@dataclass(frozen=True)
class LogSample:
    name: str  # the file's name (no directories)
    file_bytes: int
    sha256: str
    lines: int
    messages: list[bytes]  # empty once released(): held() reads the file again
    event_bytes: int | None
    path: Path | None = None
    message_count: int = 0  # len(messages), kept when they are released
    message_bytes: int = 0

    def __post_init__(self) -> None:
        if self.messages:
            object.__setattr__(self, "message_count", len(self.messages))
            object.__setattr__(self, "message_bytes", sum(len(m) for m in self.messages))

    @property
    def mean_message_bytes(self) -> float:
        return self.message_bytes / self.message_count

    def released(self) -> LogSample:
        """The same sample without its messages (the counts stay): a probe of many files holds one
        file's messages at a time, not every file's."""
        return dataclasses.replace(self, messages=[])

    def held(self) -> LogSample:
        """The sample with its messages, read again if released; BadInput when the file changed
        since it was checked."""
        if self.messages or self.path is None:
            return self
        again = read_sample(self.path, self.event_bytes)
        if again.sha256 != self.sha256:
            raise BadInput(f"{self.path}: changed while the probe ran (read it again with a new run)")
        return again


def _binary_share(head: bytes) -> float:
    """The share of control characters: Latin-1 or other 8-bit text is text, not binary (every byte
    decodes as Latin-1, so only real control bytes count)."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = head.decode("latin-1")
    bad = sum(1 for ch in text if (ord(ch) < 32 and ch not in "\t\r\n\f\x1b") or ch == "\x7f")
    return bad / max(1, len(text))


def read_sample(path: Path, event_bytes: int | None = None) -> LogSample:
    """The messages of one log file; a one-line BadInput for a missing, empty or binary file."""
    shown = str(path)
    data = read_bytes(path, "file", MAX_FILE_BYTES)  # regular files only: no FIFO, no /dev/zero
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
        path=path,
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
