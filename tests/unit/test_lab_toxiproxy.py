"""A lab behind Toxiproxy (ports, listeners, proxies file, state addresses) and the fault journal
that `kbt lab down` / `up` use to undo what a killed chaos run left behind. No cluster is started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tuner.core.errors import EnvironmentProblem
from tuner.lab import LabConfig
from tuner.lab.faults import JOURNAL, lock_dir, signal_broker, undo_faults, unlock_dir
from tuner.lab.layout import LabLayout
from tuner.lab.node_config import broker_properties
from tuner.lab.processes import is_alive
from tuner.lab.state import ProcessRecord, new_state, save_state
from tuner.lab.toxiproxy import config_file, proxies, toxiproxy_command, write_config


def cfg(tmp_path: Path, **kw: object) -> LabConfig:
    return LabConfig.parse({"lab_dir": tmp_path / "lab", "base_port": 21800, **kw})


def test_ports_listeners_and_proxies(tmp_path: Path) -> None:
    c = cfg(tmp_path, via_toxiproxy=True, tiered=True)
    named = dict((what, port) for what, port in c.named_ports())
    assert named["Toxiproxy API"] == 21840
    assert named["broker 2 proxy"] == 21842 and named["broker 2 internal listener"] == 21852
    assert len(set(named.values())) == len(named), "two lab functions share a port"

    props = broker_properties(c, LabLayout(c.lab_dir), 2)
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:21802,INTERNAL://127.0.0.1:21852"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:21842,INTERNAL://127.0.0.1:21852"
    assert props["inter.broker.listener.name"] == "INTERNAL"
    assert props["remote.log.metadata.manager.listener.name"] == "INTERNAL"
    assert "INTERNAL:PLAINTEXT" in props["listener.security.protocol.map"]

    assert proxies(c)[1] == {
        "name": "broker-2",
        "listen": "127.0.0.1:21842",
        "upstream": "127.0.0.1:21802",
        "enabled": True,
    }
    layout = LabLayout(c.lab_dir)
    written = json.loads(write_config(c, layout).read_text())
    assert [p["name"] for p in written] == ["broker-1", "broker-2", "broker-3"]
    command = toxiproxy_command(c, layout, "toxiproxy-server")
    assert command[command.index("-port") + 1] == "21840"
    assert str(config_file(layout)) in command  # the marker that guards its PID

    state = new_state(c, "cid", 0.0)
    assert state.bootstrap_servers == "127.0.0.1:21841,127.0.0.1:21842,127.0.0.1:21843"
    assert state.direct_bootstrap_servers == "127.0.0.1:21851,127.0.0.1:21852,127.0.0.1:21853"


def test_without_toxiproxy_nothing_changes(tmp_path: Path) -> None:
    c = cfg(tmp_path)
    props = broker_properties(c, LabLayout(c.lab_dir), 1)
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:21801"
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert not any("proxy" in what or "Toxiproxy" in what for what, _ in c.named_ports())
    state = new_state(c, "cid", 0.0)
    assert (
        state.bootstrap_servers
        == state.direct_bootstrap_servers
        == ("127.0.0.1:21801,127.0.0.1:21802,127.0.0.1:21803")
    )


def _can_create(directory: Path) -> bool:
    try:
        (directory / f"probe-{time.monotonic_ns()}").mkdir()
    except OSError:
        return False
    return True


def test_locked_directory_refuses_new_files_until_unlocked(tmp_path: Path) -> None:
    lab_dir = tmp_path / "lab"
    remote = lab_dir / "remote-storage"
    (remote / "topic-0").mkdir(parents=True)
    assert lock_dir(lab_dir, remote) == 2
    try:
        assert not _can_create(remote) and not _can_create(remote / "topic-0")
        assert (lab_dir / JOURNAL).is_file()
    finally:
        unlock_dir(lab_dir, remote)
    assert _can_create(remote) and _can_create(remote / "topic-0")
    assert not (lab_dir / JOURNAL).exists()


def test_undo_restores_a_lock_left_by_a_killed_run(tmp_path: Path) -> None:
    lab_dir = tmp_path / "lab"
    remote = lab_dir / "remote-storage"
    remote.mkdir(parents=True)
    lock_dir(lab_dir, remote)  # ... and the process that locked it dies here
    assert not _can_create(remote)
    assert undo_faults(lab_dir) == [f"unlocked {remote}"]
    assert _can_create(remote)
    assert undo_faults(lab_dir) == []


def test_paused_broker_is_journaled_and_resumed_by_undo(tmp_path: Path) -> None:
    c = cfg(tmp_path)
    c.lab_dir.mkdir(parents=True)
    marker = str(LabLayout(c.lab_dir).node_properties("broker-1"))
    # A stand-in broker: a sleeping process whose command line carries the marker.
    proc = subprocess.Popen([sys.executable, "-c", "import time,sys; time.sleep(60)", marker])
    try:
        state = new_state(c, "cid", 0.0)
        record = ProcessRecord(component="broker-1", pid=proc.pid, marker=marker, log_file=tmp_path / "l")
        state.record(record)
        save_state(state)
        signal_broker(state, 1, signal.SIGSTOP)
        assert _settled_state(proc.pid, lambda s: s == "T") == "T"
        assert undo_faults(c.lab_dir) == [f"resumed pid {proc.pid}"]
        assert _settled_state(proc.pid, lambda s: s != "T") in ("S", "R")
        signal_broker(state, 1, signal.SIGKILL)
        proc.wait(timeout=10)
        assert not is_alive(proc.pid)
        with pytest.raises(EnvironmentProblem, match="broker 1 is not running"):
            signal_broker(state, 1, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def _settled_state(pid: int, done: Callable[[str], bool], timeout_s: float = 5.0) -> str:
    """The process state once `done(state)` holds (signals take effect asynchronously), bounded."""
    deadline = time.monotonic() + timeout_s
    state = _proc_state(pid)
    while not done(state) and time.monotonic() < deadline:
        time.sleep(0.02)
        state = _proc_state(pid)
    return state


def _proc_state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2]
