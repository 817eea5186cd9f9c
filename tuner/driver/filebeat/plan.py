"""The JSON plan each Sarama engine process reads (loadtests/sarama-engine/plan.go, schema 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.paths import cache_dir
from tuner.driver.engine_process import ProcessPlan, ProcessSite, engine_plans
from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.workload import WorkloadSpec

PLAN_SCHEMA = 1
RESULT_SCHEMA = 1
# Seconds for every process to connect before the shared schedule starts.
START_SLACK_S = 3.0


def engine_binary() -> Path:
    """The engine built by `make install` (scripts/install.sh) into the cache."""
    path = cache_dir() / "bin" / "sarama-engine"
    if not path.is_file():
        raise EnvironmentProblem(f"the Filebeat engine is not built ({path} is missing): run 'make install'")
    return path


def check_emulated(config: FilebeatConfig) -> None:
    """Reject settings the engine does not reproduce, rather than measure something else."""
    kafka, mem = config.kafka, config.mem
    problems = {
        "queue.mem.bytes": mem.bytes is not None,
        "output.kafka.worker": kafka.effective_workers > 1,
        "output.kafka.topics": bool(kafka.topics),
        "output.kafka.partition.hash.hash": bool(kafka.partition.hash and kafka.partition.hash.hash),
        "output.kafka.headers": bool(kafka.headers),
        "output.kafka.codec": kafka.codec is not None,
        "input.*": not config.input.is_default,
    }
    for option, present in problems.items():
        if present:
            raise BadInput(
                f"{option}: not emulated by the Filebeat engine (remove it to measure this profile)"
            )


def drain_s(config: FilebeatConfig) -> float:
    """How long outstanding events may take after the schedule ends: the queue's flush timeout,
    Sarama's flush frequency and a broker round trip with retries."""
    kafka = config.kafka
    return min(
        600.0,
        (config.mem.effective_flush_timeout + kafka.bulk_flush_frequency + kafka.broker_timeout).seconds + 10,
    )


def output_section(config: FilebeatConfig) -> dict[str, Any]:
    k = config.kafka
    return {
        "bulk_max_size": k.bulk_max_size,
        "bulk_flush_frequency_ms": k.bulk_flush_frequency.ms,
        "compression": k.compression,
        "compression_level": k.compression_level,
        "required_acks": k.required_acks,
        "max_message_bytes": k.max_message_bytes,
        "channel_buffer_size": k.channel_buffer_size,
        "broker_timeout_ms": k.broker_timeout.ms,
        "timeout_ms": k.timeout.ms,
        "keep_alive_ms": k.keep_alive.ms,
        "client_id": k.client_id,
        "version": k.version,
        "max_retries": k.max_retries,
        "backoff_init_ms": k.backoff.init.ms,
        "backoff_max_ms": k.backoff.max.ms,
        "partition": {
            "strategy": k.partition.strategy,
            "group_events": k.partition.group_events,
            "reachable_only": k.partition.reachable_only,
        },
        "metadata": {
            "retry_max": k.metadata.retry.max,
            "retry_backoff_ms": k.metadata.retry.backoff.ms,
            "refresh_frequency_ms": k.metadata.refresh_frequency.ms,
            "full": k.metadata.full,
        },
    }


def queue_section(config: FilebeatConfig) -> dict[str, Any]:
    mem = config.mem
    return {
        "events": mem.events,
        "flush_min_events": mem.flush.min_events,
        "flush_timeout_ms": mem.flush.timeout.ms,
    }


def process_plans(workload: WorkloadSpec, config: FilebeatConfig, site: ProcessSite) -> list[ProcessPlan]:
    """One plan per workload process, each with the Filebeat output and queue sections."""
    sections = {"output": output_section(config), "queue": queue_section(config)}
    return engine_plans(workload, lambda _index: sections, site, schema=PLAN_SCHEMA, drain_s=drain_s(config))
