"""When a freshly started broker's idle ratios can be trusted.

NetworkProcessorAvgIdlePercent averages the network processors' `io-wait-ratio`, a Kafka `Rate`
stat over `metrics.num.samples` (2) windows of `metrics.sample.window.ms` (30 s). Until the stat's
first sample window is full, Kafka divides by the padded span rather than the time elapsed, so the
ratio climbs from 0 and only reads true 30 s after the processors first record. Measured on a
3-broker lab at 100 msgs/s, 1 s scrapes: 0.00 at 10 s after the JVM started, 0.01 at 12 s, 0.20 at
20 s, 0.44 at 40 s, then a jump to 0.89-0.93 at 40-42 s, where it stayed; a sweep started right
after `kbt lab up` recorded a network idle ratio of 0.22 for a load that reads 0.93 a minute later.

A positive reading needs a recorded sample, so the first scrape with a ratio above 0 is no earlier
than the start of that first window: 30 s (and a scrape) after it, the padding is over. A broker
with no positive reading yet gets a fixed allowance from its JVM start instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tuner.core.errors import Unreachable
from tuner.measure.prometheus import Prometheus, PrometheusError
from tuner.measure.series_names import BROKER_JOB, BROKER_START_SERIES, NETWORK_IDLE_SERIES
from tuner.spec.thresholds import THRESHOLDS

FIRST_WINDOW_S = 30.0  # metrics.sample.window.ms
AFTER_FIRST_READING_S = FIRST_WINDOW_S + 2.0  # and the scrape that shows it
# Without a reading: JVM start to processors up (~10 s) on a busy host, plus the window.
SETTLE_AFTER_START_S = THRESHOLDS.idle_meter_warmup_s


def idle_meters_settled_at(prometheus: Prometheus, now: float | None = None) -> float | None:
    """Epoch seconds from which every scraped broker's idle ratios are past their start-up
    padding; None when Prometheus has no broker process start time (or cannot be asked)."""
    by_broker = idle_meters_settled_by_broker(prometheus, now)
    return max(by_broker.values()) if by_broker else None


def idle_meters_settled_by_broker(prometheus: Prometheus, now: float | None = None) -> dict[str, float]:
    """Per broker instance, the epoch seconds from which its idle ratios are past their start-up
    padding (brokers start and first record at different times); empty when Prometheus has no
    broker process start time (or cannot be asked)."""
    now = time.time() if now is None else now
    try:
        starts = {
            s.labels.get("instance", ""): s.value
            for s in prometheus.instant(f'{BROKER_START_SERIES}{{job="{BROKER_JOB}"}}', now)
        }
        if not starts:
            return {}
        first = _first_positive(prometheus, starts, now)
    except (PrometheusError, Unreachable):  # the run's own measurement reports it
        return {}
    return {
        i: first[i] + AFTER_FIRST_READING_S if i in first else t + SETTLE_AFTER_START_S
        for i, t in starts.items()
    }


def _first_positive(prometheus: Prometheus, started: dict[str, float], now: float) -> dict[str, float]:
    """Per broker instance, the first scrape within `SETTLE_AFTER_START_S` of its JVM start with an
    idle ratio above 0 (one bounded range query, however long the brokers have run)."""
    found: dict[str, float] = {}
    since = min(started.values())
    until = min(now, max(started.values()) + SETTLE_AFTER_START_S)
    if until <= since:
        return found
    for series in prometheus.samples(f'{NETWORK_IDLE_SERIES}{{job="{BROKER_JOB}"}}', since, until):
        instance = series.labels.get("instance", "")
        if instance not in started:
            continue
        positive = [t for t, v in series.points if v > 0 and t > started[instance]]
        if positive:
            found[instance] = min(positive)
    return found


def wait_until_settled(settled: float | None, window_in_s: float, say: Callable[[str], None]) -> float:
    """Sleep until a measured window that opens `window_in_s` from now opens at `settled` or later
    (`say` tells why first); returns the seconds slept (0 when settled or unknown)."""
    wait = 0.0 if settled is None else settled - window_in_s - time.time()
    if wait <= 0:
        return 0.0
    say(f"waiting {wait:.0f} s for the brokers' idle meters to settle")
    time.sleep(wait)
    return wait
