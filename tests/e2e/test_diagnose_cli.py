"""`kbt diagnose` / `kbt forecast` as subprocesses: what an operator sees when Prometheus is not there,
is not Prometheus, or holds no kbt broker metrics; and bad flags. Each is one line and an exit code.

"No kbt metrics" and the query limits run a real Prometheus (the Debian binary the lab uses) with no
scrape targets.
"""

from __future__ import annotations

import http.server
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e import kbt_process
from tuner.core.errors import BadInput, ExitStatus
from tuner.measure.prometheus import MAX_POINTS_PER_SERIES, Prometheus, PrometheusError, fits, fitting_step

pytestmark = pytest.mark.e2e


def kbt(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return kbt_process.kbt(*args, timeout=timeout)


def _one_line_error(proc: subprocess.CompletedProcess[str], status: ExitStatus, *needles: str) -> None:
    assert proc.returncode == int(status), (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kbt: error: "), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    for needle in needles:
        assert needle in lines[0], lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def not_prometheus() -> Iterator[str]:
    """A web server answering HTML to everything (a wrong URL, a proxy login page, ...)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body>Welcome to nginx!</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def empty_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _prometheus(tmp_path_factory)


@pytest.fixture(scope="module")
def small_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Prometheus that holds at most 1000 samples in one query (its --query.max-samples)."""
    yield from _prometheus(tmp_path_factory, "--query.max-samples=1000")


def _prometheus(tmp_path_factory: pytest.TempPathFactory, *flags: str) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus not on PATH (Debian package 'prometheus'; run 'make install')")
    work = tmp_path_factory.mktemp("prom")
    config = work / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 5s\nscrape_configs: []\n")
    port = _free_port()
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            *flags,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/-/ready", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert proc.poll() is None, "prometheus exited"
            assert time.monotonic() < deadline, "prometheus not ready in 60 s"
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_unreachable_prometheus() -> None:
    port = _free_port()  # nothing listens there
    proc = kbt("diagnose", "--prometheus", f"http://127.0.0.1:{port}")
    _one_line_error(proc, ExitStatus.UNREACHABLE, f"Prometheus at http://127.0.0.1:{port} is unreachable")


def test_not_prometheus(not_prometheus: str) -> None:
    proc = kbt("diagnose", "--prometheus", not_prometheus)
    _one_line_error(proc, ExitStatus.UNREACHABLE, "did not answer with Prometheus JSON", "Welcome to nginx")


def test_prometheus_without_kbt_metrics(empty_prometheus: str) -> None:
    proc = kbt("diagnose", "--prometheus", empty_prometheus)
    _one_line_error(
        proc,
        ExitStatus.ENVIRONMENT,
        f"Prometheus at {empty_prometheus} has no kbt broker metrics",
        "kafka-broker.yml",
    )


@pytest.mark.parametrize("command", ["diagnose", "compare"])
def test_a_window_past_what_prometheus_answers_is_refused_before_asking(
    empty_prometheus: str, command: str
) -> None:
    """--window 24h --step 1s is 86,401 points a series: refused naming the limit and the step that
    fits, before any query (the empty Prometheus would have said "no kbt broker metrics")."""
    more = ["--before", "now-25h"] if command == "compare" else []
    proc = kbt(command, "--prometheus", empty_prometheus, "--window", "24h", "--step", "1s", *more)
    _one_line_error(
        proc,
        ExitStatus.BAD_INPUT,
        "--window 24h at --step 1s is 86,401 points a series, past the 11,000 Prometheus answers a query:"
        " give a step of 8 s or longer",
    )


@pytest.mark.parametrize("span_s", [86_400.0, 7 * 86_400.0, 123_457.0, 11_000.0])
def test_kbt_holds_a_range_to_the_points_prometheus_answers(empty_prometheus: str, span_s: float) -> None:
    """Prometheus' own limit is kbt's: the step kbt names is answered, a step just finer is refused
    by both (kbt first, in its words; Prometheus with its resolution error)."""
    step = fitting_step(span_s)
    assert fits(span_s, step) and span_s / step <= MAX_POINTS_PER_SERIES
    finer = span_s / (MAX_POINTS_PER_SERIES + 1)
    assert not fits(span_s, finer)
    end = time.time()
    answered = Prometheus(empty_prometheus).range("vector(1)", end - span_s, end, step)
    assert len(answered[0].points) == int(span_s // step) + 1
    raw = requests.get(
        f"{empty_prometheus}/api/v1/query_range",
        params={"query": "vector(1)", "start": end - span_s, "end": end, "step": finer},
        timeout=30,
    )
    assert raw.status_code == 400 and "exceeded maximum resolution of 11,000 points" in raw.json()["error"]
    with pytest.raises(BadInput) as refused:
        Prometheus(empty_prometheus).range("vector(1)", end - span_s, end, finer)
    assert f"past the 11,000 Prometheus answers a query: give a step of {step:g} s or longer" in str(
        refused.value
    )


def test_a_query_past_max_samples_is_said_in_kbt_words(small_prometheus: str) -> None:
    with pytest.raises(PrometheusError) as exc:
        Prometheus(small_prometheus).instant("avg_over_time(vector(1)[1h:1s])")
    assert exc.value.message == (
        f"Prometheus at {small_prometheus} refused the query: it would hold more samples at once than its"
        " --query.max-samples allows (a window's points times its series); a shorter window or a longer"
        " step asks for fewer"
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--prometheus", "localhost:9090"], "give a URL such as http://"),
        (
            ["--prometheus", "http://127.0.0.1:1", "--window", "5 minutes"],
            "--window '5 minutes': must be a duration",
        ),
        (
            ["--prometheus", "http://127.0.0.1:1", "--window", "1m", "--step", "5m"],
            "--step 5m is longer than --window 1m",
        ),
        (["--prometheus", "http://127.0.0.1:1", "--end", "yesterday"], "--end 'yesterday'"),
    ],
)
def test_diagnose_bad_flags(args: list[str], needle: str) -> None:
    _one_line_error(kbt("diagnose", *args), ExitStatus.BAD_INPUT, needle)


def test_thresholds_typo(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("critical_idel: 0.2\n")
    proc = kbt("diagnose", "--prometheus", "http://127.0.0.1:1", "--thresholds", str(path))
    _one_line_error(proc, ExitStatus.BAD_INPUT, 'unknown key "critical_idel" (did you mean "critical_idle"?)')


def test_forecast_bad_input(tmp_path: Path) -> None:
    bad_peak = kbt("forecast", "--results", str(tmp_path), "--peak", "lots")
    _one_line_error(bad_peak, ExitStatus.BAD_INPUT, "--peak 'lots'")
    _one_line_error(kbt("forecast", "--results", str(tmp_path)), ExitStatus.BAD_INPUT, "no run records")
    _one_line_error(kbt("forecast"), ExitStatus.BAD_INPUT, "give --results DIR")
    bad = tmp_path / "model.json"
    bad.write_text('{"network": 1}')
    _one_line_error(
        kbt("forecast", "--diagnosis", str(bad), "--cost-model", str(bad)),
        ExitStatus.BAD_INPUT,
        "not a cost model",
    )
