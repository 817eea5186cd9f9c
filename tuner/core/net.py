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


class BrokenAnswer(Exception):
    """The transport failed mid-answer (urllib3's own errors: a body that is not the gzip it says,
    a truncated body, a bad chunk, a read timeout) or a redirect left the origin. The message is
    one line in kbt's words."""


class BadRequestValue(Exception):
    """A header or credential kbt was given cannot be sent (a line break, a non-Latin-1 character):
    bad input, not an unreachable server."""


MAX_REDIRECTS = 5


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in: what "same origin" compares."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _transport_words(exc: BaseException) -> str:
    """urllib3's and requests' errors in a user's words (never the URL: it may hold secrets)."""
    import requests
    import urllib3.exceptions as u3

    chain: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(chain) < 16:  # the exception, its causes and the exceptions in its args
        cur = todo.pop(0)
        chain.append(cur)
        todo += [e for e in (cur.__cause__, cur.__context__, *cur.args) if isinstance(e, BaseException)]
    names = {type(e).__name__ for e in chain}
    for e in chain:
        if isinstance(e, u3.DecodeError | requests.exceptions.ContentDecodingError):
            return "sent a body that is not in the encoding it named (bad gzip or deflate data)"
        chunk_size_error = any(isinstance(c, ValueError) and "base 16" in str(c) for c in chain)
        if isinstance(e, u3.InvalidChunkLength) or "InvalidChunkLength" in names or chunk_size_error:
            return "sent a broken chunked body (a chunk size that is not hex)"
        if isinstance(e, u3.IncompleteRead) or "IncompleteRead" in names:
            return "closed the connection before the whole answer arrived (truncated body)"
        if isinstance(e, u3.ReadTimeoutError | requests.exceptions.ReadTimeout | TimeoutError):
            return "stopped sending mid-answer (read timeout)"
        if isinstance(e, u3.ProtocolError):
            return "broke the HTTP protocol mid-answer"
    return f"failed mid-answer ({type(exc).__name__})"


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


def get_bounded(session: Any, url: str, deadline_s: float) -> tuple[int, bytes, str]:
    """(status, body, content type) of a GET that ends within `deadline_s` seconds overall.
    Raises requests' exceptions for connection problems, DeadlineExceeded, BodyTooLarge."""
    end = time.monotonic() + deadline_s

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded
        return remaining

    resp = _get_within_origin(session, url, left)
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
            if total > MAX_BODY_BYTES:
                raise BodyTooLarge
            chunks.append(chunk)
        left()
        return resp.status_code, b"".join(chunks), resp.headers.get("Content-Type", "")
    except (DeadlineExceeded, BodyTooLarge):
        raise
    except Exception as exc:  # urllib3's own errors are not requests' and escaped as tracebacks
        import urllib3.exceptions as u3

        if isinstance(exc, u3.HTTPError | OSError | ValueError) or "requests" in type(exc).__module__:
            raise BrokenAnswer(_transport_words(exc)) from None
        raise
    finally:
        resp.close()


def _get_within_origin(session: Any, url: str, left: Any) -> Any:
    """The response to GET `url`, following at most MAX_REDIRECTS redirects and only within the
    URL's origin (scheme, host and port): a redirect elsewhere would carry the session's credentials
    and custom headers (an API key) to a server the user never named."""
    import requests

    start = origin(url)
    for _ in range(MAX_REDIRECTS + 1):
        try:
            resp = session.get(
                url, timeout=(min(left(), 10.0), min(left(), 10.0)), stream=True, allow_redirects=False
            )
        except (requests.exceptions.InvalidHeader, UnicodeEncodeError) as exc:
            what = "a line break" if isinstance(exc, requests.exceptions.InvalidHeader) else "a character"
            raise BadRequestValue(
                f"a header or credential holds {what} that HTTP cannot carry"
                " (headers and credentials are one line of Latin-1 text)"
            ) from None
        except requests.exceptions.ContentDecodingError as exc:
            raise BrokenAnswer(_transport_words(exc)) from None
        if not resp.is_redirect:
            return resp
        target = requests.compat.urljoin(url, resp.headers.get("Location", ""))
        resp.close()
        if origin(target) != start:
            raise BrokenAnswer(
                f"redirected to another origin ({without_secrets(target)}); kbt follows redirects only"
                " within the URL's scheme, host and port"
            )
        url = target
    raise BrokenAnswer(f"redirected more than {MAX_REDIRECTS} times")


def _set_read_timeout(raw: Any, seconds: float) -> None:
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.settimeout(max(0.05, min(seconds, 10.0)))
