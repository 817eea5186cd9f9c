"""When a freshly started broker's idle ratios can be trusted.

NetworkProcessorAvgIdlePercent averages the network processors' `io-wait-ratio`, a Kafka `Rate`
stat over `metrics.num.samples` (2) windows of `metrics.sample.window.ms` (30 s). While a stat is
younger than one full window, Kafka divides by the padded span rather than the time elapsed, so the
ratio climbs from 0 and only reads true about 32 s after the processors start. Measured on a
3-broker lab at 100 msgs/s, 1 s scrapes: every broker read 0.00 at 10 s after the JVM started,
0.20 at 20 s, 0.44 at 40 s, then jumped to 0.89-0.93 at 40-42 s and stayed there; a sweep started
right after `kbt lab up` recorded a network idle ratio of 0.22 for a load that reads 0.93 a minute
later. The processors start some seconds after the JVM (10 s on a quiet 2-core host, more on a busy
one), hence the margin over the 32 s.
"""

from __future__ import annotations

from tuner.core.errors import Unreachable
from tuner.measure.catalog import BROKER_JOB
from tuner.measure.prometheus import Prometheus, PrometheusError

FIRST_WINDOW_S = 32.0  # one 30 s sample window and a scrape after the processors start
STARTUP_MARGIN_S = 28.0  # JVM start to network processors up, on a busy host
SETTLE_AFTER_START_S = FIRST_WINDOW_S + STARTUP_MARGIN_S


def idle_meters_settled_at(prometheus: Prometheus) -> float | None:
    """Epoch seconds from which every scraped broker's idle ratios are past their start-up
    padding; None when Prometheus has no broker process start time (or cannot be asked)."""
    try:
        youngest = prometheus.value(f'max(process_start_time_seconds{{job="{BROKER_JOB}"}})')
    except (PrometheusError, Unreachable):  # the run's own measurement reports it
        return None
    return None if youngest is None else youngest + SETTLE_AFTER_START_S
