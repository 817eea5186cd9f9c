"""A `client: filebeat` ClientProfile as a Filebeat configuration (output.kafka + queue.mem).

The client-neutral knobs map onto Filebeat's options:

    linger_ms          -> output.kafka.bulk_flush_frequency
    batch_messages     -> output.kafka.bulk_max_size
    compression(_level)-> output.kafka.compression(_level)   (Filebeat has no zstd)
    acks               -> output.kafka.required_acks          ("all" = -1)
    partitioner        -> output.kafka.partition.*            (default/hash: hash, random: random,
                                                               sticky: random with group_events = the batch)

Everything else is set with `overrides` keyed by Filebeat option paths, e.g.
`{"queue.mem.events": 16384, "queue.mem.flush.timeout": "250ms"}`, and the pods' input side with
`input.*` (`{"input.type": "filestream", "input.backoff": "250ms"}`; tuner/spec/filebeat_input.py).
Knobs Filebeat does not expose (batch_bytes, max_in_flight, idempotence) are errors.
`filebeat_overrides()` is the inverse: any FilebeatConfig as profile overrides.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML

from tuner.core.errors import did_you_mean
from tuner.spec.filebeat import FilebeatConfig, KafkaOutput, MemQueue, format_duration
from tuner.spec.filebeat_input import DURATION_KNOBS, FilebeatInput
from tuner.spec.filebeat_load import describe_filebeat_error, known_options
from tuner.spec.profile import ClientProfile

# Placeholders: the engine targets the lab's bootstrap servers and the run's topic.
PLACEHOLDER_HOSTS = ["${KAFKA_HOSTS}"]
PLACEHOLDER_TOPIC = "${KAFKA_TOPIC}"
_PREFIXES = ("output.kafka.", "queue.mem.", "input.")
_UNSUPPORTED_KNOBS = {
    "batch_bytes": "Filebeat does not expose Sarama's Flush.Bytes",
    "max_in_flight": "Filebeat does not expose Sarama's Net.MaxOpenRequests (it stays 5)",
}


def filebeat_config(profile: ClientProfile) -> FilebeatConfig:
    """The Filebeat configuration a `client: filebeat` profile stands for (ValueError naming the
    knob or override on any problem)."""
    if profile.client != "filebeat":
        raise ValueError(f"profile {profile.name} is for client {profile.client}, not filebeat")
    for knob, why in _UNSUPPORTED_KNOBS.items():
        if getattr(profile, knob) is not None:
            raise ValueError(f"{knob}: not available with client filebeat ({why})")
    if profile.idempotence:
        raise ValueError("idempotence: Filebeat's Kafka output has no idempotent producer")
    kafka: dict[str, Any] = {"hosts": PLACEHOLDER_HOSTS, "topic": PLACEHOLDER_TOPIC}
    if profile.linger_ms is not None:
        kafka["bulk_flush_frequency"] = profile.linger_ms / 1000
    if profile.batch_messages is not None:
        kafka["bulk_max_size"] = profile.batch_messages
    if profile.compression is not None:
        if profile.compression == "zstd":
            raise ValueError(
                "compression: Filebeat's Kafka output offers none, gzip, lz4 or snappy (not zstd)"
            )
        kafka["compression"] = profile.compression
    if profile.compression_level is not None:
        kafka["compression_level"] = profile.compression_level
    if profile.acks is not None:
        kafka["required_acks"] = -1 if profile.acks == "all" else int(profile.acks)
    data: dict[str, Any] = {"output": {"kafka": kafka}, "queue": {"mem": {}}}
    knob_paths = {f"output.kafka.{k}" for k in kafka if k not in ("hosts", "topic")}
    for key, raw in profile.overrides.items():
        _apply_override(data, key, raw, knob_paths)
    if profile.partitioner != "default" and "partition" in kafka:
        raise ValueError("partitioner: set either the partitioner knob or output.kafka.partition.* overrides")
    config = _validate(data)
    if profile.partitioner in ("random", "sticky", "hash"):
        group = config.batch_events if profile.partitioner == "sticky" else 1
        strategy = "hash" if profile.partitioner == "hash" else "random"
        kafka["partition"] = {strategy: {} if strategy == "hash" else {"group_events": group}}
        config = _validate(data)
    return config


def check_filebeat_fits(profile: ClientProfile, topic_max_bytes: int, event_bytes: int | None) -> None:
    """The profile is valid Filebeat configuration and its events reach the topic: ValueError if
    max_message_bytes exceeds the topic limit (the broker rejects the batch and Filebeat drops it)
    or the workload's events exceed max_message_bytes (Filebeat drops them)."""
    kafka = filebeat_config(profile).kafka
    if kafka.max_message_bytes > topic_max_bytes:
        raise ValueError(
            f"output.kafka.max_message_bytes: {kafka.max_message_bytes} (profile {profile.name}) exceeds the"
            f" topic's max.message.bytes {topic_max_bytes}: Filebeat would drop rejected batches"
        )
    if event_bytes is not None and event_bytes > kafka.max_message_bytes:
        raise ValueError(
            f"output.kafka.max_message_bytes: {kafka.max_message_bytes} (profile {profile.name}) is below the"
            f" workload's {event_bytes}-byte events: Filebeat would drop them"
        )


def _apply_override(data: dict[str, Any], key: str, raw: str, knob_paths: set[str]) -> None:
    if not key.startswith(_PREFIXES) or key not in _leaf_options():
        hint = did_you_mean(key, _leaf_options())
        raise ValueError(f'overrides: unknown Filebeat option "{key}"{hint}')
    if key in knob_paths:
        raise ValueError(f'overrides: "{key}" is already set by a profile knob; set it in one place')
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = _scalar(raw)


def _scalar(raw: str) -> Any:
    """Override values are strings in the profile; read them as YAML scalars ("8192" -> 8192)."""
    try:
        value = YAML(typ="safe").load(raw)
    except Exception:  # a value YAML cannot read stays a string for the schema to judge
        return raw
    return raw if isinstance(value, dict | list) else value


def _validate(data: dict[str, Any]) -> FilebeatConfig:
    try:
        return FilebeatConfig.model_validate(data)
    except ValidationError as exc:
        raise ValueError(describe_filebeat_error(exc, {}, "filebeat").removeprefix("filebeat: ")) from None


def _leaf_options() -> list[str]:
    return [p for p in known_options() if p.startswith(_PREFIXES)]


def filebeat_overrides(config: FilebeatConfig) -> dict[str, str]:
    """The profile overrides that reproduce `config` (options that differ from Filebeat's defaults;
    hosts and topic are the engine's)."""
    defaults = KafkaOutput(hosts=PLACEHOLDER_HOSTS, topic=PLACEHOLDER_TOPIC)
    out: dict[str, str] = {}
    kafka = config.kafka.model_dump(exclude={"hosts", "topic", "partition"})
    _diff(kafka, defaults.model_dump(exclude={"hosts", "topic", "partition"}), "output.kafka", out)
    _diff(config.mem.model_dump(), MemQueue().model_dump(), "queue.mem", out)
    _diff(config.input.model_dump(), FilebeatInput().model_dump(), "input", out)
    partition = config.kafka.partition
    if partition.strategy != "hash" or partition.reachable_only:
        prefix = f"output.kafka.partition.{partition.strategy}"
        if partition.strategy != "hash":
            out[f"{prefix}.group_events"] = str(partition.group_events)
        if partition.reachable_only:
            out[f"{prefix}.reachable_only"] = "true"
    return out


DURATION_OPTIONS = _DURATIONS = {
    "output.kafka.bulk_flush_frequency", "output.kafka.timeout", "output.kafka.broker_timeout",
    "output.kafka.keep_alive", "output.kafka.backoff.init", "output.kafka.backoff.max",
    "output.kafka.metadata.refresh_frequency", "output.kafka.metadata.retry.backoff",
    "queue.mem.flush.timeout", *(f"input.{knob}" for knob in DURATION_KNOBS),
}  # fmt: skip


def _diff(value: Any, default: Any, path: str, out: dict[str, str]) -> None:
    if isinstance(value, dict) and isinstance(default, dict):
        for key, sub in value.items():
            _diff(sub, default.get(key), f"{path}.{key}", out)
    elif value != default and value is not None:
        out[path] = _text(value, path)


def _text(value: Any, path: str) -> str:
    if path in _DURATIONS and isinstance(value, int | float):
        return format_duration(float(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
