"""The record schema's figures (store/figures.py) and what measures them: the client's and the
broker's figures are one class each (tuner/core; test_record_schema_pinned.py fails when a field is
added without a schema bump). The attribution is kept apart on purpose: the measured one names its
causes as a closed set, the record's takes any text so older records load. The runner copies one
into the other by field name (runner/lifecycle.py). Twins must agree: same field names in the same
order, same types (nested twins compared by name), same defaults (a record may default a field its
own type requires: older records lack it). A drift fails here, not in a run."""

from __future__ import annotations

import functools
import operator
import re
import types
import typing
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from tuner.driver import result
from tuner.measure import attribution, broker_window, threads
from tuner.store import figures

TWINS = [(attribution.Attribution, figures.Attribution)]
# One class for both: nothing to drift apart.
SHARED = [
    (result.LatencyMs, figures.LatencyMs),
    (result.DeliveryResult, figures.DeliveryResult),
    (result.ClientResult, figures.ClientResult),
    (broker_window.BrokerStats, figures.BrokerStats),
    (broker_window.BrokerWindow, figures.BrokerWindow),
    (threads.ThreadTime, figures.ThreadTime),
    (threads.ThreadWindow, figures.ThreadWindow),
]
_LITERAL = re.compile(r"typing\.Literal\[[^\]]*\]")
_OPTIONAL_STR = re.compile(r"typing\.Optional\[str\]")
_MODULE_PATH = re.compile(r"\btuner(?:\.\w+)+\.(?=[A-Z])")


def _plain(annotation: Any) -> Any:
    """The annotation without Annotated metadata: a bound by unit (tuner.core.units) is the record's,
    which a document read back is held to, not part of the type the twins share."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _plain(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, [_plain(a) for a in typing.get_args(annotation)])
    if origin in (list, dict, tuple):
        return origin[tuple(_plain(a) for a in typing.get_args(annotation))]
    return annotation


def _type_text(annotation: Any) -> str:
    """An annotation as text with the twins' module paths dropped (driver's LatencyMs == record's)."""
    annotation = _plain(annotation)
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return _MODULE_PATH.sub("", text)


def _as_text(type_text: str) -> str:
    """A Literal of texts held as any text: records keep such a field as `str`, so a record with a
    value a later kbt no longer produces still loads."""
    return _OPTIONAL_STR.sub("str | None", _LITERAL.sub("str", type_text))


def _default(field: Any) -> Any:
    value = field.get_default(call_default_factory=True)
    return value.model_dump() if isinstance(value, BaseModel) else value


def test_the_shared_figures_are_one_class() -> None:
    assert [a.__name__ for a, b in SHARED if a is not b] == []


@pytest.mark.parametrize("pair", TWINS, ids=lambda p: p[0].__name__)
def test_twins_have_the_same_fields_types_and_defaults(pair: tuple[type[BaseModel], type[BaseModel]]) -> None:
    own, record = pair
    own_fields, record_fields = own.model_fields, record.model_fields
    assert list(own_fields) == list(record_fields), f"{own.__module__}.{own.__name__} drifted"
    for name in own_fields:
        a, b = own_fields[name], record_fields[name]
        own_type, record_type = _type_text(a.annotation), _type_text(b.annotation)
        assert record_type in (own_type, _as_text(own_type)), f"{own.__name__}.{name}"
        if a.is_required():  # a record may default what older schema versions lack, nothing else
            continue
        assert not b.is_required() and _default(a) == _default(b), f"{own.__name__}.{name} default"


def test_the_type_text_tells_twins_from_different_types() -> None:
    """The comparison can fail: a nested twin matches, another type or optionality does not."""
    assert _type_text(result.LatencyMs | None) == _type_text(figures.LatencyMs | None)
    assert _type_text(result.LatencyMs | None) != _type_text(result.LatencyMs)
    assert _type_text(dict[str, int]) != _type_text(dict[str, float])
    assert _as_text(_type_text(Literal["a", "b"] | None)) == _type_text(str | None)
    assert _as_text(_type_text(int | None)) != _type_text(str | None)


LATENCY = st.builds(
    result.LatencyMs,
    count=st.integers(0, 10**9),
    p50=st.none() | st.floats(0, 1e6),
    p99=st.none() | st.floats(0, 1e6),
)


@given(
    latency=LATENCY,
    acked=st.integers(0, 10**12),
    by_broker=st.dictionaries(st.sampled_from(["1", "2", "3"]), st.integers(0, 10**9)),
    metrics=st.none()
    | st.dictionaries(st.sampled_from(["request-rate", "batch-size-avg"]), st.floats(0, 1e9)),
)
def test_a_driver_result_copies_into_the_record_unchanged(
    latency: result.LatencyMs, acked: int, by_broker: dict[str, int], metrics: dict[str, float] | None
) -> None:
    client = result.ClientResult(
        engine="java", producers=2, processes=1, started_at=1.0, window_start=2.0, window_end=3.0,
        finished_at=4.0, records_acked=acked, produce_requests_by_broker=by_broker,
        delivery_latency_ms=latency, send_lag_ms=latency, client_metrics=metrics,
    )  # fmt: skip
    copied = figures.ClientResult.model_validate(client.model_dump())
    assert copied.model_dump() == client.model_dump()
