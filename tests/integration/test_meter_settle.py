"""The lab's Prometheus tells when its brokers' idle meters are past their start-up padding, and
past it their network idle ratios read like an idle cluster's (the sweep and stress runners wait
for this before a measured window; tuner.measure.meter_warmup)."""

from __future__ import annotations

import time

import pytest

from tests.integration.labhelp import wait_for
from tuner.lab import LabState
from tuner.measure.meter_warmup import SETTLE_AFTER_START_S, idle_meters_settled_at
from tuner.measure.prometheus import Prometheus

pytestmark = pytest.mark.integration


def test_settled_time_follows_the_youngest_broker(lab: LabState, prometheus: Prometheus) -> None:
    starts = [s.value for s in prometheus.instant('process_start_time_seconds{job="kafka-broker"}')]
    assert len(starts) == len(lab.brokers), starts
    # Every broker JVM started with this lab (or its last restart), never in the future.
    assert all(lab.started_at - 5 <= t <= time.time() for t in starts), (lab.started_at, starts)
    settled = idle_meters_settled_at(prometheus)
    assert settled == pytest.approx(max(starts) + SETTLE_AFTER_START_S)
    pause = settled - time.time()
    if pause > 0:
        time.sleep(pause)
    ratios = wait_for(
        lambda: [s.value for s in prometheus.instant("kafka_network_processor_avg_idle_ratio")] or None,
        30,
        "network idle ratios",
    )
    assert len(ratios) == len(lab.brokers)
    # A lab between tests is nearly idle: past the padding no broker reads like a saturated one.
    assert all(0.5 < r <= 1.0 for r in ratios), ratios


def test_unreachable_prometheus_gives_no_settled_time() -> None:
    assert idle_meters_settled_at(Prometheus("http://127.0.0.1:9", timeout_s=2)) is None
