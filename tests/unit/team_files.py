"""A sweep spec naming one team file where its profile goes, and a team's collector config, for
the own-file profile tests (unit and integration)."""

from __future__ import annotations

from pathlib import Path

SPEC = """\
name: own
workload:
  name: own
  topics: [{name: own, partitions: 3}]
  producers: 2
  rate_per_producer: 10
  message: {kind: generated, bytes: 100}
  duration_s: 5
  warmup_s: 1
profiles:
  - PROFILE
"""


def sweep_naming(tmp_path: Path, ref: str, files: dict[str, str]) -> Path:
    """`files` written under `tmp_path` and a spec whose one profile is `ref`; the spec's path."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("PROFILE", ref))
    return spec


# A team's collector config as deployed: its brokers, credentials and topic the deployment's.
COLLECTOR = """\
receivers:
  filelog/app:
    include: [/var/log/pods/*/*/*.log]
    poll_interval: 500ms
exporters:
  kafka:
    brokers: ${env:KAFKA_BROKERS}
    client_id: otel-agent
    timeout: 10s
    auth:
      sasl: {username: otel, password: "${env:KAFKA_PASSWORD}", mechanism: SCRAM-SHA-512}
    logs: {encoding: raw, topic: app-logs}
    producer:
      linger: ${env:KBT_TEST_LINGER:-50ms}
      compression: zstd
      required_acks: -1
      allow_auto_topic_creation: false
    sending_queue:
      enabled: true
      num_consumers: 4
      batch: {flush_timeout: 200ms, min_size: 2000}
service:
  pipelines:
    logs:
      receivers: [filelog/app]
      processors: []
      exporters: [kafka]
"""
