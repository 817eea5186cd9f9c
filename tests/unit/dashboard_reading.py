"""Test-side readers of the generated dashboard JSON: which variables a query uses, a
`label_values()` variable as PromQL, the dashboard without kbt's do-not-edit marker."""

from __future__ import annotations

import re
from typing import Any

from tuner.measure.promql import RATE_INTERVAL
from tuner.render.dashboards.common import GENERATED_KEY
from tuner.render.dashboards.targets import fill

_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_LABEL_VALUES = re.compile(r"^label_values\((.*),\s*(\w+)\)$")


def used_variables(expr: str) -> set[str]:
    return {a or b for a, b in _VAR.findall(expr)} - {RATE_INTERVAL.lstrip("$")}


def variable_promql(definition: str, values: dict[str, str]) -> tuple[str, str]:
    """A `label_values(selector, label)` variable as PromQL: (expression, label)."""
    m = _LABEL_VALUES.match(definition.strip())
    if not m:
        raise ValueError(f"not a label_values() variable: {definition}")
    selector, label = m.group(1).strip(), m.group(2)
    return f"group by ({label})({fill(selector, values, '1m')})", label


def without_marker(data: dict[str, Any]) -> dict[str, Any]:
    """The dashboard minus the do-not-edit field (which is not part of Grafana's model)."""
    return {k: v for k, v in data.items() if k != GENERATED_KEY}
