"""Filebeat profiles kbt publishes: what each is for, its settings, and what it measured.

`kbt render filebeat` turns these into `filebeat-profiles/*.yml` (Filebeat config fragments) and
`loadtests/profiles/filebeat-*.yaml` (the same settings as `client: filebeat` sweep profiles, so the
published file is exactly what was measured). Settings are a filebeat.yml fragment (the profile's
typed `filebeat:` section); anything not listed keeps Filebeat's default. A profile's `effect`
holds the figures of one side-by-side sweep (the command is in it; the same figures are in
docs/benchmarks.md, section "Real Filebeat" (or "Filebeat engine" for emulation figures), and a
unit test keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tuner.spec.clients import ClientProfile, profile_of
from tuner.spec.clients.filebeat import config_of
from tuner.spec.filebeat import FilebeatConfig


@dataclass(frozen=True)
class Figures:
    """One run of a side-by-side sweep: client (Sarama) produce requests/s, p99 delivery latency,
    lost events, and the brokers' mean NetworkProcessorAvgIdlePercent."""

    label: str
    requests_per_s: float
    p99_ms: float
    lost: int
    network_idle: float | None = None

    def text(self) -> str:
        idle = "" if self.network_idle is None else f", network idle {self.network_idle:.3f}"
        # milliseconds as people read them: "503 ms", "11.3 s"
        p99 = f"{self.p99_ms / 1000:.1f} s" if self.p99_ms >= 1000 else f"{self.p99_ms:.0f} ms"
        return f"{self.requests_per_s:.1f} produce requests/s, p99 {p99}, {self.lost} lost{idle}"


@dataclass(frozen=True)
class Effect:
    """A profile measured against baselines at the same offered load, in one sweep."""

    command: str  # reproduces the figures, e.g. "kbt sweep loadtests/filebeat-small-logs.yaml"
    workload: str  # what was offered, in a few words
    profile: Figures
    baselines: tuple[Figures, ...] = ()
    # The real Filebeat build that ran the pods; None: the Sarama emulation (figures from before
    # real Filebeat was in the loop, to be measured again).
    filebeat: str | None = None

    @property
    def measured_on(self) -> str:
        return "the Sarama emulation" if self.filebeat is None else f"real Filebeat {self.filebeat}"

    def lines(self) -> tuple[str, ...]:
        out = [f"{self.profile.label}: {self.profile.text()}"]
        for b in self.baselines:
            ratio = b.requests_per_s / self.profile.requests_per_s if self.profile.requests_per_s else 0.0
            out.append(f"{b.label}: {b.text()} ({ratio:.1f}x the requests)")
        return tuple(out)


@dataclass(frozen=True)
class FilebeatProfile:
    name: str
    purpose: tuple[str, ...]  # comment lines: what the profile is for
    settings: dict[str, Any] = field(default_factory=dict)  # a filebeat.yml fragment
    why: dict[str, str] = field(default_factory=dict)  # option path -> comment above it
    effect: Effect | None = None  # the measured effect (None: not measured)
    published: bool = True  # also written to filebeat-profiles/ (baselines only to loadtests/)
    # How the advice reads on each Filebeat version line (tuner/spec/filebeat_lines.py): where it
    # differs, and which line the figures were measured on.
    by_version: tuple[str, ...] = ()

    @property
    def profile(self) -> ClientProfile:
        return profile_of(
            {
                "name": f"filebeat-{self.name}",
                "description": self.purpose[0],
                "client": "filebeat",
                "filebeat": self.settings,
            }
        )

    @property
    def config(self) -> FilebeatConfig:
        return config_of(self.profile)


_SMALL_LOGS = "24 pods x 40 events/s of 1.6 KB, 3 brokers"
REAL_BUILD = "7.17.29"  # the real Filebeat build the re-measured profiles ran on

_QUEUE_IMMEDIATE = {"flush.timeout": "0s"}
# small-logs and sidecars: a queue that hands over at once, flush.min_events = bulk_max_size, input options
_SAME_ON_7_AND_9 = (
    "Same advice on 7.17 and on 8.13+/9.x: with flush.timeout 0s both hand events over at once,",
    "and flush.min_events = bulk_max_size caps the batch on both. 9.x has no log input: set the",
    "input options on a filestream input (backoff.init / backoff.max). Measured on 7.17.29 only.",
)

PROFILES: tuple[FilebeatProfile, ...] = (
    FilebeatProfile(
        name="default",
        purpose=(
            "Filebeat's shipped output.kafka and queue.mem defaults (8.x), for comparison.",
            "At tens of events/s per pod the queue waits up to flush.timeout (10 s) to fill a batch,",
            "so few requests reach the brokers but events arrive seconds late.",
        ),
        # Stated, not left unset: a 7.17 build's own queue defaults are 4096 / 2048 / 1s.
        settings={"queue.mem": {"events": 3200, "flush.min_events": 1600, "flush.timeout": "10s"}},
        by_version=(
            "These are the queue values Filebeat 8.13+ and 9.x ship (7.17 ships 4096 / 2048 / 1s). On 9.x",
            "the queue hands over a batch once bulk_max_size events (capped at flush.min_events 1600) wait;",
            "7.17 waits for its flush.min_events buffer: with these values both wait for 1600 events, so the",
            "7.17.29 run below has 9.x's queue wait; 9.x's own Kafka client is not measured (no 9.x build:",
            "docs/benchmarks.md, 'Real Filebeat').",
            "Latency trap on 9.x as shipped: a pod writing under 160 events/s holds each batch the full",
            "10 s flush.timeout; set queue.mem.flush.timeout: 0s and let bulk_flush_frequency batch.",
        ),
        effect=Effect(
            command="kbt sweep loadtests/filebeat-small-logs.yaml",
            workload=_SMALL_LOGS,
            profile=Figures("this profile", 21.8, 10928.1, 0, 0.994),
            baselines=(Figures("kbt small-logs.yml", 48.2, 597.0, 0, 0.990),),
            filebeat=REAL_BUILD,
        ),
    ),
    FilebeatProfile(
        name="7x-default",
        purpose=(
            "Filebeat 7.x queue defaults (events 4096, flush.min_events 2048, flush.timeout 1s) with the",
            "output.kafka defaults: the setup of Qunar's sidecars. Sarama flushes each event as soon as it",
            "arrives (bulk_flush_frequency 0), so requests carry one or two events.",
        ),
        settings={
            "queue.mem": {"events": 4096, "flush.min_events": 2048, "flush.timeout": "1s"},
        },
        published=False,
    ),
    FilebeatProfile(
        name="low-latency",
        purpose=(
            "output.kafka defaults with a queue that hands events over at once (flush.timeout 0s):",
            "the usual low-latency setup; one produce request per event at low rates.",
        ),
        settings={"queue.mem": dict(_QUEUE_IMMEDIATE)},
        published=False,
    ),
    FilebeatProfile(
        name="small-logs",
        purpose=(
            "Sidecars shipping small log lines (~1-2 KB) at a moderate rate (tens of events/s per pod)",
            "with a p99 delivery budget of about 1 s.",
        ),
        settings={
            "output.kafka": {
                "bulk_max_size": 2048,
                "bulk_flush_frequency": "500ms",
                "partition.random.group_events": 2048,
            },
            "queue.mem": {"events": 4096, "flush.min_events": 2048, **_QUEUE_IMMEDIATE},
            "input": {"backoff": "100ms", "max_backoff": "200ms"},
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
        by_version=_SAME_ON_7_AND_9,
        effect=Effect(
            command="kbt sweep loadtests/filebeat-small-logs.yaml",
            workload=_SMALL_LOGS,
            profile=Figures("this profile", 48.2, 597.0, 0, 0.990),
            baselines=(
                Figures("Filebeat 7.17 as it ships (Qunar's sidecars)", 152.3, 1993.7, 0, 0.990),
                Figures("low-latency queue (flush.timeout 0s)", 172.9, 992.3, 0, 0.984),
                Figures("8.x queue defaults (3200 / 1600 / 10s)", 21.8, 10928.1, 0, 0.994),
            ),
            filebeat=REAL_BUILD,
        ),
    ),
    FilebeatProfile(
        name="large-events",
        purpose=(
            "Events of hundreds of KB (multi-line dumps, large JSON documents) at a low rate.",
            "Batching by count barely helps (one event nearly fills a partition batch); the queue size",
            "bounds sidecar memory and max_message_bytes decides which events are dropped.",
        ),
        settings={
            "output.kafka": {
                "bulk_max_size": 64,
                "bulk_flush_frequency": "100ms",
                "max_message_bytes": 1000000,
            },
            "queue.mem": {"events": 128, "flush.min_events": 64, **_QUEUE_IMMEDIATE},
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
        by_version=(
            "Same advice on 7.17 and on 8.13+/9.x: with flush.timeout 0s both hand events over at once.",
            "Without it, 9.x's shipped queue (3200 events, 10 s) would hold up to ~1.9 GB of these events.",
            "Measured on 7.17.29 only.",
        ),
        effect=Effect(
            command="kbt sweep loadtests/filebeat-large-events.yaml",
            workload="4 pods x 1 event/s of 600 KB, 3 brokers",
            profile=Figures("this profile", 3.9, 1031.2, 0, 0.998),
            baselines=(
                Figures("Filebeat 7.17 as it ships", 4.1, 1957.9, 0, 0.998),
                Figures("8.x queue defaults (3200 / 1600 / 10s)", 2.7, 10944.5, 0, 0.997),
            ),
            filebeat=REAL_BUILD,
        ),
    ),
    FilebeatProfile(
        name="sidecars",
        purpose=(
            "Many low-rate sidecars (a few events/s per pod, ~1 KB) where a p99 of about 2 s is acceptable.",
            "Every pod is its own producer, so the request rate scales with the pod count unless each pod",
            "holds its events for a while.",
        ),
        settings={
            "output.kafka": {
                "bulk_max_size": 512,
                "bulk_flush_frequency": "2s",
                "partition.random.group_events": 512,
            },
            "queue.mem": {"events": 1024, "flush.min_events": 512, **_QUEUE_IMMEDIATE},
            "input": {"backoff": "250ms", "max_backoff": "500ms"},
        },
        why={
            "output.kafka.bulk_flush_frequency": "each pod sends at most one request per broker every 2 s.",
            "output.kafka.partition.random.group_events": "a pod's events stay on one partition for 512"
            " events, so each flush goes to one broker.",
            "queue.mem.events": "a small queue keeps each sidecar's memory low.",
            "queue.mem.flush.timeout": "hand events to the output at once; Sarama does the holding.",
        },
        by_version=_SAME_ON_7_AND_9,
        effect=Effect(
            command="kbt sweep loadtests/filebeat-sidecars.yaml",
            workload="96 pods x 2 events/s of ~1 KB, 3 brokers",
            profile=Figures("this profile", 47.4, 2482.2, 0, 0.991),
            baselines=(
                Figures("Filebeat 7.17 as it ships", 184.6, 1989.6, 0, 0.992),
                Figures("low-latency queue (flush.timeout 0s)", 189.5, 986.6, 0, 0.988),
                Figures("8.x queue defaults (3200 / 1600 / 10s)", 54.4, 10911.7, 0, 0.996),
            ),
            filebeat=REAL_BUILD,
        ),
    ),
)
