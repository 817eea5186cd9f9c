"""ClientProfile is a union keyed on `client:`: each kind's own settings model validates its
profiles, another kind's setting is named with where it goes, unknown keys get "did you mean" from
the kind's own fields, flat profiles that records of earlier versions hold still load, and the
recommender's families make valid profiles of their kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tuner.core.errors import BadInput
from tuner.core.paths import repo_root
from tuner.spec.clients import KINDS, PROFILE_FIELDS, SearchContext, kind_of, profile_of
from tuner.spec.loader import load_profile, load_sweep
from tuner.spec.profile import ProfileBase

COMMON = set(ProfileBase.model_fields)
# A set value for every kind's field (valid in the kind that has it).
SET_VALUES: dict[str, Any] = {
    "linger_ms": 20,
    "batch_messages": 500,
    "batch_bytes": 65_536,
    "compression": "lz4",
    "compression_level": 3,
    "acks": "1",
    "idempotence": False,
    "partitioner": "sticky",
    "max_in_flight": 2,
    "overrides": {"client.id": "x"},
    "filebeat": {"output.kafka.bulk_max_size": 4096},
}
# Profile pairs (kind, another kind's field it does not take).
FOREIGN = [
    (name, field)
    for name, kind in sorted(KINDS.items())
    for field in sorted(PROFILE_FIELDS - set(kind.model.model_fields))
]


def _message(exc: ValidationError) -> str:
    return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")


def test_every_field_of_every_kind_has_a_set_value_here() -> None:
    assert set(SET_VALUES) == PROFILE_FIELDS - COMMON  # a new kind's field needs one above
    assert FOREIGN  # the kinds differ in their settings


def test_the_shared_base_names_no_kind() -> None:
    source = (repo_root() / "tuner" / "spec" / "profile.py").read_text(encoding="utf-8").lower()
    assert not [name for name in KINDS if name in source]


@pytest.mark.parametrize(("client", "field"), FOREIGN)
def test_another_kinds_setting_is_named_with_where_it_goes(client: str, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        profile_of({"name": "p", "client": client, field: SET_VALUES[field]})
    kind = KINDS[client]
    assert _message(exc.value) == f"{field}: not a {client} setting{kind.hints.get(field, '')}"
    # the same from the kind's own model
    with pytest.raises(ValidationError, match=f"{field}: not a {client} setting"):
        kind.model.model_validate({"name": "p", field: SET_VALUES[field]})


@pytest.mark.parametrize("client", sorted(KINDS))
def test_a_flat_profile_as_earlier_records_hold_it_loads_as_its_kind(client: str) -> None:
    """Before each kind owned its settings, every profile dump carried every field (unset ones at
    None, "default" or {}): those fields are dropped, the kind's own kept."""
    today = profile_of({"name": "p", "client": client})
    flat: dict[str, Any] = {f: _unset(f) for f in sorted(PROFILE_FIELDS - COMMON)}
    flat.update(today.model_dump(mode="json"))
    again = profile_of(json.loads(json.dumps(flat)))
    assert type(again) is KINDS[client].model and again == today


def _unset(field: str) -> Any:
    kind = next(k for k in KINDS.values() if field in k.model.model_fields)
    return kind.model.model_fields[field].get_default(call_default_factory=True)


_KEY = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=2, max_size=16)


@settings(max_examples=200, deadline=None)
@given(client=st.sampled_from(sorted(KINDS)), key=_KEY)
def test_an_unknown_key_is_named_with_the_kinds_own_fields_only(client: str, key: str) -> None:
    own = set(KINDS[client].model.model_fields)
    if key in own or key in PROFILE_FIELDS:
        return  # known somewhere: the tests above
    with pytest.raises(ValidationError) as exc:
        profile_of({"name": "p", "client": client, key: 1})
    text = _message(exc.value)
    assert text.startswith(f'unknown key "{key}"')
    suggested = text.partition("did you mean ")[2].strip('"?)')
    assert not suggested or suggested in own  # never a field of another kind


@settings(max_examples=200, deadline=None)
@given(
    client=st.one_of(st.sampled_from(sorted(KINDS)), _KEY, st.integers(), st.none()),
    knobs=st.dictionaries(
        st.sampled_from(sorted(SET_VALUES)), st.sampled_from([None, 0, "x", True]), max_size=3
    ),
)
def test_any_client_value_and_knobs_validate_or_say_why(client: Any, knobs: dict[str, Any]) -> None:
    try:
        profile = profile_of({"name": "p", "client": client, **knobs})
    except ValidationError as exc:
        assert _message(exc) and "\n" not in _message(exc)
        return
    kind = kind_of(profile)
    assert client == kind.name and type(profile) is kind.model
    assert profile_of(json.loads(profile.model_dump_json())) == profile


def test_no_client_is_the_first_kind() -> None:
    profile = profile_of({"name": "p", "linger_ms": 5})
    assert kind_of(profile) is next(iter(KINDS.values()))


def test_loader_points_at_the_line_of_another_kinds_setting(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nclient: filebeat\ndescription: d\nlinger_ms: 5\n")
    with pytest.raises(BadInput) as exc:
        load_profile(path)
    assert exc.value.message.endswith(
        "p.yaml:4: linger_ms: not a filebeat setting (set filebeat: output.kafka.bulk_flush_frequency)"
    )
    path.write_text("name: p\nclient: filbeat\n")
    with pytest.raises(
        BadInput, match=r'client: unknown client kind "filbeat" \(did you mean "filebeat"\?\)'
    ):
        load_profile(path)


def test_sweep_names_the_profile_and_line_of_another_kinds_setting(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\nworkload:\n  name: w\n  topics: [{name: t, partitions: 1}]\n  rate_per_producer: 10\n"
        "  message: {kind: generated, bytes: 200}\n  duration_s: 8\n"
        "profiles:\n  - name: a\n  - name: b\n    client: java\n    batch_messages: 10\n"
    )
    with pytest.raises(BadInput) as exc:
        load_sweep(path)
    assert exc.value.message.endswith(
        "s.yaml:12: profiles[1]: batch_messages: not a java setting"
        " (the Java producer bounds batches by batch_bytes)"
    )


def test_committed_profiles_load_as_their_kind() -> None:
    loaded = [load_profile(p) for p in sorted((repo_root() / "loadtests" / "profiles").glob("*.yaml"))]
    assert {p.client for p in loaded} == set(KINDS)  # every kind has a committed profile
    assert all(type(p) is kind_of(p).model for p in loaded)


@settings(max_examples=100, deadline=None)
@given(
    client=st.sampled_from(sorted(KINDS)),
    budget_ms=st.floats(1, 60_000),
    rate=st.floats(0.1, 1e6),
    keyless=st.booleans(),
    topic_max=st.integers(100_000, 8_000_000),
    knob=st.floats(0, 60_000),
)
def test_recommender_families_make_valid_profiles_of_their_kind(
    client: str, budget_ms: float, rate: float, keyless: bool, topic_max: int, knob: float
) -> None:
    kind = KINDS[client]
    ctx = SearchContext(
        budget_ms, rate, keyless, topic_max, None, profile_of({"name": "base", "client": client})
    )
    for family in kind.families(ctx):
        for codec in kind.codecs:
            made = family.make(min(knob, family.knob_max), codec)
            assert type(made) is kind.model and kind_of(made) is kind
            assert profile_of(json.loads(made.model_dump_json())) == made
            assert kind.rules(made).compression == codec
