"""Read the generated dashboard JSON back: every panel query, with Grafana's variables filled in.

Used by the snapshot (tuner/render/dashboards/snapshot.py) and by the tests that run every panel
query against the lab's Prometheus, so both see exactly what Grafana would send.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tuner.measure.promql import RATE_INTERVAL

_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True)
class PanelQuery:
    dashboard: str
    panel: str
    ref: str
    expr: str  # as in the JSON: with $variables and $__rate_interval
    legend: str
    unit: str
    thresholds: tuple[tuple[float, str], ...]  # (value, colour) steps above the base

    @property
    def where(self) -> str:
        return f"{self.dashboard} / {self.panel} [{self.ref}]"


def panels(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every non-row panel, including those inside collapsed rows."""
    return [
        p
        for panel in data.get("panels", [])
        for p in (panel.get("panels") or [] if panel.get("type") == "row" else [panel])
    ]


def panel_queries(data: dict[str, Any]) -> list[PanelQuery]:
    out = []
    for panel in panels(data):
        defaults = panel.get("fieldConfig", {}).get("defaults", {})
        steps = defaults.get("thresholds", {}).get("steps", [])
        thresholds = tuple((float(s["value"]), s["color"]) for s in steps if s.get("value") is not None)
        for target in panel.get("targets", []):
            out.append(
                PanelQuery(
                    data["title"],
                    panel["title"],
                    target.get("refId", ""),
                    target["expr"],
                    target.get("legendFormat", ""),
                    defaults.get("unit", ""),
                    thresholds,
                )
            )
    return out


def query_variables(data: dict[str, Any]) -> dict[str, str]:
    """{name: definition} of the dashboard's query variables (the datasource variable is left out)."""
    return {
        v["name"]: v["query"] for v in data.get("templating", {}).get("list", []) if v.get("type") == "query"
    }


def fill(expr: str, values: dict[str, str], rate_interval: str) -> str:
    """`expr` as Grafana sends it: $__rate_interval and every $var / ${var} replaced.

    `values` holds the regex a variable expands to: ".*" for All, "1|2" for two brokers."""
    expr = expr.replace(RATE_INTERVAL, rate_interval)

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in values:
            raise KeyError(f"no value for variable ${name} in {expr}")
        return values[name]

    return _VAR.sub(sub, expr)


def legend(template: str, labels: dict[str, str]) -> str:
    """Grafana's legend format: {{label}} replaced by the series' label value."""
    text = _LEGEND.sub(lambda m: labels.get(m.group(1), ""), template).strip()
    return text or ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "value"
