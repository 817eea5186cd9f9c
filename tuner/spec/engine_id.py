"""EngineId: the typed name of a driver engine, defined below the driver so a client kind (spec)
can name the engine that runs its load without importing it. The driver's registry
(tuner/driver/engines.py) maps every id to exactly one engine object."""

from __future__ import annotations

from enum import StrEnum


class EngineId(StrEnum):
    LIBRDKAFKA = "librdkafka"  # confluent-kafka producers in worker processes
    SARAMA = "sarama"  # the Filebeat emulation (loadtests/sarama-engine)
    FILEBEAT = "filebeat"  # real Filebeat pods when a build is installed, else the Sarama emulation
    JAVA = "java"  # Kafka's Java producer (loadtests/java-engine)
    OTELCOL = "otelcol"  # real OpenTelemetry Collector pods (loadtests/otelcol-engine)
