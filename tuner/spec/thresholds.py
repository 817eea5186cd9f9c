"""kbt's limits and thresholds, read once from thresholds.yml beside this module."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from ruamel.yaml import YAML

from tuner.spec.base import StrictModel

_FILE = Path(__file__).with_name("thresholds.yml")


class Thresholds(StrictModel):
    network_idle_critical: float = Field(gt=0, lt=1)
    network_idle_warning: float = Field(gt=0, lt=1)
    handler_idle_critical: float = Field(gt=0, lt=1)
    handler_idle_warning: float = Field(gt=0, lt=1)
    queued_max_requests: int = Field(gt=0)
    request_queue_near_fraction: float = Field(gt=0, le=1)
    idle_meter_warmup_s: float = Field(gt=0)
    quiet_requests_per_thread_s: float = Field(ge=0)
    quiet_bytes_per_thread_s: float = Field(ge=0)
    capacity_network_idle_min: float = Field(gt=0, lt=1)
    slo_margin: float = Field(ge=0, lt=1)
    produce_p999_slo_ms: float = Field(gt=0)
    delivery_p99_slo_ms: float = Field(gt=0)
    e2e_p99_slo_ms: float = Field(gt=0)
    tiny_produce_request_bytes: int = Field(gt=0)
    busy_produce_requests_per_s: float = Field(gt=0)
    flush_spike_min_ms: float = Field(gt=0)
    flush_spike_factor: float = Field(gt=1)
    remote_copy_lag_floor_bytes: int = Field(gt=0)
    request_count_tolerance: float = Field(gt=0, lt=1)
    offered_shortfall: float = Field(gt=0, lt=1)
    request_queue_queueing: float = Field(gt=0)
    send_lag_p99_ms: float = Field(gt=0)
    send_lag_p90_intervals: float = Field(gt=0)
    read_back_min_s: float = Field(gt=0)
    read_back_floor_per_s: float = Field(gt=0)
    read_back_stall_s: float = Field(gt=0)
    read_back_max_s: float = Field(gt=0)
    request_queue_full_share: float = Field(gt=0, le=1)
    host_busy_contended: float = Field(gt=0, le=1)
    scrape_coverage_min: float = Field(gt=0, le=1)
    scrape_samples_min: int = Field(ge=2)
    idle_ratio_max: float = Field(gt=1)
    forecast_today_idle_tolerance: float = Field(gt=0, lt=1)
    forecast_fit_r2_min: float = Field(gt=0, lt=1)


def _load() -> Thresholds:
    return Thresholds.model_validate(YAML(typ="safe").load(_FILE.read_text(encoding="utf-8")))


THRESHOLDS = _load()


def too_few_scrapes(samples: float, coverage: float) -> bool:
    """Too few answered scrapes in a window for any rate: fewer than scrape_samples_min, or less than
    scrape_coverage_min of those Prometheus attempted."""
    return samples < THRESHOLDS.scrape_samples_min or coverage < THRESHOLDS.scrape_coverage_min
