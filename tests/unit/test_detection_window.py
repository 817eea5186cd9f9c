"""A past window's metric dialect is detected from that window's series, not from those present
now (a rollout or an upgrade in between may have renamed or relabelled them): diagnose --end and
compare ask Prometheus' names APIs over the window."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from tuner.measure.dialects import DIALECTS, dialect_names, resolve_translator
from tuner.measure.prometheus import MAX_NAMES, Prometheus, PrometheusError
from tuner.target.base import BrokerSelectors, Target


class _Names(http.server.BaseHTTPRequestHandler):
    """Answers Prometheus' names APIs with `answers[path]`, and keeps each request's query."""

    answers: ClassVar[dict[str, Any]] = {}
    asked: ClassVar[list[tuple[str, dict[str, list[str]]]]] = []

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        type(self).asked.append((url.path, parse_qs(url.query)))
        body = json.dumps({"status": "success", "data": type(self).answers.get(url.path, [])}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def names_server() -> Iterator[tuple[str, type[_Names]]]:
    handler = type("Handler", (_Names,), {"answers": {}, "asked": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_a_window_reads_the_names_of_that_window(names_server: tuple[str, type[_Names]]) -> None:
    url, handler = names_server
    names = sorted(dialect_names(DIALECTS["strimzi-reporter"]))
    handler.answers = {
        "/api/v1/label/__name__/values": names,
        "/api/v1/labels": ["__name__", "job", "kubernetes_pod_name", "instance"],
    }
    prom = Prometheus(url)
    assert prom.series_names('job="kafka"', (1000.0, 1060.5)) == set(names)
    path, query = handler.asked[-1]
    assert path == "/api/v1/label/__name__/values"
    assert query == {"match[]": ['{job="kafka"}'], "start": ["1000.000"], "end": ["1060.500"]}
    labels = prom.labels_present('job="kafka"', ("broker", "kubernetes_pod_name", "pod"), (1000.0, 1060.5))
    assert labels == {"kubernetes_pod_name"}
    # The translator reads the window's series: its dialect and its broker label come from them.
    target = Target(name="t", kind="file", bootstrap_servers="h:1", selectors=BrokerSelectors(job="kafka"),
                    dialect="auto")  # fmt: skip
    translator = resolve_translator(prom, target, (1000.0, 1060.5))
    assert translator.dialect.name == "strimzi-reporter" and translator.broker_label == "kubernetes_pod_name"
    assert {p for p, _ in handler.asked} == {"/api/v1/label/__name__/values", "/api/v1/labels"}


@pytest.mark.parametrize("answer", [{"result": []}, "names", [f"n{i}" for i in range(MAX_NAMES + 1)]])
def test_a_names_answer_that_is_not_a_bounded_list_is_refused(
    names_server: tuple[str, type[_Names]], answer: Any
) -> None:
    url, handler = names_server
    handler.answers = {"/api/v1/label/__name__/values": answer}
    with pytest.raises(PrometheusError, match="list of at most"):
        Prometheus(url).series_names('job="kafka"', (0.0, 60.0))
