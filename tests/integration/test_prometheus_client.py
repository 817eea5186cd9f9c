"""tuner.measure.prometheus against the lab's real Prometheus, a closed port and a server that is
not Prometheus."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tuner.core.errors import ExitStatus, KbtError, Unreachable
from tuner.lab import LabState
from tuner.measure.prometheus import Prometheus, PrometheusError

pytestmark = pytest.mark.integration


def test_instant_and_range_queries(lab: LabState, prometheus: Prometheus) -> None:
    up = prometheus.instant('up{job="kafka-broker"}')
    assert {s.labels["broker"] for s in up} == {str(b.id) for b in lab.brokers}
    assert all(s.value == 1.0 for s in up)
    assert prometheus.instant("1 + 1")[0].value == 2.0
    # A lab that came up moments ago (this test run alone) has scrapes from before its exporters
    # answered (up 0) in the last 10 s: look only at scrapes from after it was healthy.
    if time.time() - lab.started_at < 90:
        time.sleep(11)
    end = time.time()
    series = prometheus.range('up{job="kafka-broker"}', end - 10, end, step_s=1)
    assert len(series) == len(lab.brokers)
    assert all(len(s.points) >= 5 and all(v == 1.0 for _, v in s.points) for s in series)
    assert prometheus.value('up{job="kafka-broker"}') == float(len(lab.brokers))
    assert prometheus.value('up{job="no-such-job"}') is None


def test_bad_query_is_a_clear_error(prometheus: Prometheus) -> None:
    with pytest.raises(PrometheusError, match="rejected the query"):
        prometheus.instant("sum(")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable() -> None:
    with pytest.raises(Unreachable, match="unreachable") as exc:
        Prometheus(f"http://127.0.0.1:{_free_port()}", timeout_s=2).instant("up")
    assert exc.value.status == ExitStatus.UNREACHABLE


class _Garbage(BaseHTTPRequestHandler):
    body = b"<html>not prometheus</html>"

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def garbage_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>not prometheus</html>", "did not answer with Prometheus JSON"),
        (b'{"hello": "world"}', "not a Prometheus API response"),
        (b'{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}', "shape"),
        (b'{"status": "success", "data": {"resultType": "vector",'
         b' "result": [{"metric": {}, "value": [1, "x"]}]}}', "not a number"),
    ],
)  # fmt: skip
def test_garbage_answer_is_a_clear_error(garbage_server: str, body: bytes, message: str) -> None:
    _Garbage.body = body
    with pytest.raises(KbtError, match=message) as exc:
        Prometheus(garbage_server, timeout_s=2).instant("up")
    assert "\n" not in exc.value.message
