"""The generated Grafana dashboards and provisioning: foundation-sdk round trip, current schema,
catalog-only queries, variables, units, descriptions, thresholds, provisioning consistency."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import prometheus as prom_model
from grafana_foundation_sdk.models import stat as stat_model
from grafana_foundation_sdk.models import timeseries as ts_model
from ruamel.yaml import YAML

from tests.unit.dashboard_reading import used_variables, without_marker
from tuner.core.paths import repo_root
from tuner.measure.promql import ALL_QUERIES
from tuner.render.dashboards import BOARDS, render_all
from tuner.render.dashboards.common import DATASOURCE_UID, GENERATED_KEY
from tuner.render.dashboards.provisioning import DATASOURCE_PATH, PROVIDER_PATH
from tuner.render.dashboards.targets import (
    fill,
    panel_queries,
    panels,
    query_variables,
)
from tuner.spec.thresholds import THRESHOLDS as limits

ROOT = repo_root()
RENDERED = render_all()
DASHBOARDS = {b.uid: json.loads(RENDERED[b.path]) for b in BOARDS}
_SCOPE = re.compile(r'(cluster|broker|topic|run)=~"\$\1",?')


@pytest.fixture(scope="module", autouse=True)
def _sdk_plugins() -> None:
    plugins.register_default_plugins()  # so panels and targets decode into their typed models


def _all_panels() -> list[tuple[str, dict[str, Any]]]:
    return [(uid, p) for uid, d in DASHBOARDS.items() for p in panels(d)]


def test_the_four_dashboards_exist_and_are_committed() -> None:
    assert {b.path for b in BOARDS} == {
        "dashboards/broker-pressure.json",
        "dashboards/client-batching.json",
        "dashboards/tiered-storage.json",
        "dashboards/stress-test.json",
    }
    for rel, content in RENDERED.items():
        path = ROOT / rel
        assert path.is_file() and path.read_text() == content, f"{rel} is stale: run make generate"


@pytest.mark.parametrize("uid", sorted(DASHBOARDS))
def test_round_trip_through_the_sdk_types(uid: str) -> None:
    data = without_marker(DASHBOARDS[uid])
    model = dm.Dashboard.from_json(data)
    assert json.loads(json.dumps(model, cls=JSONEncoder)) == data
    for panel in model.panels or []:
        if isinstance(panel, dm.RowPanel):
            continue
        expected = {"timeseries": ts_model.Options, "stat": stat_model.Options}[panel.type_val]
        assert isinstance(panel.options, expected), panel.title
        assert panel.targets and all(isinstance(t, prom_model.Dataquery) for t in panel.targets)


@pytest.mark.parametrize("uid", sorted(DASHBOARDS))
def test_schema_version_is_the_sdks_current_one(uid: str) -> None:
    current = dm.Dashboard().schema_version
    assert current >= 41  # Grafana 11.6+: a '>=' pin once picked the Grafana 10.1 SDK (36)
    assert DASHBOARDS[uid]["schemaVersion"] == current


@pytest.mark.parametrize("uid", sorted(DASHBOARDS))
def test_do_not_edit_marker_names_the_source(uid: str) -> None:
    data = DASHBOARDS[uid]
    assert next(iter(data)) == GENERATED_KEY
    source = re.search(r"from (\S+\.py)", data[GENERATED_KEY])
    assert source and (ROOT / source.group(1)).is_file() and "DO NOT EDIT" in data[GENERATED_KEY]
    assert data["editable"] is False and data["uid"] == uid


def test_every_target_is_a_catalog_query_scoped_to_dashboard_variables() -> None:
    catalog = {q.expr for q in ALL_QUERIES}
    for uid, data in DASHBOARDS.items():
        defined = set(query_variables(data))
        for q in panel_queries(data):
            bare = _SCOPE.sub("", q.expr).replace("{}", "").replace(",}", "}")
            assert bare in catalog, f"{q.where}: not a catalog query: {q.expr}"
            assert used_variables(q.expr) <= defined, f"{q.where}: undefined variable"
            assert "$cluster" in q.expr, f"{q.where}: not scoped to the cluster"
        for name, definition in query_variables(data).items():
            assert used_variables(definition) <= defined - {name}, (uid, name)


def test_every_panel_has_title_description_unit_and_datasource() -> None:
    for uid, panel in _all_panels():
        where = f"{uid} / {panel.get('title')}"
        assert panel.get("title") and len(panel.get("description", "")) > 20, where
        assert panel["fieldConfig"]["defaults"].get("unit"), where
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, where
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"]), where
        assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"]), where


def test_panel_ids_are_unique_and_grid_is_24_wide() -> None:
    for uid, data in DASHBOARDS.items():
        ids = [p["id"] for p in data["panels"]]
        assert len(ids) == len(set(ids)), uid
        for p in data["panels"]:
            pos = p["gridPos"]
            assert pos["x"] + pos["w"] <= 24, (uid, p["title"])


def test_variables_cluster_broker_topic_and_all_means_any() -> None:
    assert {"cluster", "broker", "topic"} <= set(query_variables(DASHBOARDS["kbt-broker-pressure"]))
    assert {"cluster", "broker", "topic"} <= set(query_variables(DASHBOARDS["kbt-tiered-storage"]))
    assert {"cluster", "run"} <= set(query_variables(DASHBOARDS["kbt-client-batching"]))
    for data in DASHBOARDS.values():
        variables = data["templating"]["list"]
        assert variables[0]["type"] == "datasource" and variables[0]["current"]["value"] == DATASOURCE_UID
        for v in variables[1:]:
            assert v["includeAll"] and v["allValue"] == ".*" and v["multi"], v["name"]


def test_fill_substitutes_like_grafana() -> None:
    expr = 'sum by (broker)(rate(x{cluster=~"$cluster",broker=~"${broker}"}[$__rate_interval]))'
    assert fill(expr, {"cluster": ".*", "broker": "1|2"}, "20s") == (
        'sum by (broker)(rate(x{cluster=~".*",broker=~"1|2"}[20s]))'
    )
    with pytest.raises(KeyError, match="broker"):
        fill(expr, {"cluster": ".*"}, "20s")


def _thresholds(uid: str, title: str) -> list[tuple[float, str]]:
    for q in panel_queries(DASHBOARDS[uid]):
        if q.panel == title:
            return list(q.thresholds)
    raise AssertionError(f"no panel {title!r} in {uid}")


def test_thresholds_follow_the_limits() -> None:
    net = _thresholds("kbt-broker-pressure", "Network thread idle (NetworkProcessorAvgIdlePercent)")
    assert net == [(limits.network_idle_critical, "orange"), (limits.network_idle_warning, "green")]
    queue = _thresholds("kbt-broker-pressure", "Request and response queues")
    assert queue[-1] == (limits.queued_max_requests, "red")
    slo = _thresholds("kbt-broker-pressure", "Produce total time p99.9")
    assert slo[-1] == (limits.produce_p999_slo_ms, "red")
    assert _thresholds("kbt-stress-test", "Delivery p99 (slowest producer)")[-1] == (
        limits.delivery_p99_slo_ms,
        "red",
    )


def test_broker_pressure_has_the_qunar_view() -> None:
    exprs = " ".join(q.expr for q in panel_queries(DASHBOARDS["kbt-broker-pressure"]))
    for needle in (
        "kafka_network_processor_avg_idle_ratio",
        "kafka_server_request_handler_idle_ns_total",
        "kafka_network_request_queue_size",
        "kafka_network_response_queue_size",
        'request="Produce"',
        'request="Fetch"',
        "sum by (request)",
        'request="FetchConsumer"',
        'request="FetchFollower"',
        "kafka_log_flush_total",
        "kafka_log_flush_time_ms",
        "process_cpu_seconds_total",
        "kafka_server_bytes_out_total",
    ):
        assert needle in exprs, needle


def test_provisioning_points_at_the_dashboards() -> None:
    yaml = YAML(typ="safe")
    ds = yaml.load(RENDERED[DATASOURCE_PATH])
    [source] = ds["datasources"]
    assert ds["apiVersion"] == 1 and source["uid"] == DATASOURCE_UID and source["type"] == "prometheus"
    assert source["url"] == "${KBT_PROMETHEUS_URL}"
    provider = yaml.load(RENDERED[PROVIDER_PATH])
    [files] = provider["providers"]
    assert files["type"] == "file" and files["options"]["path"] == "${KBT_DASHBOARDS_DIR}"
    assert files["allowUiUpdates"] is False


def test_dashboard_json_files_are_only_the_generated_ones() -> None:
    on_disk = {str(p.relative_to(ROOT)) for p in (ROOT / "dashboards").rglob("*.json")}
    assert on_disk == {b.path for b in BOARDS}, "a dashboard JSON that no code generates"


def test_render_is_deterministic(tmp_path: Path) -> None:
    assert render_all() == RENDERED


def test_snapshot_panels_exist_on_the_broker_pressure_dashboard() -> None:
    from tuner.render.dashboards.snapshot import MAIN_PANELS, main_panel_queries

    queries = main_panel_queries()
    assert list(queries) == list(MAIN_PANELS) and all(queries.values())
    assert any(q.thresholds for q in queries["Network thread idle (NetworkProcessorAvgIdlePercent)"])


def test_snapshot_time_labels_are_each_shown_once() -> None:
    """The snapshot's time axis: over a short window or a long one, no label repeats (an %H:%M
    label on 30 s ticks did) and each says the time of its tick."""
    from datetime import UTC, datetime, timedelta

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tuner.render.dashboards.snapshot import time_axis

    start = datetime(2026, 11, 26, 6, 0, 0, tzinfo=UTC)
    for minutes in (3, 7, 15, 90):
        fig, ax = plt.subplots()
        xs = [start + timedelta(seconds=5 * i) for i in range(minutes * 12)]
        ax.plot(xs, range(len(xs)))
        time_axis(ax)
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        plt.close(fig)
        assert len(labels) >= 3 and len(labels) == len(set(labels)), (minutes, labels)
