"""The thresholds `kbt diagnose` classifies with (YAML via `--thresholds FILE`, read by
tuner.runner.diagnose_inputs; unknown keys fail).

    # diagnose-thresholds.yaml: only the keys you change
    warning_idle: 0.4
    min_requests_per_thread_s: 100

The rule (docs/diagnose.md tells it with examples):
- critical: a broker's network or request-handler idle ratio, averaged over the window, is below
  `critical_idle` (0.3: Qunar's bottleneck line).
- warning: an idle ratio below `warning_idle`, or any finding below.
- small requests: the average produce request (bytes in / produce requests) is smaller than
  `small_request_bytes` AND the broker takes at least `min_requests_per_thread_s` produce requests/s
  per network thread (10: below that no request size costs a thread much). Unset,
  `small_request_bytes` is the cost model's break-even request size when a model is given (the size
  at which a request's fixed cost equals the cost of its bytes, a/b, within
  [small_request_bytes_floor, small_request_bytes_cap] = [1 KB, 16 KB]; below it a broker spends
  more thread time per request than per byte), else `small_request_bytes_default` (4 KB: effective
  batches should reach 4-16 KB). "Batching can cut requests ~Nx" is `target_request_bytes` (16 KB)
  over the average request.
- disk flush: log flush p99 >= `flush_p99_ms`.
- handler threads: handler idle below `warning_idle` or mean request queue >= `request_queue`.
- CPU or GC pauses: otherwise, produce request-queue time p99 (averaged over the window) >=
  `request_queue_p99_ms`: requests wait for a handler although handlers are idle.
- request queue full: the mean request queue is at least `request_queue_near_fraction` (0.8) of
  `queued_max_requests` (set it to the brokers' `queued.max.requests`; Kafka's default 500). A full
  queue blocks the network threads, and Kafka's idle meter counts that blocked time as busy: the
  handlers cannot keep up with the produce request count. It leads the findings, critical when an
  idle ratio is below `critical_idle`.
- meter warm-up: a broker whose JVM started less than `idle_meter_warmup_s` before the window
  opened has its network idle left out (Kafka's idle meter reads low while it starts).
- low idle without the load to explain it: network idle below `warning_idle` while each network
  thread takes fewer than `quiet_requests_per_thread_s` produce requests/s and moves fewer than
  `quiet_bytes_per_thread_s` bytes/s (in + out) and the request queue is not full: a warning (a host
  busy with other work or GC pauses are the usual causes), never critical and never "busy moving
  bytes".
- large fetches: while the network threads are below `warning_idle`, consumer bytes per fetch
  request >= `large_fetch_bytes` and bytes out >= `fetch_out_in_ratio` x bytes in.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from tuner.spec.base import StrictModel
from tuner.spec.duration import MAX_SPEC_MS, MAX_SPEC_SECONDS
from tuner.spec.limits import (
    MAX_BYTES_PER_S,
    MAX_KAFKA_BYTES,
    MAX_QUEUE_CAP,
    MAX_RATE_PER_S,
    MAX_RATIO,
    MAX_THREADS,
)
from tuner.spec.thresholds import THRESHOLDS

_Idle = Annotated[float, Field(gt=0, lt=1)]
_Bytes = Annotated[float, Field(gt=0, le=MAX_KAFKA_BYTES)]
_Ms = Annotated[float, Field(gt=0, le=MAX_SPEC_MS)]
_PerThread = Annotated[float, Field(ge=0, le=MAX_RATE_PER_S)]  # produce requests/s per network thread


class DiagnoseThresholds(StrictModel):
    critical_idle: _Idle = Field(
        THRESHOLDS.network_idle_critical, description="idle ratio below which a broker is critical"
    )
    warning_idle: _Idle = Field(
        THRESHOLDS.network_idle_warning, description="idle ratio below which a broker warns"
    )
    small_request_bytes: _Bytes | None = Field(
        None, description="average produce request size below which requests count as small"
    )
    small_request_bytes_default: _Bytes = Field(4096, description="the size limit without a cost model")
    small_request_bytes_floor: _Bytes = Field(1024, description="lowest size limit a cost model may set")
    small_request_bytes_cap: _Bytes = Field(16384, description="highest size limit a cost model may set")
    target_request_bytes: _Bytes = Field(
        16384, description="request size batching should reach (the 'cut requests ~Nx' estimate)"
    )
    min_requests_per_thread_s: _PerThread = Field(
        10, description="produce requests/s per network thread below which request size does not matter"
    )
    flush_p99_ms: _Ms = Field(200, description="log flush p99 that counts as a slow disk")
    request_queue: float = Field(
        10, gt=0, le=MAX_QUEUE_CAP, description="mean request queue that says handlers are short"
    )
    request_queue_p99_ms: _Ms = Field(
        50, description="request-queue time p99 (ms) of produce requests that is too long"
    )
    large_fetch_bytes: _Bytes = Field(
        1 << 20, description="consumer bytes per fetch request that count as large"
    )
    fetch_out_in_ratio: float = Field(
        2.0, gt=0, le=MAX_RATIO, description="bytes out / bytes in above which fetches dominate"
    )
    queued_max_requests: int = Field(
        THRESHOLDS.queued_max_requests,
        ge=1,
        le=MAX_QUEUE_CAP,
        description="the brokers' queued.max.requests (request queue cap)",
    )
    request_queue_near_fraction: float = Field(
        THRESHOLDS.request_queue_near_fraction,
        gt=0,
        le=1,
        description="mean request queue over queued_max_requests that counts as full",
    )
    idle_meter_warmup_s: float = Field(
        THRESHOLDS.idle_meter_warmup_s,
        ge=0,
        le=MAX_SPEC_SECONDS,
        description="seconds after a broker's start its network idle is not trusted",
    )
    quiet_requests_per_thread_s: _PerThread = Field(
        THRESHOLDS.quiet_requests_per_thread_s,
        description="produce requests/s per network thread below which traffic cannot explain a low idle",
    )
    quiet_bytes_per_thread_s: float = Field(
        THRESHOLDS.quiet_bytes_per_thread_s,
        ge=0,
        le=MAX_BYTES_PER_S,
        description="bytes/s (in + out) per network thread below which traffic cannot explain a low idle",
    )
    default_network_threads: int = Field(
        3, ge=1, le=MAX_THREADS, description="network threads assumed when the series is absent"
    )

    @model_validator(mode="after")
    def _ordered(self) -> DiagnoseThresholds:
        if self.warning_idle < self.critical_idle:
            raise ValueError("warning_idle must be >= critical_idle")
        if self.small_request_bytes_cap < self.small_request_bytes_floor:
            raise ValueError("small_request_bytes_cap must be >= small_request_bytes_floor")
        return self
