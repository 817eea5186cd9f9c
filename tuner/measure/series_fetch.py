"""Range data of one run from Prometheus: broker pressure per broker and the run's client series
over time, from the shared PromQL catalog. Stored beside the run record (tuner.store.run_series)
so reports can draw it after the lab is gone.
"""

from __future__ import annotations

from collections.abc import Callable

from tuner.core.errors import Unreachable
from tuner.measure.prometheus import Prometheus, PrometheusError, RangeSeries
from tuner.measure.promql import label_string, promql, rate_window, scoped

# Catalog queries with one series per broker.
BROKER_SERIES = (
    "PRODUCE_REQUESTS_RATE",
    "NETWORK_IDLE",
    "REQUEST_HANDLER_IDLE",
    "REQUEST_QUEUE_SIZE",
    "BYTES_IN_RATE",
    "PRODUCE_TOTAL_P999_MS",
    "BROKER_CPU_CORES",
)
# Catalog queries over the run's own client series (label run = the record's run id).
RUN_SERIES = ("OFFERED_RECORDS_RATE", "ACKED_RECORDS_RATE", "DELIVERY_P99_MS_WORST")
# At most this many points per series: long runs get a coarser step.
MAX_POINTS = 720


def fetch_run_series(
    prom: Prometheus,
    run_id: str,
    start: float,
    end: float,
    scrape_interval_s: float,
    on_error: Callable[[str, Exception], None] | None = None,
) -> tuple[float, dict[str, str], dict[str, list[RangeSeries]]]:
    """(step, queries, name -> series) over [start, end]. A query that fails is reported through
    `on_error` and left out; Unreachable (no Prometheus at all) propagates."""
    # The scrape interval, coarser when the span would exceed MAX_POINTS.
    step = max(scrape_interval_s, (end - start) / MAX_POINTS)
    # Catalog name -> PromQL with a concrete rate window (client ones scoped to the run).
    window = rate_window(scrape_interval_s)
    queries = {name: promql(name, window) for name in BROKER_SERIES}
    queries |= {name: scoped(promql(name, window), f"run={label_string(run_id)}") for name in RUN_SERIES}
    out: dict[str, list[RangeSeries]] = {}
    for name, expr in queries.items():
        try:
            out[name] = prom.range(expr, start, end, step)
        except Unreachable:
            raise
        except PrometheusError as exc:
            if on_error is not None:
                on_error(name, exc)
    return step, queries, out
