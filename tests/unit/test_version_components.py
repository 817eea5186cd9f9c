"""`kbt --version` names kbt and every component it runs, one line each, in one list."""

from __future__ import annotations

import subprocess
import sys

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner import __version__
from tuner.cli.components import COMPONENTS, MISSING, component_lines, components


def test_every_component_has_a_line() -> None:
    found = components()
    assert next(iter(found)) == "kbt" and found["kbt"] == __version__
    names = {"librdkafka", "Kafka jars", "jmx_exporter", "Sarama engine", "Prometheus"}
    assert names <= set(found)
    assert [name for name, _ in COMPONENTS] == list(found)[1:]
    import confluent_kafka

    assert found["librdkafka"].startswith(confluent_kafka.libversion()[0])  # a dependency: always there
    assert all(value for value in found.values())
    assert found["Kafka jars"] == MISSING or found["Kafka jars"].startswith("kafka-clients ")


def test_version_flag_prints_the_lines() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tuner", "--version"], capture_output=True, text=True, timeout=SUBPROCESS_CAP_S
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["kbt", __version__]
    assert [line.split("  ")[0].strip() for line in lines] == [
        line.split("  ")[0].strip() for line in component_lines()
    ]
