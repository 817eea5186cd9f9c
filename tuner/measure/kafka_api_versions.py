"""The ApiVersions answer of a Kafka 4.1.1 broker: each API key's highest version, as librdkafka
2.16 logged it from a broker of kbt's lab (default broker settings, PLAINTEXT listener). Patch
releases keep a release line's API versions, so an equal answer means a 4.1.x broker
(tuner.measure.kafka_version infers nothing from any other answer)."""

from __future__ import annotations

RELEASE = "4.1"
REFERENCE: dict[int, int] = {}  # filled from a real broker (scripts/capture_api_versions.py)
