"""`kbt lab` as a subprocess: bad input, the up/status/logs/down lifecycle, stale labs.

The lifecycle tests start a 1-broker lab on base port 19200 without client exporter ports
(19200 Prometheus, 19201 broker, 19210 controller, 19221 jmx agent), apart from the integration lab.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import kbt_process
from tuner.core.errors import ExitStatus

pytestmark = pytest.mark.e2e

BASE = 19200
LAB_PORTS = (BASE, BASE + 1, BASE + 10, BASE + 21)


def kbt(
    *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return kbt_process.kbt(*args, env=env, timeout=timeout)


def assert_one_line_error(result: subprocess.CompletedProcess[str], status: ExitStatus, text: str) -> None:
    assert result.returncode == status, (result.returncode, result.stderr)
    assert result.stderr.startswith("kbt: error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert text in result.stderr, result.stderr


def up_args(lab_dir: Path) -> list[str]:
    return [
        "lab", "up", "--brokers", "1", "--base-port", str(BASE), "--client-exporters", "0",
        "--scrape-interval", "1", "--lab-dir", str(lab_dir),
    ]  # fmt: skip


def pids(lab_dir: Path) -> dict[str, int]:
    state = json.loads((lab_dir / "state.json").read_text())
    return {p["component"]: p["pid"] for p in state["processes"]}


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def lab_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "lab"
    yield path
    if (path / "state.json").exists():  # never leave a lab behind, whatever the test did
        kbt("lab", "down", "--lab-dir", str(path))


# ---- bad input: one clear line, non-zero exit, nothing started ------------------------------


def test_brokers_zero(tmp_path: Path) -> None:
    result = kbt("lab", "up", "--brokers", "0", "--lab-dir", str(tmp_path / "lab"))
    assert_one_line_error(result, ExitStatus.BAD_INPUT, "--brokers")


def test_bad_heap(tmp_path: Path) -> None:
    result = kbt("lab", "up", "--heap", "lots", "--lab-dir", str(tmp_path / "lab"))
    assert_one_line_error(result, ExitStatus.BAD_INPUT, "heap")


def test_unwritable_lab_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = kbt("lab", "up", "--lab-dir", str(blocker / "lab"))
    assert_one_line_error(result, ExitStatus.ENVIRONMENT, "is not writable")


def test_missing_java(tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    env = {**os.environ, "PATH": str(empty_bin)}
    result = kbt("lab", "up", "--lab-dir", str(tmp_path / "lab"), "--base-port", str(BASE), env=env)
    assert_one_line_error(result, ExitStatus.ENVIRONMENT, "java not found on PATH")


def test_occupied_port(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # earlier labs leave TIME_WAIT
        blocker.bind(("127.0.0.1", BASE + 1))
        blocker.listen()
        result = kbt(*up_args(tmp_path / "lab"))
    assert_one_line_error(
        result, ExitStatus.ENVIRONMENT, f"port {BASE + 1} (broker 1 listener) is already in use"
    )
    assert not listening(BASE), "nothing may be started when a port is taken"


def test_unknown_component_and_no_lab(tmp_path: Path) -> None:
    lab = str(tmp_path / "lab")
    assert_one_line_error(
        kbt("lab", "logs", "broker1", "--lab-dir", lab), ExitStatus.BAD_INPUT, 'did you mean "broker-1"'
    )
    status = kbt("lab", "status", "--lab-dir", lab)
    assert status.returncode == ExitStatus.FAILURE and "no lab running" in status.stdout
    down = kbt("lab", "down", "--lab-dir", lab)
    assert down.returncode == 0 and "no lab running" in down.stderr


# ---- lifecycle ---------------------------------------------------------------------------------


def test_up_is_idempotent_and_down_leaves_nothing(lab_dir: Path) -> None:
    first = kbt(*up_args(lab_dir))
    assert first.returncode == 0, first.stderr
    assert f"bootstrap servers: 127.0.0.1:{BASE + 1}" in first.stdout
    assert f"prometheus:        http://127.0.0.1:{BASE}" in first.stdout
    started = pids(lab_dir)
    assert set(started) == {"controller", "broker-1", "prometheus"}

    again = kbt(*up_args(lab_dir))
    assert again.returncode == 0, again.stderr
    assert "already running" in again.stderr
    assert pids(lab_dir) == started

    status = kbt("lab", "status", "--lab-dir", str(lab_dir))
    assert status.returncode == 0, status.stdout
    assert status.stdout.count("unhealthy") == 0 and status.stdout.count("healthy") == 3
    assert f"http://127.0.0.1:{BASE}" in status.stdout

    logs = kbt("lab", "logs", "broker-1", "-n", "400", "--lab-dir", str(lab_dir))
    assert logs.returncode == 0 and "Kafka Server started" in logs.stdout

    # A broker dies behind the lab's back: status notices, down cleans up the rest.
    os.kill(started["broker-1"], signal.SIGKILL)
    time.sleep(1)
    status = kbt("lab", "status", "--lab-dir", str(lab_dir))
    assert status.returncode == ExitStatus.FAILURE and "unhealthy" in status.stdout

    down = kbt("lab", "down", "--lab-dir", str(lab_dir))
    assert down.returncode == 0, down.stderr
    assert [c for c, pid in started.items() if alive(pid)] == []
    assert [p for p in LAB_PORTS if listening(p)] == []
    after = kbt("lab", "status", "--lab-dir", str(lab_dir))
    assert after.returncode == ExitStatus.FAILURE and "no lab running" in after.stdout


def test_up_killed_midway_is_cleaned_by_next_up(lab_dir: Path) -> None:
    """`kbt lab up` killed while starting leaves live processes with no owner; the next up cleans them."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tuner", *up_args(lab_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    orphans: dict[str, int] = {}
    while time.monotonic() < deadline and len(orphans) < 3:
        time.sleep(0.2)
        try:
            orphans = pids(lab_dir)
        except (OSError, ValueError):
            continue
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert len(orphans) == 3 and all(alive(pid) for pid in orphans.values()), orphans

    result = kbt(*up_args(lab_dir))
    assert result.returncode == 0, result.stderr
    assert [c for c, pid in orphans.items() if alive(pid)] == []
    fresh = pids(lab_dir)
    assert all(alive(pid) for pid in fresh.values()) and set(fresh.values()).isdisjoint(orphans.values())

    down = kbt("lab", "down", "--lab-dir", str(lab_dir))
    assert down.returncode == 0, down.stderr
    assert [c for c, pid in fresh.items() if alive(pid)] == []
    assert [p for p in LAB_PORTS if listening(p)] == []
