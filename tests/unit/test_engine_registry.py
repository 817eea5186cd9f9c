"""The engine registry: every EngineId has exactly one engine, reached without importlib, and a run
asking for what its engine does not declare is refused in one line before anything starts."""

from __future__ import annotations

import ast
import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.driver import engines
from tuner.driver.engine import Capabilities, Engine, Placement
from tuner.driver.engines import _REGISTERED, ENGINES, drive, engine_of
from tuner.driver.result import DriverResult
from tuner.spec.clients import KINDS
from tuner.spec.engine_id import EngineId
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan


def test_every_engine_id_has_exactly_one_engine() -> None:
    ids = [engine.id for engine in _REGISTERED]
    assert sorted(ids) == sorted(EngineId) and len(ids) == len(set(ids))
    for eid, engine in ENGINES.items():
        assert engine.id is eid and isinstance(engine.capabilities, Capabilities)
    assert {kind.engine for kind in KINDS.values()} <= set(ENGINES)


def test_no_module_finds_an_engine_through_importlib() -> None:
    """importlib may read package data or metadata; it never picks code to run by a name."""
    allowed = {"importlib.resources", "importlib.metadata"}
    for path in sorted((repo_root() / "tuner").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                names = (
                    [node.module]
                    if node.module != "importlib"
                    else [f"importlib.{a.name}" for a in node.names]
                )
            else:
                continue
            bad = [n for n in names if n.split(".")[0] == "importlib" and n not in allowed]
            assert not bad, f"{path.relative_to(repo_root())} imports {bad}"


@functools.cache
def _first_plan(spec: str) -> RunPlan:
    return load_sweep(repo_root() / "loadtests" / spec).spec.expand()[0]


def _plaintext_only(eid: EngineId) -> Engine:
    """A stand-in for an engine that takes no SASL_SSL (every registered kind's engine takes it now,
    and the refusal must hold for the next one that does not): it fails the test if it is run."""

    def runs(plan: RunPlan, placement: Placement) -> DriverResult:
        raise AssertionError("a run the engine cannot take was started")

    caps = Capabilities(
        secure=False, holds_load=False, live_trials=True, counts_requests=False, live_exporter=False
    )
    return Engine(eid, caps, runs)


@settings(deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["security.protocol", "sasl.mechanism", "ssl.ca.location"]),
        st.text(min_size=1, max_size=8),
        min_size=1,
    )
)
def test_a_secure_placement_is_refused_by_an_engine_that_does_not_declare_it(
    security: dict[str, str],
) -> None:
    plan = _first_plan("otelcol-sweep.yaml")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(engines.ENGINES, EngineId.OTELCOL, _plaintext_only(EngineId.OTELCOL))
        assert not engine_of(plan).capabilities.secure
        with pytest.raises(BadInput, match="does not take SASL_SSL"):
            drive(plan, Placement("r", ("t",), "127.0.0.1:1", security=security))


def test_a_held_load_is_refused_by_an_engine_that_cannot_hold_it() -> None:
    plan = _first_plan("filebeat-small-logs.yaml")
    assert not engine_of(plan).capabilities.holds_load
    with pytest.raises(BadInput, match="cannot hold its load"):
        drive(plan, Placement("r", ("t",), "127.0.0.1:1"), hold=lambda: False)


@given(st.lists(st.text(alphabet="abc-", min_size=1, max_size=5), min_size=2, max_size=4))
def test_a_one_topic_engine_names_the_topics_it_was_given(topics: list[str]) -> None:
    with pytest.raises(
        BadInput, match=f"client java writes one topic per run \\(the workload has {len(topics)}\\)"
    ):
        Placement("r", tuple(topics), "b").single_topic("java")
    assert Placement("r", (topics[0],), "b").single_topic("java") == topics[0]
