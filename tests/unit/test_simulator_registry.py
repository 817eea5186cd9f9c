"""The request model picks a simulator by the rule shape's type: every shape of the spec's `Rules`
union has exactly one, and every client kind's rules reach its own."""

from __future__ import annotations

import typing
from dataclasses import replace

import pytest

from tuner.model.simulate import SIMULATORS, SimProducer, Simulator, simulate
from tuner.model.traffic import Traffic
from tuner.spec.clients import KINDS, profile_of, rules_of
from tuner.spec.clients.rules import Rules

SHAPES = typing.get_args(Rules)
TRAFFIC = Traffic(producers=4, rate=50, message_bytes=500, partitions=(6,), brokers=3)


def test_every_rule_shape_has_exactly_one_simulator() -> None:
    assert len(SHAPES) == len(set(SHAPES)) >= 4
    assert set(SIMULATORS) == set(SHAPES)  # none missing, none for a type outside the union
    assert len({id(s) for s in SIMULATORS.values()}) == len(SIMULATORS)  # no simulator serves two


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_client_kind_is_simulated_by_its_shape(kind: str) -> None:
    rules = rules_of(profile_of({"name": f"{kind}-defaults", "client": kind}))
    assert type(rules) in SHAPES
    result = simulate(TRAFFIC, rules)
    assert result.messages > 0
    assert 0 < result.requests <= result.messages  # a request carries at least one record
    assert len(result.waits_s) == result.messages  # every message left in some request


def test_simulate_runs_the_registered_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = rules_of(profile_of({"name": "x", "client": "librdkafka"}))
    calls: list[int] = []

    def counting(traffic: Traffic, r: object, times: list[float], sim: SimProducer) -> None:
        calls.append(len(times))
        sim.out.requests_by_broker[0] += 1

    original = SIMULATORS[type(rules)]
    monkeypatch.setitem(SIMULATORS, type(rules), replace(original, run=counting))
    result = simulate(TRAFFIC, rules)
    assert len(calls) == min(TRAFFIC.producers, 3) and all(n > 0 for n in calls)
    assert result.requests == len(calls)


def test_a_shape_without_a_simulator_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = rules_of(profile_of({"name": "x", "client": "java"}))
    monkeypatch.delitem(SIMULATORS, type(rules))
    with pytest.raises(KeyError):
        simulate(TRAFFIC, rules)
    assert isinstance(SIMULATORS, dict) and all(isinstance(s, Simulator) for s in SIMULATORS.values())
