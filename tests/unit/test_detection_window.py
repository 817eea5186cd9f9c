"""A past window's metric dialect is detected from that window's series, not from those present
now (a rollout or an upgrade in between may have renamed or relabelled them): diagnose --end and
compare ask Prometheus' names APIs over the window."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.unit.prometheus_api import Api, serving
from tuner.measure.dialects import DIALECTS, dialect_names, resolve_translator
from tuner.measure.prometheus import MAX_NAMES, Prometheus, PrometheusError
from tuner.target.base import BrokerSelectors, Target


@pytest.fixture
def names_server() -> Iterator[tuple[str, type[Api]]]:
    with serving(Api) as served:
        yield served


def test_a_window_reads_the_names_of_that_window(names_server: tuple[str, type[Api]]) -> None:
    url, handler = names_server
    names = sorted(dialect_names(DIALECTS["strimzi-reporter"]))
    handler.answers = {
        "/api/v1/label/__name__/values": names,
        "/api/v1/labels": ["__name__", "job", "kubernetes_pod_name", "instance"],
    }
    prom = Prometheus(url)
    assert prom.series_names('job="kafka"', (1000.0, 1060.5)) == set(names)
    path, query = handler.asked[-1]
    assert path == "/api/v1/label/__name__/values"
    assert query == {"match[]": ['{job="kafka"}'], "start": ["1000.000"], "end": ["1060.500"]}
    labels = prom.labels_present('job="kafka"', ("broker", "kubernetes_pod_name", "pod"), (1000.0, 1060.5))
    assert labels == {"kubernetes_pod_name"}
    # The translator reads the window's series: its dialect and its broker label come from them.
    target = Target(name="t", kind="file", bootstrap_servers="h:1", selectors=BrokerSelectors(job="kafka"),
                    dialect="auto")  # fmt: skip
    translator = resolve_translator(prom, target, (1000.0, 1060.5))
    assert translator.dialect.name == "strimzi-reporter" and translator.broker_label == "kubernetes_pod_name"
    assert {p for p, _ in handler.asked} == {"/api/v1/label/__name__/values", "/api/v1/labels"}


@pytest.mark.parametrize("answer", [{"result": []}, "names", [f"n{i}" for i in range(MAX_NAMES + 1)]])
def test_a_names_answer_that_is_not_a_bounded_list_is_refused(
    names_server: tuple[str, type[Api]], answer: Any
) -> None:
    url, handler = names_server
    handler.answers = {"/api/v1/label/__name__/values": answer}
    with pytest.raises(PrometheusError, match="list of at most"):
        Prometheus(url).series_names('job="kafka"', (0.0, 60.0))
