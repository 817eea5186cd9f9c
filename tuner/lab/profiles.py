"""Lab profiles: named presets of LabConfig fields, each knob with the reason it is set.

`kbt lab up --profile pressure` starts the lab that reproduces Qunar's pressure regime on a 2-core
machine (docs/benchmarks.md "Pressure regime (P5)"): the broker's *request* capacity is scaled down
until a Qunar-like workload (many producers sending tiny produce requests: Filebeat-like linger 0,
random partition) fills the request queue, and the cost that limits it is time per request that is
not host CPU (a stated service time per produce request, held by the lab's broker plugin), so the
network thread's idle falls because it is blocked on the full queue, as on Qunar's brokers, and not
because the shared machine is busy. An fsync per append was tried first: on a virtual disk whose
fsync takes tens of microseconds it added almost nothing, and the clients' own CPU saturated a
quiet 2-core machine before the broker (docs/benchmarks.md "Pressure regime (P5)").

Flags given beside `--profile` win over the profile's values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Knob:
    value: Any
    why: str


@dataclass(frozen=True)
class LabProfile:
    name: str
    summary: str
    knobs: dict[str, Knob]

    def settings(self) -> dict[str, Any]:
        return {field: knob.value for field, knob in self.knobs.items()}


PRESSURE = LabProfile(
    name="pressure",
    summary="one broker whose request capacity a 2-core machine can saturate (Qunar's regime)",
    knobs={
        "brokers": Knob(
            1,
            "one broker takes every request, so the whole offered request count lands on one"
            " network thread and one handler (a 145-broker cluster's load per broker, scaled down)",
        ),
        "network_threads": Knob(
            1,
            "num.network.threads=1: the thread whose idle Kafka reports is the one the queue blocks"
            " (Qunar's brokers had a few threads for thousands of connections; the ratio is what counts)",
        ),
        "io_threads": Knob(
            1,
            "num.io.threads=1: one request handler drains the request queue, so its per-request time"
            " sets the broker's capacity in requests/s, not in bytes/s",
        ),
        "queued_max_requests": Knob(
            16,
            "queued.max.requests=16 (Kafka's default 500): the queue between network threads and"
            " handlers fills at the lab's request rates within a second; once full, a network thread"
            " blocks in the put and Kafka's idle meter counts that time as busy (Qunar's mechanism)",
        ),
        "produce_service_time_us": Knob(
            2500,
            "each produce request holds the handler 2.5 ms, parked (kbt.lab.ServiceTimeAuthorizer, Kafka's"
            " own authorizer plus the wait): the handler's capacity is ~370 requests/s whatever their"
            " bytes, while the host's cores stay free, as Qunar's CPU, disk and NIC were fine while idle"
            " fell; it stands for the per-request handler work a large cluster pays at its scale",
        ),
        "metrics_sample_window_ms": Knob(
            5000,
            "metrics.sample.window.ms=5000 (Kafka's 30 s): the network idle meter (io-wait ratio) averages"
            " two sample windows, so with Kafka's default a run still read the run before it for up to a"
            " minute; 5 s windows let each run's measured window read its own load",
        ),
        "tiered": Knob(False, "no tiered storage: its copier threads and topics would add unrelated work"),
        "scrape_interval_s": Knob(
            2.0, "2 s scrapes: the request queue is a gauge; short runs need enough samples of it"
        ),
    },
)

CHAOS = LabProfile(
    name="chaos",
    summary="three brokers behind Toxiproxy with tiered storage, for kbt chaos's fault matrix",
    knobs={
        "brokers": Knob(
            3,
            "three brokers: RF 3 with min.insync.replicas 2 survives one broker down, and the matrix"
            " kills, pauses and bounces one (two-down is the negative control)",
        ),
        "via_toxiproxy": Knob(
            True,
            "clients reach each broker through its own Toxiproxy proxy, so latency, bandwidth,"
            " blackhole and reset faults cut the client's path while replication stays direct",
        ),
        "tiered": Knob(True, "tiered storage on, as the lab's default: faults hit the copier too"),
        "scrape_interval_s": Knob(
            1.0, "1 s scrapes: a fault of a few seconds shows in the broker series of its run"
        ),
    },
)

PROFILES: dict[str, LabProfile] = {p.name: p for p in (PRESSURE, CHAOS)}
