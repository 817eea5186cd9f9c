"""Brokers whose scrapes failed in the window: reported unmeasured, with the scrape figures, never
with rates computed from the few samples left (the measurement blanks them, see
tuner.measure.cluster_snapshot.unmeasured)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.model.diagnosis import BrokerDiagnosis
    from tuner.store.snapshot import BrokerSnapshot


def _n(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


def unmeasured_broker(s: BrokerSnapshot, limit: float) -> BrokerDiagnosis:
    """A warning that names the scrape health: no finding about the broker's load can be made."""
    from tuner.model.diagnosis import BrokerDiagnosis
    from tuner.model.finding import Finding

    slowest = "" if s.scrape_duration_max_s is None else f", slowest scrape {s.scrape_duration_max_s:.1f} s"
    coverage = 0.0 if s.scrape_coverage is None else s.scrape_coverage
    finding = Finding(
        kind="no_data",
        severity="warning",
        summary=(
            f"unmeasured: its exporter answered {_n(s.scrape_samples)} of {_n(s.scrape_attempts)} scrapes"
            f" in the window (up {coverage:.2f}{slowest}); no rate is reported from so few samples"
        ),
        advice="compare the exporter's scrape_duration_seconds with the scrape timeout; check `up`",
        evidence={"scrape_coverage": coverage, "scrape_samples": s.scrape_samples or 0.0},
    )
    return BrokerDiagnosis(
        broker=s.broker, status="warning", cause="unmeasured", findings=[finding], small_request_bytes=limit
    )
