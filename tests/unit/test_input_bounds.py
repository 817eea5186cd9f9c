"""Every number, string, list and mapping a user can write has an upper bound.

The walk starts at the models kbt reads from a user's file or flag and follows every field into
nested models, Optional, unions, lists, tuples and dicts. A number needs `le`/`lt` (on the field
or on an Annotated type); a string needs a max length (its own, or the model's `str_max_length`);
a list, tuple or mapping needs a max length. A value past a bound is refused with one line that
names the field and the bound.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types as at
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from tuner.core.errors import BadInput
from tuner.model.cost import BrokerCostModel
from tuner.model.diagnosis_config import DiagnoseThresholds
from tuner.spec.clients import ClientProfile
from tuner.spec.duration import MAX_SPEC_SECONDS, Duration
from tuner.spec.loader import load_model, load_profile, load_workload
from tuner.spec.probe import ProbeOptions
from tuner.spec.slo import SLO
from tuner.spec.stress_spec import StressSpec
from tuner.spec.sweep import SweepSpec
from tuner.spec.workload import WorkloadSpec
from tuner.target.file import TargetFile, load_target_file

# The user-facing roots and who reads them: tuner.spec.loader (sweeps, workloads, profiles),
# tuner.spec.stress_load (stress specs), tuner.target.file (--target), tuner.runner.diagnose_inputs
# (--thresholds, --cost-model), tuner.spec.probe (kbt probe's flags). SLOs come in with a sweep.
ROOTS: tuple[Any, ...] = (
    SweepSpec,
    WorkloadSpec,
    ClientProfile,
    StressSpec,
    TargetFile,
    DiagnoseThresholds,
    BrokerCostModel,
    ProbeOptions,
    SLO,
)

# Fields with no bound of their own, and why none is needed.
ALLOWED = {
    # A sweep's `vary` and `runs` values are scalars that each set a workload or profile field:
    # every one is validated again by that field (its bound) when the run is built
    # (tuner.spec.sweep._revalidate), and the count of runs is bounded by MAX_RUNS.
    "SweepSpec.vary[][]",
    "SweepSpec.vary[][][]",
    "SweepSpec.runs[][]",
    # Held to its codec's range (COMPRESSION_LEVELS, at most zstd's 22) by ProducerProfile._check,
    # whose message names the codec and its range; a field bound would answer first, in less.
    "LibrdkafkaProfile.compression_level",
    "JavaProfile.compression_level",
}


def _bounded(meta: list[Any], upper: bool) -> bool:
    for item in meta:
        if isinstance(item, FieldInfo) and _bounded(list(item.metadata), upper):
            return True
        if upper and isinstance(item, at.Le | at.Lt):
            return True
        if upper and isinstance(item, at.Interval) and (item.le is not None or item.lt is not None):
            return True
        if not upper and isinstance(item, at.MaxLen):
            return True
    return False


def _walk(
    tp: Any,
    meta: list[Any],
    where: str,
    owner: type[BaseModel] | None,
    found: list[str],
    seen: set[type],
    allowed: frozenset[str] | set[str] = ALLOWED,
) -> None:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        first, *rest = typing.get_args(tp)
        _walk(first, [*meta, *rest], where, owner, found, seen, allowed)
    elif origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(tp):
            if arm is not type(None):
                _walk(arm, meta, where, owner, found, seen, allowed)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        _model(tp, found, seen, allowed)
    elif tp is Duration:
        pass  # its schema holds it to MAX_SPEC_SECONDS (test_a_duration_past_a_week_is_one_line)
    elif tp in (int, float):
        if not _bounded(meta, upper=True) and where not in allowed:
            found.append(f"{where} ({tp.__name__}: no upper bound)")
    elif tp is str:
        config_cap = owner is not None and owner.model_config.get("str_max_length") is not None
        if not config_cap and not _bounded(meta, upper=False) and where not in allowed:
            found.append(f"{where} (str: no max length)")
    elif origin in (list, tuple, dict, set, frozenset):
        fixed = origin is tuple and Ellipsis not in typing.get_args(tp)  # bounded by its arity
        if not fixed and not _bounded(meta, upper=False) and where not in allowed:
            found.append(f"{where} ({origin.__name__}: no max length)")
        for arg in typing.get_args(tp):
            if arg is not Ellipsis:
                _walk(arg, [], f"{where}[]", owner, found, seen, allowed)


def _model(
    model: type[BaseModel], found: list[str], seen: set[type], allowed: frozenset[str] | set[str] = ALLOWED
) -> None:
    if model in seen:
        return
    seen.add(model)
    for name, field in model.model_fields.items():
        _walk(field.annotation, list(field.metadata), f"{model.__name__}.{name}", model, found, seen, allowed)


def _unbounded() -> tuple[list[str], set[type]]:
    found: list[str] = []
    seen: set[type] = set()
    for root in ROOTS:
        _walk(root, [], getattr(root, "__name__", "ClientProfile"), None, found, seen)
    return found, seen


def test_every_input_field_has_an_upper_bound() -> None:
    found, seen = _unbounded()
    assert len(seen) > 40, sorted(m.__name__ for m in seen)  # the walk reached the nested models
    assert not found, "fields without a bound:\n" + "\n".join(found)


def test_the_walk_finds_a_missing_bound() -> None:
    class Inner(BaseModel):
        count: int | None = None

    class Outer(BaseModel):
        items: list[Inner] = []

    found: list[str] = []
    _walk(Outer, [], "Outer", None, found, set())
    assert found == ["Outer.items (list: no max length)", "Inner.count (int: no upper bound)"]


# ---- a value past the bound is one line naming the field and the bound -------------------------

_WORKLOAD = """\
name: w
topics: [{name: t, partitions: 1}]
rate_per_producer: 10
message: {kind: generated, bytes: 100}
duration_s: 10
"""

# (file kind, YAML key path written into the base document, the bound)
_SAMPLE: list[tuple[str, str, float]] = [
    ("workload", "rate_per_producer", 1e9),
    ("thresholds", "idle_meter_warmup_s", 7 * 24 * 3600),
    ("workload", "keys", 1e9),
    ("profile-librdkafka", "batch_bytes", 2**31 - 1),
    ("profile-filebeat", "filebeat.output.kafka.bulk_max_size", 1e9),
    ("profile-filebeat", "filebeat.output.kafka.max_message_bytes", 2**31 - 1),
    ("profile-filebeat", "filebeat.queue.mem.events", 1e9),
    ("thresholds", "flush_p99_ms", 7 * 24 * 3600 * 1000),
    ("thresholds", "queued_max_requests", 1_000_000),
    ("thresholds", "quiet_bytes_per_thread_s", 1e12),
    ("target", "limits.max_msgs_per_s", 1e9),
]


def _nest(path: str, value: object) -> dict[str, Any]:
    *parents, last = path.split(".")
    node: dict[str, Any] = {last: value}
    for key in reversed(parents):
        node = {key: node}
    return node


def _yaml(data: dict[str, Any], indent: int = 0) -> str:
    lines = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(" " * indent + f"{key}:")
            lines.append(_yaml(value, indent + 2))
        else:
            lines.append(" " * indent + f"{key}: {value}")
    return "\n".join(lines)


def _write(tmp: Path, kind: str, path: str, value: object) -> tuple[Path, str]:
    """The file and the key path kbt names for it."""
    if kind == "workload" and path == "keys":
        body, shown = _WORKLOAD + f"keys: {{kind: random, cardinality: {value}}}\n", "keys.cardinality"
    elif kind == "workload":
        body = _WORKLOAD.replace("rate_per_producer: 10\n", "") + f"{_yaml(_nest(path, value))}\n"
        body = body if path == "rate_per_producer" else body + "rate_per_producer: 10\n"
        shown = path
    elif kind.startswith("profile-"):
        client = kind.removeprefix("profile-")
        extra = _nest(path, value)
        if client == "filebeat":
            extra["filebeat"].setdefault("output", {}).setdefault("kafka", {}).setdefault("topic", "t")
        body, shown = f"name: p\nclient: {client}\n{_yaml(extra)}\n", path
    elif kind == "thresholds":
        body, shown = f"{_yaml(_nest(path, value))}\n", path
    else:
        body, shown = f"name: c\nbootstrap_servers: [127.0.0.1:9092]\n{_yaml(_nest(path, value))}\n", path
    file = tmp / f"{kind}.yaml"
    file.write_text(body, encoding="utf-8")
    return file, shown


def _load(kind: str, file: Path) -> object:
    if kind == "workload":
        return load_workload(file)
    if kind.startswith("profile-"):
        return load_profile(file)
    if kind == "thresholds":
        return load_model(DiagnoseThresholds, file)
    return load_target_file(file)


@pytest.mark.parametrize(("kind", "path", "bound"), _SAMPLE)
def test_the_bound_itself_is_taken(tmp_path: Path, kind: str, path: str, bound: float) -> None:
    value = int(bound) if float(bound).is_integer() else bound
    if kind == "thresholds" and path == "quiet_bytes_per_thread_s":
        value = int(bound)
    file, _ = _write(tmp_path, kind, path, value)
    assert _load(kind, file) is not None


@settings(max_examples=40, deadline=None)
@given(
    case=st.sampled_from(_SAMPLE),
    past=st.sampled_from([1, 2, 10, 1000]),
    scale=st.sampled_from([1, 1.5, 1e3]),
)
def test_past_the_bound_is_one_line_naming_field_and_bound(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, float], past: int, scale: float
) -> None:
    kind, path, bound = case
    value = int(bound * scale) + past
    file, shown = _write(tmp_path_factory.mktemp("b"), kind, path, value)
    with pytest.raises(BadInput) as err:
        _load(kind, file)
    text = str(err.value)
    assert "\n" not in text
    assert shown in text, text
    numbers = {float(n.replace(",", "")) for n in re.findall(r"[0-9][0-9,.e+]*", text) if _number(n)}
    assert float(bound) in numbers, text


def _number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("."))
    except ValueError:
        return False
    return True


@settings(max_examples=20, deadline=None)
@given(
    key=st.sampled_from(
        ["output.kafka.timeout", "output.kafka.bulk_flush_frequency", "queue.mem.flush.timeout"]
    ),
    hours=st.integers(min_value=int(MAX_SPEC_SECONDS // 3600) + 1, max_value=366 * 24),
)
def test_a_duration_past_a_week_is_one_line(
    tmp_path_factory: pytest.TempPathFactory, key: str, hours: int
) -> None:
    extra = _nest(f"filebeat.{key}", f"{hours}h")
    extra["filebeat"].setdefault("output", {}).setdefault("kafka", {}).setdefault("topic", "t")
    file = tmp_path_factory.mktemp("d") / "p.yaml"
    file.write_text(f"name: p\nclient: filebeat\n{_yaml(extra)}\n", encoding="utf-8")
    with pytest.raises(BadInput) as err:
        load_profile(file)
    text = str(err.value)
    assert "\n" not in text
    assert f"filebeat.{key}: must be at most 168h (got {hours}h)" in text, text


def test_a_week_itself_is_taken(tmp_path: Path) -> None:
    file = tmp_path / "p.yaml"
    file.write_text(
        "name: p\nclient: filebeat\nfilebeat:\n  output:\n    kafka:\n      topic: t\n      timeout: 168h\n"
    )
    assert load_profile(file) is not None


def test_a_long_string_is_refused_without_echoing_it(tmp_path: Path) -> None:
    from tuner.spec.limits import MAX_TEXT_CHARS
    from tuner.spec.loader import read_yaml

    secret = "s3cr3t" * (MAX_TEXT_CHARS // 6 + 1)
    file = tmp_path / "w.yaml"
    file.write_text(_WORKLOAD, encoding="utf-8")
    raw = read_yaml(file)  # the parsed document, with the long value put in (YAML-parsing MiBs is slow)
    raw["description"] = secret
    with pytest.raises(BadInput) as err:
        load_model(WorkloadSpec, file, raw)
    text = str(err.value)
    assert "description: must have at most" in text and "s3cr3t" not in text and "\n" not in text, text[:300]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"seed": -1}, "--seed: -1 is outside 0..4294967295"),
        ({"seed": 2**32}, "--seed: 4294967296 is outside 0..4294967295"),
        ({"batch_sizes": ",".join(str(n) for n in range(1, 66))}, "--batch-sizes: 65 sizes; at most 64"),
    ],
)
def test_probe_flags_past_their_bounds_are_one_line(flags: dict[str, Any], expected: str) -> None:
    from tuner.spec.probe import build_options

    args: dict[str, Any] = {"codecs": "zstd", "levels": [], "batch_sizes": None, "event_bytes": None}
    with pytest.raises(BadInput, match=re.escape(expected)):
        build_options(**{**args, "batches": 40, "seed": 1, **flags})


@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_a_producer_compression_level_is_held_to_its_codec(tmp_path: Path, client: str) -> None:
    file = tmp_path / "p.yaml"
    file.write_text(
        f"name: p\nclient: {client}\ncompression: zstd\ncompression_level: 23\n", encoding="utf-8"
    )
    with pytest.raises(BadInput, match=re.escape("compression_level 23 is outside -1..22 for zstd")):
        load_profile(file)
