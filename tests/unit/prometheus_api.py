"""A fake Prometheus HTTP API for unit tests: every GET is answered with Prometheus' success envelope
around `reply(path, query)` (by default `answers[path]`), and every request is kept in `asked`."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar, cast
from urllib.parse import parse_qs, urlsplit


class Api(http.server.BaseHTTPRequestHandler):
    answers: ClassVar[dict[str, Any]] = {}
    asked: ClassVar[list[tuple[str, dict[str, list[str]]]]] = []

    def reply(self, path: str, query: dict[str, list[str]]) -> Any:
        return self.answers.get(path, [])

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        type(self).asked.append((url.path, query))
        body = json.dumps({"status": "success", "data": self.reply(url.path, query)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


A = TypeVar("A", bound=Api)


@contextmanager
def serving(base: type[A]) -> Iterator[tuple[str, type[A]]]:
    """A server on a free loopback port answering with a fresh subclass of `base` (its own answers
    and requests); its URL and that handler class."""
    handler = cast(type[A], type("Handler", (base,), {"answers": {}, "asked": []}))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
