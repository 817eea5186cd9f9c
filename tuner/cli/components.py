"""`kbt --version`: kbt and the versions of every component it runs, one line each.

Each component is one function returning its line's value (or None: not installed); add a
component by adding a function to COMPONENTS. Nothing here starts a broker or reaches the network.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from tuner import __version__
from tuner.core.paths import JMX_EXPORTER_VERSION, cache_dir, jmx_agent_jar, kafka_libs_dir, repo_root

MISSING = "not installed (make install)"


def _run_first_line(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else None


def _jar_version(libs: Path, artifact: str) -> str | None:
    for jar in sorted(libs.glob(f"{artifact}-*.jar")):
        match = re.fullmatch(rf"{re.escape(artifact)}-(\d[\w.]*)\.jar", jar.name)
        if match:
            return match.group(1)
    return None


def _go_mod_version(module: str) -> str | None:
    go_mod = repo_root() / "loadtests" / "sarama-engine" / "go.mod"
    if not go_mod.is_file():
        return None
    match = re.search(rf"^\s*{re.escape(module)}\s+(v\S+)", go_mod.read_text(encoding="utf-8"), re.M)
    return match.group(1) if match else None


def librdkafka() -> str | None:
    try:
        import confluent_kafka
    except ImportError:  # pragma: no cover - a dependency
        return None
    ck = confluent_kafka.version()  # a str in recent releases, a (str, int) before
    return f"{confluent_kafka.libversion()[0]} (confluent-kafka {ck if isinstance(ck, str) else ck[0]})"


def kafka_jars() -> str | None:
    libs = kafka_libs_dir()
    clients = _jar_version(libs, "kafka-clients")
    server = _jar_version(libs, "kafka_2.13")
    if clients is None:
        return None
    return f"kafka-clients {clients}, broker kafka_2.13 {server or '?'}"


def jmx_exporter() -> str | None:
    return JMX_EXPORTER_VERSION if jmx_agent_jar().is_file() else None


def sarama_engine() -> str | None:
    if not (cache_dir() / "bin" / "sarama-engine").is_file():
        return None
    return f"built (IBM/sarama {_go_mod_version('github.com/IBM/sarama') or '?'})"


def toxiproxy() -> str | None:
    stamps = sorted((cache_dir() / "bin").glob(".toxiproxy-v*"))
    if not (cache_dir() / "bin" / "toxiproxy-server").is_file():
        return None
    return stamps[-1].name.removeprefix(".toxiproxy-") if stamps else "built"


def filebeat() -> str | None:
    """The real Filebeat builds in the cache (scripts/build_filebeat.sh), oldest first."""
    from tuner.driver.filebeat.builds import filebeat_builds

    builds = filebeat_builds()
    return ", ".join(builds) if builds else None


def otel_collector() -> str | None:
    """The OpenTelemetry Collector kbt builds (loadtests/otelcol-engine), by the release it reports."""
    from tuner.driver.otelcol.build import collector_binary, collector_version

    binary = collector_binary()
    return f"built ({collector_version(binary)})" if binary is not None else None


def prometheus() -> str | None:
    line = _run_first_line(["prometheus", "--version"])
    match = re.search(r"version (\S+)", line or "")
    return match.group(1) if match else None


COMPONENTS: list[tuple[str, Callable[[], str | None]]] = [
    ("librdkafka", librdkafka),
    ("Kafka jars", kafka_jars),
    ("jmx_exporter", jmx_exporter),
    ("Sarama engine", sarama_engine),
    ("Filebeat builds", filebeat),
    ("OTel Collector", otel_collector),
    ("Prometheus", prometheus),
    ("toxiproxy", toxiproxy),
]


def components() -> dict[str, str]:
    """{component: version or MISSING}, kbt first."""
    return {"kbt": __version__} | {name: probe() or MISSING for name, probe in COMPONENTS}


def component_lines() -> list[str]:
    items = components()
    width = max(len(name) for name in items)
    return [f"{name:<{width}}  {value}" for name, value in items.items()]
