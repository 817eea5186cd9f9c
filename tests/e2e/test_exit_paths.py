"""Exit paths that are not bad input: a reader that goes away (broken pipe), a closed terminal
(SIGHUP) and KBT_DEBUG=1 tracebacks, each run as `kbt` is run by a user. The Prometheus of the
SIGHUP case is the catalog's trickling fake (a fault a real one does not make)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.bad_inputs import GOOD_SPEC, SECRET, endpoint
from tests.e2e.kbt_process import kbt, user_env
from tuner.core.errors import ExitStatus

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("args", [["--help"], ["sweep", "spec.yaml", "--dry-run"]])
def test_a_reader_that_goes_away_is_exit_141_and_silent(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(GOOD_SPEC)
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -c1` that has already exited
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tuner", *args],
            cwd=tmp_path,
            env=user_env(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == int(ExitStatus.BROKEN_PIPE), proc.stderr
    assert proc.stderr == ""


def test_sighup_stops_like_ctrl_c(tmp_path: Path) -> None:
    with endpoint("trickle") as prom:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tuner", "diagnose", "--prometheus", prom],
            cwd=tmp_path,
            env=user_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(3)  # past the imports, waiting on the trickle
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == int(ExitStatus.INTERRUPTED), err
    assert err.strip().splitlines() == ["kbt: error: interrupted"]


def test_debug_tracebacks_pass_the_scrubber(tmp_path: Path) -> None:
    env = user_env(KBT_DEBUG="1")
    with endpoint("hostile") as prom:
        host = prom.removeprefix("http://")
        url = f"http://kbt:{SECRET}@{host}/echo"
        proc = kbt("diagnose", "--prometheus", url, cwd=tmp_path, env=env, timeout=60)
    assert "Traceback" in proc.stderr  # the debug path ran
    assert proc.returncode == int(ExitStatus.UNREACHABLE), proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    assert "a2J0Omh1bnRlcjItczNjcmV0" not in proc.stderr  # its Basic header form either


def test_terminal_sequences_from_a_spec_are_escaped_on_stdout(tmp_path: Path) -> None:
    """An OSC title sequence and a screen clear in an override reach stdout escaped (the output
    gate), whichever printer the command uses."""
    spec = GOOD_SPEC.replace(
        "linger_ms: 50", 'linger_ms: 50, overrides: {client.id: "a\\e]0;pwned\\ax\\e[2J"}'
    )
    (tmp_path / "spec.yaml").write_text(spec)
    proc = kbt("sweep", "spec.yaml", "--dry-run", cwd=tmp_path, env=user_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr
    assert "client.id=a\\x1b]0;pwned" in proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "spec.yaml"],
        ["recommend", "--live", "spec.yaml"],
        ["stress", "stress.yaml", "--profiles", "current"],
        ["chaos", "spec.yaml"],
    ],
    ids=["sweep", "recommend-live", "stress", "chaos"],
)
def test_a_run_on_a_stopped_lab_says_its_error_alone(args: list[str], tmp_path: Path) -> None:
    """The start's check fails (every broker's port refuses, as a stopped lab's do): its one line
    is all kbt prints. The sweep's and recommend --live's progress bar drew an empty line on stdout
    before it (a bar entered before the checks), stress its baseline heading."""
    import json
    import socket

    from tests.e2e.bad_inputs import GOOD_STRESS
    from tuner.lab.config import LabConfig
    from tuner.lab.state import new_state

    lab = tmp_path / "lab"
    state = json.loads(new_state(LabConfig(lab_dir=lab), "abc", 1.8e9).model_dump_json())
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bound:  # bound, not listening: refused
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        for broker in state["brokers"]:
            broker.update(port=port, proxy_port=None, internal_port=None)
        lab.mkdir()
        (lab / "state.json").write_text(json.dumps({**state, "phase": "up"}))
        (tmp_path / "spec.yaml").write_text(GOOD_SPEC)
        (tmp_path / "stress.yaml").write_text(GOOD_STRESS)
        proc = kbt(*args, "--lab-dir", str(lab), cwd=tmp_path, env=user_env())
    tried = ", ".join([f"127.0.0.1:{port}"] * len(state["brokers"]))
    assert proc.stderr.splitlines() == [f"kbt: error: cannot reach {tried} (Connection refused)"], proc.stderr
    assert proc.stdout == ""
    assert proc.returncode == int(ExitStatus.UNREACHABLE)
