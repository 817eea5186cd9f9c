"""The lab's Prometheus tells when its brokers' idle meters are past their start-up padding
(tuner.measure.meter_warmup; the sweep and stress runners wait for it before a measured window).
Checked on the lab's own history: shortly before the settled time the network idle ratio still
reads low (the padding is real), from it on the brokers read like the nearly idle lab they are."""

from __future__ import annotations

import os
import time

import pytest

from tests.integration.labhelp import wait_for
from tuner.lab import LabState
from tuner.measure.meter_warmup import (
    AFTER_FIRST_READING_S,
    SETTLE_AFTER_START_S,
    idle_meters_settled_at,
    idle_meters_settled_by_broker,
)
from tuner.measure.prometheus import Prometheus

pytestmark = pytest.mark.integration

RATIO = 'kafka_network_processor_avg_idle_ratio{job="kafka-broker"}'


def _ratios(prometheus: Prometheus, at: float) -> dict[str, float]:
    return {s.labels["instance"]: s.value for s in prometheus.instant(RATIO, at)}


def test_settled_time_is_past_the_padding(lab: LabState, prometheus: Prometheus) -> None:
    starts = [s.value for s in prometheus.instant('process_start_time_seconds{job="kafka-broker"}')]
    assert len(starts) == len(lab.brokers), starts
    # Every broker JVM started with this lab (or its last restart), never in the future.
    assert all(lab.started_at - 5 <= t <= time.time() for t in starts), (lab.started_at, starts)
    settled = idle_meters_settled_at(prometheus)
    assert settled is not None
    # A full first window after the processors first recorded. The first reading is looked for within
    # the allowance from a JVM's start (a slow start-up on a loaded host may take most of it), so the
    # settled time is at most one window past the allowance.
    assert min(starts) + AFTER_FIRST_READING_S <= settled
    assert settled <= max(starts) + SETTLE_AFTER_START_S + AFTER_FIRST_READING_S
    pause = settled + 5 - time.time()
    if pause > 0:
        time.sleep(pause)
    # The first instant past the settled time at which every broker's ratio is scraped (on a host
    # busy booting two labs, an exporter may answer its first scrape late).
    brokers = len(lab.brokers)
    wait_for(lambda: _all_reported_at(prometheus, settled + 5, brokers), 90, "every broker's idle ratio")
    at = _all_reported_at(prometheus, settled + 5, brokers)
    assert at is not None
    after = _ratios(prometheus, at + 1.0)  # a second past that scrape: the query's time is rounded
    assert len(after) == brokers, after
    # Past the padding no broker of a nearly idle lab reads like a saturated one ...
    assert all(0.5 < r <= 1.0 for r in after.values()), after
    # ... while 12 s before its own settled time each broker's padded meter still read well below
    # that. Each broker against its own: brokers first record at different times, so 12 s before the
    # last one settles an early broker may already read true (0.75 against 0.84 in CI). Only a lab
    # reused through KBT_TEST_LAB_DIR may have started too close to its Prometheus's history to tell.
    # (asked now, every broker has its first reading: asked before it, a broker got the allowance)
    own = idle_meters_settled_by_broker(prometheus)
    assert set(own) == set(after) and max(own.values()) <= settled, (own, settled)
    if os.environ.get("KBT_TEST_LAB_DIR") and settled - 12 <= max(starts) + 5:
        return
    before = {i: r for i, t in own.items() if (r := _ratios(prometheus, t - 12).get(i)) is not None}
    assert before, "no idle ratio before any broker's settled time"
    # 12 s before a full first window the padded ratio is at most 20/30 of the true one: a third
    # below it in theory, asked here by a tenth (on a host busy booting two labs both read low,
    # 0.65 before and 0.78 after). Of one broker at least: a broker whose exporter answered its
    # first scrapes late has its first positive reading late, so its settled time is late too (an
    # upper bound, as the runners need) and 12 s before it the meter may read true already.
    assert any(before[i] <= after[i] - 0.1 for i in before), (before, after, own)


def _all_reported_at(prometheus: Prometheus, since: float, brokers: int) -> float | None:
    """The first scrape time from `since` at which every broker's idle ratio has a sample."""
    now = time.time()
    if now <= since:
        return None
    firsts: dict[str, float] = {}
    for s in prometheus.samples(RATIO, since, now):
        if s.points:
            instance = s.labels.get("instance", "")
            firsts[instance] = min(firsts.get(instance, now), min(t for t, _ in s.points))
    return max(firsts.values()) if len(firsts) >= brokers else None


def test_unreachable_prometheus_gives_no_settled_time() -> None:
    assert idle_meters_settled_at(Prometheus("http://127.0.0.1:9", timeout_s=2)) is None
