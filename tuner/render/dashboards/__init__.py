"""Grafana dashboards as code (grafana-foundation-sdk), their provisioning, and the Prometheus rules.

One module per dashboard (broker_pressure, client_batching, tiered_storage, stress_test), house
defaults in common, limits shared with the alert rules in tuner/spec/thresholds.yml. `render_all()` gives
{repo-relative path: content} to tuner/cli/generate.py (`make generate` / `make check-generated`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from grafana_foundation_sdk.builders import dashboard as db

from tuner.render.dashboards import broker_pressure, client_batching, stress_test, tiered_storage
from tuner.render.dashboards.alert_rules import RULES_PATH, rules_yaml
from tuner.render.dashboards.common import to_json
from tuner.render.dashboards.provisioning import PROVISIONING

DASHBOARD_DIR = "dashboards"


@dataclass(frozen=True)
class Board:
    uid: str
    title: str
    build: Callable[[], db.Dashboard]
    module: str  # repo-relative source, named in the JSON's do-not-edit field

    @property
    def path(self) -> str:
        return f"{DASHBOARD_DIR}/{self.uid.removeprefix('kbt-')}.json"

    def json(self) -> str:
        return to_json(self.build(), self.module)


# A dashboard module: UID, TITLE and dashboard() -> the builder.
BOARDS: tuple[Board, ...] = tuple(
    Board(m.UID, m.TITLE, m.dashboard, f"tuner/render/dashboards/{m.__name__.rsplit('.', 1)[-1]}.py")
    for m in (broker_pressure, client_batching, tiered_storage, stress_test)
)


def render_all() -> dict[str, str]:
    out = {b.path: b.json() for b in BOARDS}
    out.update(PROVISIONING)
    out[RULES_PATH] = rules_yaml()
    return out
