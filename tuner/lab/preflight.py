"""Checks before a fresh `kbt lab up`: each failure is one clear EnvironmentProblem line."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.inputs import is_file, read_text
from tuner.core.paths import (
    KAFKA_VERSION,
    broker_plugin_jar,
    jmx_agent_jar,
    jmx_httpserver_jar,
    kafka_libs_dir,
)
from tuner.lab.config import LabConfig
from tuner.lab.node_config import jmx_rules_file
from tuner.lab.processes import port_in_use


def find_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise EnvironmentProblem("java not found on PATH (Kafka needs Java 17+; run 'make install')")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(f"cannot run {java} -version: {exc}") from None
    if out.returncode != 0:
        raise EnvironmentProblem(f"{java} -version failed: {(out.stderr or out.stdout).strip()[:200]}")
    return java


def find_prometheus() -> str:
    prom = shutil.which("prometheus")
    if prom is None:
        raise EnvironmentProblem(
            "prometheus not found on PATH (Debian package 'prometheus'; run 'make install')"
        )
    return prom


def check_runtime(broker_plugin: bool = False, standalone_exporter: bool = False) -> None:
    """The Kafka jars, the jmx agent and the broker rules exist (and the broker plugin and the
    standalone exporter, if used)."""
    broker_jar = kafka_libs_dir() / f"kafka_2.13-{KAFKA_VERSION}.jar"
    needed = [
        (broker_jar, f"Kafka {KAFKA_VERSION} jars"),
        (jmx_agent_jar(), "the jmx_prometheus_javaagent jar"),
        (jmx_rules_file(), "the broker jmx rules"),
    ]
    if broker_plugin:
        needed.append((broker_plugin_jar(), "the lab's broker plugin"))
    if standalone_exporter:
        needed.append((jmx_httpserver_jar(), "the jmx_prometheus_httpserver jar"))
    for path, what in needed:
        if not path.is_file():
            raise EnvironmentProblem(f"{what} not found at {path} (run 'make install')")


def check_lab_dir(lab_dir: Path) -> None:
    """The lab directory exists (or can be created) and is writable."""
    try:
        lab_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=lab_dir, prefix=".write-test-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise EnvironmentProblem(f"lab directory {lab_dir} is not writable ({reason})") from None
    if not os.access(lab_dir, os.W_OK | os.X_OK):
        raise EnvironmentProblem(f"lab directory {lab_dir} is not writable")


def check_listen_address(address: str) -> None:
    """The listen address is one of this machine's (a broker could not bind it otherwise)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, 0))
        except OSError as exc:
            raise EnvironmentProblem(
                f"listen address {address} is not an address of this machine ({exc.strerror})"
            ) from None


# Linux hands out outgoing connections' local ports from here (net.ipv4.ip_local_port_range).
EPHEMERAL_PORTS_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_ports() -> tuple[int, int] | None:
    """The system's ephemeral port range, or None where it cannot be read."""
    if not is_file(EPHEMERAL_PORTS_FILE):
        return None
    try:
        low, high = (int(x) for x in read_text(EPHEMERAL_PORTS_FILE, "port range", 4096).split()[:2])
    except (BadInput, ValueError):
        return None
    return low, high


def check_ports(cfg: LabConfig) -> None:
    if cfg.listen_address is not None:
        check_listen_address(cfg.listen_address)
    for what, port in cfg.named_ports():
        host = cfg.host_of(port)
        if port_in_use(port, host):
            # A port in the ephemeral range can be held for a moment by any outgoing connection.
            span = ephemeral_ports()
            hint = (
                f" below the ephemeral ports {span[0]}-{span[1]} that outgoing connections take"
                if span is not None and span[0] <= port <= span[1]
                else ""
            )
            raise EnvironmentProblem(
                f"port {port} ({what}) is already in use on {host}; stop what uses it or pick"
                f" another --base-port{hint}"
            )


def preflight(cfg: LabConfig) -> tuple[str, str]:
    """Run every check; return the java and prometheus binaries to use."""
    java = find_java()
    prometheus = find_prometheus()
    check_runtime(broker_plugin=cfg.produce_service_time_us > 0, standalone_exporter=bool(cfg.extra_dialects))
    check_lab_dir(cfg.lab_dir)
    check_ports(cfg)
    return java, prometheus
