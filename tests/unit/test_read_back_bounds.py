"""The documents kbt writes and reads back hold every field to a bound by unit (tuner.core.units).

Run records, recommendations, a diagnosis (forecast --diagnosis), a broker cost model
(--cost-model), probe records, run series, capture.json and lab state are files a user can corrupt
or be handed: past its bound (above or below), a number, a string or a list is refused in one line
naming the field and the bound, before the model sizes an array or a loop by it. Every committed
document still loads.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import annotated_types as at
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from tests.unit.test_input_bounds import ALLOWED, _walk
from tuner.cli.forecast import _read_diagnosis
from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.numbers import MAX_MAGNITUDE
from tuner.core.paths import repo_root
from tuner.core.units import MAX_BROKERS, MAX_ENTRIES
from tuner.lab.state import LabState
from tuner.model.cost import BrokerCostModel
from tuner.model.diagnosis import Diagnosis
from tuner.model.traffic import Traffic
from tuner.runner.diagnose_inputs import load_cost_model
from tuner.spec.limits import MAX_PARTITIONS
from tuner.store.capture import CaptureRecord
from tuner.store.document import validated
from tuner.store.probe_record import ProbeRecord
from tuner.store.recommendation import Recommendation, load_recommendation
from tuner.store.record import SCHEMA_VERSION, RunRecord
from tuner.store.results import ResultsStore
from tuner.store.run_series import RunSeries

pytestmark = pytest.mark.wall_clock

READ_BACK = (
    RunRecord,
    Recommendation,
    RunSeries,
    ProbeRecord,
    Diagnosis,
    CaptureRecord,
    LabState,
    BrokerCostModel,
)

# Read-back fields with no bound of their own, and why none is needed: the specs' (a record holds its
# run's workload and profile), and these.
READ_BACK_ALLOWED = ALLOWED | {
    # The values a run's plan was built from, each a scalar already applied to the plan's workload
    # and profile (which hold the bounds, and are in the record); shown, never computed with.
    "RunPlan.assignments[]",
}
# Spec fields whose lower bound is their own validator's (a rate "max" or positive; a codec's range).
READ_BACK_NO_FLOOR = READ_BACK_ALLOWED | {"WorkloadSpec.rate_per_producer", "KafkaOutput.compression_level"}


def test_every_read_back_field_has_a_bound() -> None:
    found: list[str] = []
    seen: set[type] = set()
    for root in READ_BACK:
        _walk(root, [], root.__name__, None, found, seen, READ_BACK_ALLOWED)
    assert len(seen) > 90, sorted(m.__name__ for m in seen)
    assert not found, "read-back fields without a bound:\n" + "\n".join(found)


def _floorless(tp: Any, meta: list[Any], where: str, seen: set[type], found: list[str]) -> None:
    """Numbers under `tp` with no lower bound (a negative count, coefficient or ratio is no figure)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        first, *rest = typing.get_args(tp)
        _floorless(first, [*meta, *rest], where, seen, found)
    elif origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(tp):
            _floorless(arm, meta, where, seen, found)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp not in seen:
            seen.add(tp)
            for name, field in tp.model_fields.items():
                _floorless(field.annotation, list(field.metadata), f"{tp.__name__}.{name}", seen, found)
    elif tp in (int, float):
        parts = [p for m in meta for p in (m.metadata if isinstance(m, FieldInfo) else [m])]
        if not any(isinstance(p, at.Ge | at.Gt) for p in parts) and where not in READ_BACK_NO_FLOOR:
            found.append(where)
    elif origin in (list, tuple, dict):
        for arg in typing.get_args(tp):
            if arg is not Ellipsis:
                _floorless(arg, [], f"{where}[]", seen, found)


def test_every_read_back_figure_has_a_lower_bound() -> None:
    """A unit's bound is either side of zero at most (tuner.core.units): a figure below it, a
    negative cost per request or count of observations, is refused like one above it."""
    found: list[str] = []
    seen: set[type] = set()
    for root in READ_BACK:
        _floorless(root, [], root.__name__, seen, found)
    assert BrokerCostModel in seen and len(seen) > 90, len(seen)
    assert not found, "read-back figures without a lower bound:\n" + "\n".join(found)


def _committed() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.json"], cwd=repo_root(), capture_output=True, text=True, check=True
    )
    return [repo_root() / p for p in out.stdout.split() if not p.startswith(("dashboards/", "tuner/"))]


def test_every_committed_document_loads() -> None:
    """Run records (loadtests/truth, loadtests/fitting, tests/unit/data), recommendations, a
    diagnosis and a cost model: each through the reader kbt reads it with."""
    kinds: dict[str, int] = {}
    for path in _committed():
        data = json.loads(path.read_text(encoding="utf-8"))
        if "run_id" in data and "plan" in data:
            ResultsStore(path.parent.parent).load(path)
            kind = "run record"
        elif data.get("kind") == "recommendation":
            load_recommendation(path)
            kind = "recommendation"
        elif "diagnosis" in path.name:
            _read_diagnosis(path)
            kind = "diagnosis"
        elif "cost-model" in path.name:
            load_cost_model(path)
            kind = "cost model"
        else:
            raise AssertionError(f"{path}: a committed document this test does not know")
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get("run record", 0) >= 90 and kinds.get("recommendation", 0) >= 2, kinds
    assert kinds.get("diagnosis") == kinds.get("cost model") == 1, kinds


# ---- a value past its bound: one line naming the field and the bound ---------------------------


def _bounds(tp: Any, meta: list[Any]) -> tuple[Any, list[Any]]:
    """The type under Annotated and Optional, and the metadata gathered on the way."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            first, *rest = typing.get_args(tp)
            tp, meta = first, [*meta, *rest]
        elif origin in (typing.Union, types.UnionType):
            arms = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(arms) != 1:
                return None, meta  # a union of kinds (a client profile): the spec walk covers it
            tp = arms[0]
        else:
            return tp, meta


def _limits(meta: list[Any]) -> tuple[float | None, float | None]:
    low = high = None
    for item in meta:
        for part in item.metadata if isinstance(item, FieldInfo) else [item]:
            if isinstance(part, at.Le):
                high = float(part.le)  # type: ignore[arg-type]
            if isinstance(part, at.Ge):
                low = float(part.ge)  # type: ignore[arg-type]
    return low, high


Leaf = tuple[tuple[str | int, ...], type, float | None, float | None]


def _leaves(model: type[BaseModel], data: Any, at_: tuple[str | int, ...] = ()) -> Iterator[Leaf]:
    """Every number in `data` with its field's type and bounds, following `model`'s fields."""
    if not isinstance(data, dict):
        return
    for name, field in model.model_fields.items():
        if name in data:
            yield from _value(field.annotation, list(field.metadata), data[name], (*at_, name))


def _value(tp: Any, meta: list[Any], value: Any, at_: tuple[str | int, ...]) -> Iterator[Leaf]:
    tp, meta = _bounds(tp, meta)
    origin = typing.get_origin(tp)
    if tp in (int, float) and isinstance(value, int | float) and not isinstance(value, bool):
        yield (at_, tp, *_limits(meta))
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        yield from _leaves(tp, value, at_)
    elif origin is list and isinstance(value, list):
        for i, item in enumerate(value[:3]):
            yield from _value(typing.get_args(tp)[0], [], item, (*at_, i))
    elif origin is dict and isinstance(value, dict):
        for key, item in list(value.items())[:3]:
            yield from _value(typing.get_args(tp)[1], [], item, (*at_, key))


def _shown(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _set(data: Any, path: tuple[str | int, ...], value: object) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _current_record() -> dict[str, Any]:
    """A committed run record as this kbt writes it (upgraded to the current schema)."""
    newest = max(
        (repo_root() / "loadtests" / "truth" / "records").glob("*/*.json"),
        key=lambda p: (json.loads(p.read_text())["schema_version"], p.name),
    )
    record = ResultsStore(newest.parent.parent).load(newest)
    assert record.schema_version == SCHEMA_VERSION
    return record.model_dump(mode="json")


def _read_record(path: Path) -> object:
    return ResultsStore(path.parent.parent).load(path)


def _committed_json(relative: str) -> Callable[[], dict[str, Any]]:
    return lambda: json.loads((repo_root() / relative).read_text())


# (the document as kbt writes it, its model, how kbt reads it back)
_DOCUMENTS: list[tuple[Callable[[], dict[str, Any]], type[BaseModel], Callable[[Path], object]]] = [
    (_current_record, RunRecord, _read_record),
    (_committed_json("tests/unit/data/recommend/demo-loaded.json"), Recommendation, load_recommendation),
    (_committed_json("tests/unit/data/forecast/saturated-diagnosis.json"), Diagnosis, _read_diagnosis),
    (_committed_json("tests/unit/data/forecast/cost-model-good-fit.json"), BrokerCostModel, load_cost_model),
]


def _cases() -> list[tuple[int, Leaf]]:
    out = []
    for i, (document, model, _) in enumerate(_DOCUMENTS):
        out += [(i, leaf) for leaf in _leaves(model, document())]
    return out


# Fields whose bound lies within the float's exact range (2**53): past it, only the model can tell.
# A schema version is the reader's to judge, before the model (it names the versions it reads).
_CASES = [
    c
    for c in _cases()
    if c[1][3] is not None and c[1][3] < MAX_MAGNITUDE / 4 and c[1][0][-1] != "schema_version"
]


def test_the_documents_reach_their_nested_figures() -> None:
    shown = {_shown(leaf[0]) for _, leaf in _CASES}
    assert len(_CASES) > 150, len(_CASES)
    assert {"environment.broker_count", "broker.request_queue_cap", "client.producers"} <= shown, sorted(
        shown
    )[:40]
    assert any(s.startswith("snapshot.brokers[0].") for s in shown), sorted(shown)[:40]


@settings(max_examples=60, deadline=None)
@given(
    case=st.sampled_from(_CASES),
    side=st.sampled_from(["above", "below"]),
    scale=st.sampled_from([1.0, 1.5, 10.0]),
    past=st.sampled_from([1, 2, 1000]),
)
def test_a_read_back_figure_past_its_bound_is_one_line(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[int, Leaf], side: str, scale: float, past: int
) -> None:
    index, (path, kind, low, high) = case
    document, _, read = _DOCUMENTS[index]
    assert high is not None
    bound = low if side == "below" and low is not None else high
    value: float = bound - abs(bound) * (scale - 1) - past if bound == low else bound * scale + past
    if kind is int:
        value = int(value)
    data = document()
    _set(data, path, value)
    target = tmp_path_factory.mktemp("r") / "sweep" / "document.json"
    target.parent.mkdir()
    target.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BadInput) as err:
        read(target)
    text = str(err.value)
    assert "\n" not in text and len(text) < 400, text
    assert _shown(path) in text, text
    numbers = {float(n) for n in re.findall(r"-?[0-9][0-9.e+]*", text) if _is_number(n)}
    assert bound in numbers, text


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("."))
    except ValueError:
        return False
    return True


def test_a_list_past_its_bound_is_one_line_and_quick(tmp_path: Path) -> None:
    """A list of more entries than the bound: in a file the reader's count of values refuses it
    before anything is built; in memory the model names the field and the bound."""
    document = _current_record()
    document["problems"] = ["x"] * (MAX_ENTRIES + 1)
    target = tmp_path / "sweep" / "r.json"
    target.parent.mkdir()
    target.write_text(json.dumps(document), encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(BadInput) as err:
        _read_record(target)
    assert "more than 1,000,000 values" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(BadInput) as err:
        validated(RunRecord, document, target, "run record")
    text = str(err.value)
    assert f"problems: must have at most {MAX_ENTRIES} items" in text and "\n" not in text, text[:300]
    assert time.monotonic() - started < 30  # generous for a loaded 2-core machine; it takes ~1 s


def test_a_long_string_is_refused_without_echoing_it(tmp_path: Path) -> None:
    document = _current_record()
    document["name"] = "s3cr3t" * (1 << 18)
    target = tmp_path / "sweep" / "r.json"
    target.parent.mkdir()
    target.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(BadInput) as err:
        _read_record(target)
    text = str(err.value)
    assert "name: must have at most 1048576 characters" in text and "s3cr3t" not in text, text[:300]


def test_a_cluster_of_many_brokers_is_counted_per_topic() -> None:
    """The model asks every broker for the partitions it leads: counted per topic, a record's
    largest broker count with a spec's largest topics stays quick (per partition it took minutes)."""
    traffic = Traffic(
        producers=1,
        rate=1.0,
        message_bytes=100.0,
        partitions=(MAX_PARTITIONS,) * 100,
        brokers=MAX_BROKERS,
        arrivals="periodic",
        key_cardinality=None,
        window_s=10.0,
    )
    started = time.monotonic()
    led = [traffic.partitions_led(b) for b in range(traffic.brokers)]
    assert time.monotonic() - started < 10  # ~0.2 s
    assert sum(led) == MAX_PARTITIONS * 100
    small = Traffic(producers=1, rate=1.0, message_bytes=100.0, partitions=(5, 3, 8), brokers=3)
    parts = [(t, p) for t, n in enumerate(small.partitions) for p in range(n)]
    by_partition = [sum(1 for t, p in parts if small.leader(t, p) == b) for b in range(3)]
    assert [small.partitions_led(b) for b in range(3)] == by_partition


def test_a_lab_state_past_a_bound_names_the_field(tmp_path: Path) -> None:
    from tuner.lab.config import LabConfig
    from tuner.lab.layout import LabLayout
    from tuner.lab.state import STATE_SCHEMA_VERSION, Phase, read_state

    path = LabLayout(tmp_path).state_file
    path.parent.mkdir(parents=True, exist_ok=True)
    state = LabState(
        lab_dir=tmp_path,
        config=LabConfig(),
        phase=Phase.UP,
        cluster_id="c",
        owner_pid=1,
        started_at=0.0,
        brokers=[],
        controller_port=1,
        prometheus_port=2,
        client_exporter_ports=[],
        remote_storage_dir=tmp_path,
        tiered=False,
    ).model_dump(mode="json")
    assert state["schema_version"] == STATE_SCHEMA_VERSION
    path.write_text(json.dumps({**state, "prometheus_port": 70_000}))
    with pytest.raises(EnvironmentProblem) as err:
        read_state(tmp_path)
    text = str(err.value)
    assert "prometheus_port: must be less than or equal to 65535" in text and "\n" not in text, text


def test_the_lab_state_and_capture_hold_their_bounds() -> None:
    """Two documents kbt reads back that no committed file holds: one bound each, by model."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="less than or equal to 65535"):
        LabState.model_validate({"prometheus_port": 70_000})
    capture = {"start": 0, "end": 60, "bootstrap_servers": "h:9092", "brokers": 1}
    CaptureRecord.model_validate(capture)
    with pytest.raises(ValidationError, match="less than or equal to 10000000"):
        CaptureRecord.model_validate(
            {**capture, "topics": [{"name": "t", "partitions": 10**8, "replication_factor": 1}]}
        )
