"""Filebeat profiles kbt publishes: what each is for, its settings, and what it measured.

`kbt render filebeat` turns these into `filebeat-profiles/*.yml` (Filebeat config fragments) and
`loadtests/profiles/filebeat-*.yaml` (the same settings as `client: filebeat` sweep profiles, so the
published file is exactly what was measured). Settings are Filebeat option paths with the values a
profile override would carry; anything not listed keeps Filebeat's default. The measured lines come
from the sweeps named in `measured_by` (figures in docs/benchmarks.md, section "Filebeat engine").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tuner.spec.filebeat import FilebeatConfig
from tuner.spec.filebeat_profile import filebeat_config
from tuner.spec.profile import ClientProfile


@dataclass(frozen=True)
class FilebeatProfile:
    name: str
    purpose: tuple[str, ...]  # comment lines: what the profile is for
    settings: dict[str, str] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # option path -> comment above it
    measured: tuple[str, ...] = ()  # comment lines: the measured effect
    measured_by: str | None = None  # the command that measured it
    published: bool = True  # also written to filebeat-profiles/ (baselines only to loadtests/)

    @property
    def profile(self) -> ClientProfile:
        return ClientProfile(
            name=f"filebeat-{self.name}",
            description=self.purpose[0],
            client="filebeat",
            overrides=self.settings,
        )

    @property
    def config(self) -> FilebeatConfig:
        return filebeat_config(self.profile)


_QUEUE_IMMEDIATE = {
    "queue.mem.flush.timeout": "0s",
}

PROFILES: tuple[FilebeatProfile, ...] = (
    FilebeatProfile(
        name="default",
        purpose=(
            "Filebeat's shipped output.kafka and queue.mem defaults (8.x), for comparison.",
            "At tens of events/s per pod the queue waits up to flush.timeout (10 s) to fill a batch,",
            "so few requests reach the brokers but events arrive seconds late.",
        ),
        measured=(
            "qunar-logs (24 pods x 40 events/s, 1.6 KB): 51.7 produce requests/s, p99 10.2 s, 0 lost.",
        ),
        measured_by="kbt sweep loadtests/filebeat-small-logs.yaml",
    ),
    FilebeatProfile(
        name="7x-default",
        purpose=(
            "Filebeat 7.x queue defaults (events 4096, flush.min_events 2048, flush.timeout 1s) with the",
            "output.kafka defaults: the setup of Qunar's sidecars. Sarama flushes each event as soon as it",
            "arrives (bulk_flush_frequency 0), so requests carry one or two events.",
        ),
        settings={
            "queue.mem.events": "4096",
            "queue.mem.flush.min_events": "2048",
            "queue.mem.flush.timeout": "1s",
        },
        published=False,
    ),
    FilebeatProfile(
        name="low-latency",
        purpose=(
            "output.kafka defaults with a queue that hands events over at once (flush.timeout 0s):",
            "the usual low-latency setup; one produce request per event at low rates.",
        ),
        settings=dict(_QUEUE_IMMEDIATE),
        published=False,
    ),
    FilebeatProfile(
        name="small-logs",
        purpose=(
            "Sidecars shipping small log lines (~1-2 KB) at a moderate rate (tens of events/s per pod)",
            "with a p99 delivery budget of about 1 s.",
        ),
        settings={
            "output.kafka.bulk_max_size": "2048",
            "output.kafka.bulk_flush_frequency": "500ms",
            "output.kafka.partition.random.group_events": "2048",
            "queue.mem.events": "4096",
            "queue.mem.flush.min_events": "2048",
            **_QUEUE_IMMEDIATE,
        },
        why={
            "output.kafka.bulk_flush_frequency": "Sarama collects 500 ms of events per broker into one"
            " request (0 sends each event alone). Bounds the added latency.",
            "output.kafka.partition.random.group_events": "keyless events stay on one partition for 2048"
            " events, so a flush touches one broker; 64 spreads partitions faster for ~20% more requests.",
            "queue.mem.flush.timeout": "hand events to the output at once: the batching happens in Sarama,"
            " bounded by bulk_flush_frequency.",
            "queue.mem.flush.min_events": "keep equal to bulk_max_size (a larger bulk_max_size would do"
            " nothing).",
        },
        measured=(
            "qunar-logs (24 pods x 40 events/s, 1.6 KB, 3 brokers): 46.4 produce requests/s vs 495.5",
            "with the 7.x defaults (10.7x fewer), 960 with a low-latency queue (20.7x fewer); p99 503 ms.",
        ),
        measured_by="kbt sweep loadtests/filebeat-small-logs.yaml",
    ),
    FilebeatProfile(
        name="large-events",
        purpose=(
            "Events of hundreds of KB (multi-line dumps, large JSON documents) at a low rate.",
            "Batching by count barely helps (one event nearly fills a partition batch); the queue size",
            "bounds sidecar memory and max_message_bytes decides which events are dropped.",
        ),
        settings={
            "output.kafka.bulk_max_size": "64",
            "output.kafka.bulk_flush_frequency": "100ms",
            "output.kafka.max_message_bytes": "1000000",
            "queue.mem.events": "128",
            "queue.mem.flush.min_events": "64",
            **_QUEUE_IMMEDIATE,
        },
        why={
            "output.kafka.max_message_bytes": "must exceed the largest event, and stay at or below the"
            " topic's max.message.bytes: larger batches are rejected by the broker and Filebeat drops their"
            " events.",
            "output.kafka.bulk_flush_frequency": "group the partition batches bound for one broker into one"
            " request; short, since a 600 KB event fills a partition batch on its own.",
            "queue.mem.events": "the queue counts events, not bytes: 128 x 600 KB is ~77 MB per sidecar"
            " (the default 3200 could hold ~1.9 GB).",
            "queue.mem.flush.timeout": "hand events to the output at once instead of waiting up to 10 s.",
        },
    ),
    FilebeatProfile(
        name="sidecars",
        purpose=(
            "Many low-rate sidecars (a few events/s per pod, ~1 KB) where a p99 of about 2 s is acceptable.",
            "Every pod is its own producer, so the request rate scales with the pod count unless each pod",
            "holds its events for a while.",
        ),
        settings={
            "output.kafka.bulk_max_size": "512",
            "output.kafka.bulk_flush_frequency": "2s",
            "output.kafka.partition.random.group_events": "512",
            "queue.mem.events": "1024",
            "queue.mem.flush.min_events": "512",
            **_QUEUE_IMMEDIATE,
        },
        why={
            "output.kafka.bulk_flush_frequency": "each pod sends at most one request per broker every 2 s.",
            "output.kafka.partition.random.group_events": "a pod's events stay on one partition for 512"
            " events, so each flush goes to one broker.",
            "queue.mem.events": "a small queue keeps each sidecar's memory low.",
            "queue.mem.flush.timeout": "hand events to the output at once; Sarama does the holding.",
        },
    ),
)


def profile(name: str) -> FilebeatProfile:
    for p in PROFILES:
        if p.name == name:
            return p
    raise KeyError(name)
