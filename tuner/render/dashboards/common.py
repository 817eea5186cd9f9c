"""House defaults of the kbt dashboards: datasource, variables, panel factories, thresholds, JSON.

Every panel target is a named query of the PromQL catalog (tuner.measure.promql), scoped to the
dashboard variables with `promql.scoped`; its unit and description come from the catalog too, so
the dashboards, the measurement code and docs/metrics.md cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from tuner.measure.promql import query, scoped
from tuner.measure.series_names import NETWORK_IDLE_SERIES
from tuner.spec.thresholds import THRESHOLDS as lim

DATASOURCE_UID = "kbt-prometheus"  # the provisioned datasource (dashboards/provisioning/datasources)
DATASOURCE_NAME = "kbt Prometheus"
DS = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")
TAG = "kbt"
GENERATED_KEY = "__generated"
ALL = ".*"  # the value of "All" for every variable: also matches a series without the label

CLUSTER = 'cluster=~"$cluster"'
BROKER = 'broker=~"$broker"'
TOPIC = 'topic=~"$topic"'
RUN = 'run=~"$run"'
BROKER_SCOPE = (CLUSTER, BROKER)
TOPIC_SCOPE = (CLUSTER, BROKER, TOPIC)
CLIENT_SCOPE = (CLUSTER, RUN)

# Catalog units -> Grafana units.
UNITS = {
    "ratio": "percentunit",
    "req/s": "reqps",
    "B/s": "Bps",
    "B": "bytes",
    "ms": "ms",
    "s": "s",
    "records": "short",
    "requests": "short",
    "responses": "short",
    "cores": "short",
    "records/s": "suffix: rec/s",
    "flush/s": "suffix: flush/s",
    "appends/s": "suffix: appends/s",
    "err/s": "suffix: err/s",
    "x": "suffix:×",
}

RED, ORANGE, GREEN = "red", "orange", "green"
Panel = timeseries.Panel | stat.Panel


@dataclass(frozen=True)
class Target:
    """One panel query: a catalog name, its legend and the variables that scope it."""

    name: str
    legend: str = "{{broker}}"
    scope: tuple[str, ...] = BROKER_SCOPE

    @property
    def expr(self) -> str:
        return scoped(query(self.name).expr, ",".join(self.scope))


def _targets(panel: Panel, targets: Sequence[Target]) -> None:
    for i, t in enumerate(targets):
        panel.with_target(
            prometheus.Dataquery()
            .expr(t.expr)
            .legend_format(t.legend)
            .ref_id(chr(ord("A") + i))
            .datasource(DS)
        )


def describe(text: str, targets: Sequence[Target]) -> str:
    """The panel text plus what each query means (from the catalog)."""
    lines = [text.strip()] if text.strip() else []
    return "\n\n".join(lines + [f"{t.name}: {query(t.name).meaning}" for t in targets])


def unit_of(targets: Sequence[Target]) -> str:
    units = {query(t.name).unit for t in targets}
    if len(units) != 1:
        raise ValueError(f"targets with different units need an explicit unit: {sorted(units)}")
    return UNITS[units.pop()]


def below_is_bad(critical: float, warning: float | None = None) -> db.ThresholdsConfig:
    """Red below `critical`, orange below `warning` (idle ratios, bytes per request)."""
    if warning is None:
        return _steps([(None, RED), (critical, GREEN)])
    return _steps([(None, RED), (critical, ORANGE), (warning, GREEN)])


def above_is_bad(warning: float, critical: float | None = None) -> db.ThresholdsConfig:
    """Orange from `warning`, red from `critical` (queues, latencies against an SLO)."""
    steps: list[tuple[float | None, str]] = [(None, GREEN), (warning, ORANGE)]
    if critical is not None:
        steps.append((critical, RED))
    return _steps(steps)


def _steps(steps: list[tuple[float | None, str]]) -> db.ThresholdsConfig:
    return (
        db.ThresholdsConfig()
        .mode(dm.ThresholdsMode.ABSOLUTE)
        .steps([dm.Threshold(value=v, color=c) for v, c in steps])
    )


NETWORK_IDLE_BANDS = below_is_bad(lim.network_idle_critical, lim.network_idle_warning)
HANDLER_IDLE_BANDS = below_is_bad(lim.handler_idle_critical, lim.handler_idle_warning)
REQUEST_QUEUE_BANDS = above_is_bad(
    lim.queued_max_requests * lim.request_queue_near_fraction, lim.queued_max_requests
)


def series(
    title: str,
    targets: Sequence[Target],
    text: str = "",
    *,
    unit: str | None = None,
    thresholds: db.ThresholdsConfig | None = None,
    span: int = 12,
    max_val: float | None = None,
) -> timeseries.Panel:
    """A time series panel with the house defaults: table legend with last/max, dashed threshold lines."""
    panel = (
        timeseries.Panel()
        .title(title)
        .description(describe(text, targets))
        .datasource(DS)
        .unit(unit or unit_of(targets))
        .span(span)
        .height(8)
        .min(0)
        .line_width(1)
        .fill_opacity(10)
        .show_points(cm.VisibilityMode.NEVER)
        .legend(
            cb.VizLegendOptions()
            .display_mode(cm.LegendDisplayMode.TABLE)
            .placement(cm.LegendPlacement.BOTTOM)
            .show_legend(True)
            .calcs(["lastNotNull", "max"])
        )
        .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING))
    )
    if max_val is not None:
        panel.max(max_val)
    if thresholds is not None:
        panel.thresholds(thresholds).thresholds_style(
            cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED)
        )
    _targets(panel, targets)
    return panel


def idle_series(
    title: str, targets: Sequence[Target], bands: db.ThresholdsConfig, text: str = "", *, span: int = 12
) -> timeseries.Panel:
    """An idle ratio (0 to 1) against its bands."""
    return series(title, targets, text, thresholds=bands, max_val=1, span=span)


def objective_series(
    title: str, targets: Sequence[Target], slo_ms: float, objective: str
) -> timeseries.Panel:
    """A latency at span 8 against an objective: the red line at it, orange from half of it."""
    text = f"Red line: the {slo_ms:g} ms {objective} objective."
    return series(title, targets, text, thresholds=above_is_bad(slo_ms / 2, slo_ms), span=8)


def single_stat(
    title: str,
    target: Target,
    text: str = "",
    *,
    thresholds: db.ThresholdsConfig | None = None,
) -> stat.Panel:
    """A stat panel: one value per series, coloured by the thresholds, with a sparkline."""
    panel = (
        stat.Panel()
        .title(title)
        .description(describe(text, [target]))
        .datasource(DS)
        .unit(unit_of([target]))
        .span(6)
        .height(4)
        .graph_mode(cm.BigValueGraphMode.AREA)
        .color_mode(cm.BigValueColorMode.VALUE)
        .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
    )
    panel.thresholds(thresholds or _steps([(None, GREEN)]))
    _targets(panel, [target])
    return panel


# ---- variables -----------------------------------------------------------------------------


def variable(name: str, label: str, definition: str, *, sort: dm.VariableSort) -> db.QueryVariable:
    """A multi-value query variable whose "All" is the regex .* (so a missing label still matches)."""
    return (
        db.QueryVariable(name)
        .label(label)
        .query(definition)
        .datasource(DS)
        .multi(True)
        .include_all(True)
        .all_value(ALL)
        .current(dm.VariableOption(selected=True, text="All", value="$__all"))
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(sort)
    )


CLUSTER_VAR = variable(
    "cluster", "Cluster", "label_values(up, cluster)", sort=dm.VariableSort.ALPHABETICAL_ASC
)
BROKER_VAR = variable(
    "broker",
    "Broker",
    f'label_values({NETWORK_IDLE_SERIES}{{cluster=~"$cluster"}}, broker)',
    sort=dm.VariableSort.NUMERICAL_ASC,
)
TOPIC_VAR = variable(
    "topic",
    "Topic",
    'label_values(kafka_server_bytes_in_total{cluster=~"$cluster",topic!=""}, topic)',
    sort=dm.VariableSort.ALPHABETICAL_ASC,
)
RUN_VAR = variable(
    "run",
    "Run",
    'label_values(kbt_client_records_acked_total{cluster=~"$cluster"}, run)',
    sort=dm.VariableSort.ALPHABETICAL_ASC,
)


# ---- dashboards ----------------------------------------------------------------------------


def new_dashboard(
    uid: str,
    title: str,
    text: str,
    variables: Sequence[db.QueryVariable],
    rows: Mapping[str, Sequence[Panel]],
    tags: Sequence[str] = (),
) -> db.Dashboard:
    """A read-only dashboard with the datasource variable first, linked to the other kbt dashboards;
    each of `rows` (title: panels) a row with its panels under it, in order."""
    dash = (
        db.Dashboard(title)
        .uid(uid)
        .description(f"{text} Generated from tuner/render/dashboards: edit the code, not this dashboard.")
        .tags([TAG, *tags])
        .readonly()
        .time("now-30m", "now")
        .refresh("10s")
        .timezone("browser")
        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .link(
            db.DashboardLink("kbt dashboards")
            .type(dm.DashboardLinkType.DASHBOARDS)
            .tags([TAG])
            .as_dropdown(True)
            .include_vars(True)
            .keep_time(True)
        )
        .with_variable(
            db.DatasourceVariable("datasource")
            .label("Data source")
            .type("prometheus")
            .current(dm.VariableOption(selected=True, text=DATASOURCE_NAME, value=DATASOURCE_UID))
        )
    )
    for v in variables:
        dash.with_variable(v)
    for row, panels in rows.items():
        dash.with_row(db.Row(row))
        for panel in panels:
            dash.with_panel(panel)
    return dash


def to_json(dash: db.Dashboard, source: str) -> str:
    """The dashboard JSON: panel ids numbered in order, a do-not-edit field first."""
    model = dash.build()
    # a collapsed row holds its panels: numbered right after it
    flat = [p for panel in model.panels or [] for p in (panel, *(getattr(panel, "panels", None) or []))]
    for number, panel in enumerate(flat, 1):
        panel.id_val = number
    data = json.loads(json.dumps(model, cls=JSONEncoder))
    marker = f"Code generated by `make generate` from {source}. DO NOT EDIT."
    return json.dumps({GENERATED_KEY: marker, **data}, indent=2) + "\n"
