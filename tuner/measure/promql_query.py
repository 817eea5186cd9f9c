"""What a named PromQL query is, and Grafana's rate-window placeholder its expressions use.

Its own module so the catalog (tuner.measure.promql) and its breakdown and client views
(tuner.measure.promql_views) both build on it without importing each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass

RATE_INTERVAL = "$__rate_interval"


@dataclass(frozen=True)
class Query:
    name: str
    expr: str
    unit: str
    meaning: str
