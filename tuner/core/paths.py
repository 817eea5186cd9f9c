"""Where kbt keeps things outside the repository (downloaded jars, lab state)."""

from __future__ import annotations

import os
from pathlib import Path

KAFKA_VERSION = "4.1.1"
JMX_EXPORTER_VERSION = "1.0.1"
# Where run records go unless --results says otherwise (here, not in the store: a command's --help
# shows it without importing the record models).
DEFAULT_RESULTS_DIR = Path("results")


def expand_user(path: str | os.PathLike[str]) -> Path:
    """`path` with a leading ~ or ~user expanded as a shell does; as written when there is no such
    user or home (pathlib's expanduser raises RuntimeError there: a traceback for a user's path)."""
    return Path(os.path.expanduser(path))


def resolved(path: Path) -> Path:
    """path.resolve(); the absolute path as written when a symbolic link on it loops (pathlib
    raises RuntimeError in Python 3.11, OSError later: a traceback for a user's path)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def cache_dir() -> Path:
    """Downloaded runtimes (Kafka jars, jmx agent). KBT_CACHE overrides ~/.cache/kbt."""
    base = os.environ.get("KBT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kbt"
    )
    return Path(base)


def kafka_libs_dir() -> Path:
    return cache_dir() / f"kafka-{KAFKA_VERSION}" / "libs"


def jmx_agent_jar() -> Path:
    return cache_dir() / "jmx" / f"jmx_prometheus_javaagent-{JMX_EXPORTER_VERSION}.jar"


def jmx_httpserver_jar() -> Path:
    """The standalone jmx_exporter (reads a JVM's JMX port): a lab's extra_dialects run it."""
    return cache_dir() / "jmx" / f"jmx_prometheus_httpserver-{JMX_EXPORTER_VERSION}.jar"


def broker_plugin_jar() -> Path:
    """The lab's broker plugin (loadtests/broker-plugin), built by `make install`."""
    return cache_dir() / "broker-plugin" / "kbt-broker-plugin.jar"


def repo_root() -> Path:
    """The source checkout (exporters/, loadtests/ live there)."""
    return Path(__file__).resolve().parents[2]
