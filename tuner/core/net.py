"""HTTP GETs with an overall deadline, a size cap and URLs joined without breaking them.

requests' `timeout` bounds each socket read, not the call: a server that trickles one byte every
2 s keeps a read alive forever. `get_json_bounded` streams the body and stops at the deadline, and
`join_url` appends an API path to a base URL's *path*, keeping its query string (a proxy's
`?tenant=x`) where it belongs.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MAX_BODY_BYTES = 64 << 20


class DeadlineExceeded(Exception):
    """The whole call took longer than its deadline."""


class BodyTooLarge(Exception):
    """The answer was larger than the cap."""


def join_url(base: str, path: str, params: dict[str, str] | None = None) -> str:
    """`base` with `path` appended to its path and `params` added to its query."""
    parts = urlsplit(base)
    query = parse_qsl(parts.query, keep_blank_values=True) + list((params or {}).items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, urlencode(query), ""))


def without_secrets(url: str) -> str:
    """`url` with its user info and query string dropped: what may be named in a message."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def get_bounded(
    session: Any, url: str, deadline_s: float, max_bytes: int = MAX_BODY_BYTES
) -> tuple[int, bytes, str]:
    """(status, body, content type) of a GET that ends within `deadline_s` seconds overall.
    Raises requests' exceptions for connection problems, DeadlineExceeded, BodyTooLarge."""
    end = time.monotonic() + deadline_s

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded
        return remaining

    resp = session.get(url, timeout=(min(left(), 10.0), min(left(), 10.0)), stream=True)
    try:
        chunks: list[bytes] = []
        total = 0
        raw = resp.raw
        while True:
            # read1 returns whatever has arrived (iter_content would block until a whole chunk
            # came); each socket read is bounded by the time left.
            _set_read_timeout(raw, left())
            chunk = raw.read1(65536, decode_content=True)
            if not chunk:
                break
            left()
            total += len(chunk)
            if total > max_bytes:
                raise BodyTooLarge
            chunks.append(chunk)
        left()
        return resp.status_code, b"".join(chunks), resp.headers.get("Content-Type", "")
    finally:
        resp.close()


def _set_read_timeout(raw: Any, seconds: float) -> None:
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.settimeout(max(0.05, min(seconds, 10.0)))
