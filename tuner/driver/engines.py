"""The driver engines by id: a client kind names its engine (`ClientKind.engine`), the runner
looks it up here. Engines are imported only when a run needs them (the Sarama engine's binary, the
librdkafka workers)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Engine:
    module: str  # the driver module holding the run function
    function: str
    security: bool  # takes SASL_SSL and ${VAR} overrides
    hold: bool  # can keep its load going past the duration (kbt chaos)
    confirm: bool = True  # kbt recommend --live runs its trials

    def run_function(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.module), self.function)


ENGINES: dict[str, Engine] = {
    "librdkafka": Engine("tuner.driver.librdkafka_engine", "run_load", security=True, hold=True),
    "sarama": Engine("tuner.driver.filebeat_engine", "run_filebeat_load", security=False, hold=False),
    # Filebeat: real Filebeat pods when a build is installed, else the Sarama emulation (input.engine)
    # (a secure connection: real Filebeat only, the emulation refuses it)
    "filebeat": Engine("tuner.driver.filebeat_dispatch", "run_filebeat", security=True, hold=False),
    # Kafka's Java producer (loadtests/java-engine); security via tuner/target/engine_security.py.
    "java": Engine("tuner.driver.java_engine", "run_java_load", security=True, hold=False),
}
